// Package sqlclass classifies MySQL statement text cheaply enough to run on
// every COM_QUERY and COM_STMT_PREPARE that passes through the proxy.
//
// The proxy needs three answers per statement: where it may run (writer or
// any reader), whether it ends or starts a transaction, and whether it leaves
// state on the backend connection that forbids multiplexing (user variables,
// temporary tables, advisory locks, LOCK TABLES, FOUND_ROWS and friends).
// None of those need a real SQL parser: they follow from the first keyword
// plus a handful of keyword sequences, provided strings, quoted identifiers
// and comments are skipped correctly. A full parser would cost allocations
// and microseconds on the hot path and would still lag behind the server's
// grammar; a lexer that errs on the side of the writer does not.
//
// So Classify is built in two tiers:
//
//   - The fast path (SELECT, INSERT, UPDATE, DELETE, REPLACE and other
//     statements whose first keyword settles the kind) is one pass of a
//     zero-allocation tokenizer over the text, looking only at a few words
//     and at variables.
//   - A slightly fuller, hand-written parse runs only where the first keyword
//     is not enough: SET, transaction control, DDL (temporary tables, stored
//     programs), WITH, EXPLAIN, LOCK/LOAD/SHOW variants, and multi-statement
//     text, which is split and classified part by part.
//
// Whenever the text is not understood the answer is the conservative one:
// the statement is a write (goes to the writer) and the caller should pin the
// session. ParseSet returns an error rather than guessing, for the same
// reason.
//
// Digest normalises a statement (literals to ?, comments dropped, spacing
// canonical) and hashes it for per-query statistics. The proxy lexes each
// statement once: ClassifyLogged keeps the tokens it lexed in a TokenLog,
// and DigestLogged reads them from there when they cover the whole text
// (it lexes the text itself otherwise, e.g. after a multi-statement).
//
// The lexer assumes the server's default SQL mode: backslash escapes inside
// strings (no NO_BACKSLASH_ESCAPES) and "double quotes" delimiting strings
// (no ANSI_QUOTES). Under either mode a few contrived texts may be split
// differently from the server; the classification still errs towards the
// writer in the common cases.
package sqlclass
