package sqlclass

// Hint is a routing hint found in a galeon: comment.
type Hint uint8

// Routing hints, from /* galeon:writer */, /* galeon:reader */ and
// /* galeon:hostgroup=NAME */.
const (
	HintNone Hint = iota
	HintWriter
	HintReader
	HintHostgroup
)

func (h Hint) String() string {
	switch h {
	case HintNone:
		return "none"
	case HintWriter:
		return "writer"
	case HintReader:
		return "reader"
	case HintHostgroup:
		return "hostgroup"
	}
	return "Hint(?)"
}

// TempTableOp records CREATE/DROP TEMPORARY TABLE. Temporary tables live on
// one backend connection, so creating one pins the session; dropping one
// may let the proxy unpin once it has counted them all away.
type TempTableOp uint8

// Temporary-table effects.
const (
	TempNone TempTableOp = iota
	TempCreate
	TempDrop
)

// AdvisoryLockOp is a set of advisory-lock (GET_LOCK family) effects.
// Advisory locks belong to a backend connection and are not replicated by
// Galera, so every user of them must talk to the same connection.
type AdvisoryLockOp uint8

// Advisory-lock effects; more than one may be set.
const (
	LockAcquire AdvisoryLockOp = 1 << iota // GET_LOCK(
	LockRelease                            // RELEASE_LOCK(, RELEASE_ALL_LOCKS(
	LockInspect                            // IS_USED_LOCK(, IS_FREE_LOCK(
)

// Result is the classification of one statement, or of all statements of a
// multi-statement text. It is returned by value and, for single statements,
// holds no memory of its own: HostGroup is a substring of the input.
type Result struct {
	Kind Kind

	// Hint and HostGroup come from a galeon: comment before the first
	// keyword or directly after it. HostGroup is set for HintHostgroup.
	Hint      Hint
	HostGroup string

	// ReadOnlyTxn is set for START TRANSACTION READ ONLY.
	ReadOnlyTxn bool
	// Chain is set for COMMIT/ROLLBACK AND CHAIN, which starts a new
	// transaction at once; Release for COMMIT/ROLLBACK RELEASE, after
	// which the server closes the connection.
	Chain, Release bool
	// Locking is set for locking reads: FOR UPDATE, FOR SHARE and
	// LOCK IN SHARE MODE, anywhere in the statement (a subquery included).
	Locking bool
	// Into is set for SELECT ... INTO (variables, OUTFILE, DUMPFILE).
	Into bool
	// Local is set for LOAD DATA LOCAL / LOAD XML LOCAL: the server will
	// ask the client for a file, which the proxy must be ready to relay.
	Local bool

	// ImplicitCommit is set for statements listed by MySQL as causing an
	// implicit commit: DDL other than CREATE/DROP TEMPORARY TABLE, account
	// management, BEGIN/START TRANSACTION, LOCK/UNLOCK TABLES,
	// SET autocommit=1, administrative and replication statements. Some
	// commit only conditionally (UNLOCK TABLES, SET autocommit=1), so this
	// means "may commit"; the server's status flags are the final word.
	ImplicitCommit bool

	// MultiStatement is set when a top-level ';' is followed by another
	// statement. Then the Result is the most conservative merge of the
	// parts: it writes if any part writes, every flag and state effect of
	// every part is set, Kind is that of the first writing part (or of the
	// first part if none writes), Hint is the first hint found, and
	// Statements returns each part with its own Result.
	MultiStatement bool

	// UsesUserVars is set when any @user_variable appears (not @@system).
	UsesUserVars bool
	// TempTable records CREATE/DROP TEMPORARY TABLE.
	TempTable TempTableOp
	// AdvisoryLock records GET_LOCK-family calls.
	AdvisoryLock AdvisoryLockOp
	// NeedsSameConn is set when the statement reads or leaves per-connection
	// results that another statement consumes: SQL_CALC_FOUND_ROWS,
	// FOUND_ROWS(), LAST_INSERT_ID(), ROW_COUNT(), SHOW WARNINGS/ERRORS,
	// GET DIAGNOSTICS, @@warning_count, @@identity and similar.
	NeedsSameConn bool
	// UsesLastInsertID: the statement reads LAST_INSERT_ID() (or
	// @@identity), the one per-connection value galeon can replay on
	// another connection.
	UsesLastInsertID bool
	// UsesConnectionID: the statement calls CONNECTION_ID(), which the
	// proxy replaces by its session id (ReplaceConnectionID).
	UsesConnectionID bool

	write bool
	parts []Statement
}

// Statement is one part of a multi-statement text.
type Statement struct {
	Text   string // the part's text, trimmed, without the ';'
	Result Result
}

// IsWrite reports whether the statement must run on the writer: DML, DDL,
// locking reads, SELECT ... INTO, LOCK TABLES, CALL, DO, SQL-level
// prepared statements, advisory locks, SET GLOBAL/PERSIST, sequence
// updates, BEGIN other than READ ONLY, and anything not understood.
// Hints are not applied here; routing policy belongs to the caller.
func (r Result) IsWrite() bool { return r.write }

// Statements returns the parts of a multi-statement text in order, or nil
// when the text holds a single statement.
func (r Result) Statements() []Statement { return r.parts }

// StartsTxn reports whether the statement leaves a transaction open that
// it started: BEGIN, START TRANSACTION, COMMIT/ROLLBACK AND CHAIN. For a
// multi-statement text it replays the parts in order, so "BEGIN; ...;
// COMMIT" does not start one and "COMMIT; BEGIN" does.
func (r Result) StartsTxn() bool {
	if r.parts == nil {
		return r.Kind == Begin || r.Chain
	}
	open := false
	for i := range r.parts {
		switch p := &r.parts[i].Result; {
		case p.StartsTxn():
			open = true
		case p.EndsTxn():
			open = false
		}
	}
	return open
}

// EndsTxn reports whether the statement ends the current transaction,
// explicitly or implicitly; for a multi-statement text, whether any part
// does. ROLLBACK TO SAVEPOINT does not.
func (r Result) EndsTxn() bool {
	if r.parts == nil {
		return r.Kind == Commit || r.Kind == Rollback || r.ImplicitCommit
	}
	for i := range r.parts {
		if r.parts[i].Result.EndsTxn() {
			return true
		}
	}
	return false
}
