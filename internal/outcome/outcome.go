// Package outcome settles what became of a COMMIT whose answer was lost
// with the writer: the commit marker galeon writes in the same write-set
// as a transaction, and the pure decision that reads the cluster's
// answer about it.
//
// Galera orders every write-set once for the whole cluster, so once the
// COMMIT can no longer happen — its connection's thread has ended on the
// node that ran it, or the survivors' Primary component no longer counts
// that node — every node of a Primary component agrees on whether the
// marker's write-set was committed. The marker is one row per proxy
// session slot, so markers of different sessions never conflict in
// certification; its token is unique to one COMMIT.
package outcome

import (
	"fmt"
	"strconv"
	"strings"
)

// Schema and Table name where the markers live; galeon creates them.
const (
	Schema = "galeon"
	Table  = "commit_marker"
)

// SetupStatements create the marker table (idempotent), in order.
var SetupStatements = []string{
	"CREATE DATABASE IF NOT EXISTS " + Schema,
	"CREATE TABLE IF NOT EXISTS " + Schema + "." + Table + " (" +
		"slot BIGINT UNSIGNED NOT NULL PRIMARY KEY, " +
		"token BIGINT UNSIGNED NOT NULL, " +
		"at DATETIME(6) NOT NULL, " +
		"rc BIGINT NULL, " +
		"lid BIGINT UNSIGNED NULL" +
		") ENGINE=InnoDB COMMENT='galeon commit markers: one row per proxy session slot, rewritten in the write-set of each COMMIT galeon can settle'",
	// A table made by an older galeon gets the columns of wrapped
	// autocommit writes (rc: ROW_COUNT(), lid: LAST_INSERT_ID()).
	"ALTER TABLE " + Schema + "." + Table + " ADD COLUMN IF NOT EXISTS rc BIGINT NULL, ADD COLUMN IF NOT EXISTS lid BIGINT UNSIGNED NULL",
}

// Grant is the one statement that lets a backend account write markers:
// the account as 'user'@'host'.
func Grant(account string) string {
	return "GRANT SELECT, INSERT, UPDATE ON " + Schema + "." + Table + " TO " + account
}

// Marker identifies one COMMIT: the session's slot and a token no other
// COMMIT carries.
type Marker struct {
	Slot, Token uint64
}

// Statement is the marker's write, sent right before the COMMIT on the
// transaction's connection so that it lands in the same write-set. A
// slot's first marker inserts its row (exists: false); later ones update
// it, which costs the node one index lookup instead of an insert attempt
// and a duplicate-key update, and must report one affected row (else the
// row is gone and this COMMIT has no marker).
func (m Marker) Statement(exists bool) string { return string(m.Append(nil, exists, false)) }

// Append appends the marker's write to dst: Statement, or with wrapped
// WrappedStatement. It allocates nothing when dst has room.
func (m Marker) Append(dst []byte, exists, wrapped bool) []byte {
	if exists {
		dst = append(dst, "UPDATE "+Schema+"."+Table+" SET token = "...)
		dst = strconv.AppendUint(dst, m.Token, 10)
		dst = append(dst, ", at = NOW(6)"...)
		if wrapped {
			dst = append(dst, ", rc = @galeon_rc, lid = @galeon_lid"...)
		}
		dst = append(dst, " WHERE slot = "...)
		dst = strconv.AppendUint(dst, m.Slot, 10)
		if wrapped {
			dst = append(dst, inTransaction...)
		}
		return dst
	}
	dst = append(dst, "INSERT INTO "+Schema+"."+Table+" (slot, token, at"...)
	if wrapped {
		dst = append(dst, ", rc, lid) SELECT "...)
	} else {
		dst = append(dst, ") VALUES ("...)
	}
	dst = strconv.AppendUint(dst, m.Slot, 10)
	dst = append(dst, ", "...)
	dst = strconv.AppendUint(dst, m.Token, 10)
	dst = append(dst, ", NOW(6)"...)
	if wrapped {
		dst = append(dst, ", @galeon_rc, @galeon_lid FROM DUAL WHERE @@in_transaction ON DUPLICATE KEY UPDATE token = VALUES(token), at = VALUES(at), rc = VALUES(rc), lid = VALUES(lid)"...)
		return dst
	}
	return append(dst, ") ON DUPLICATE KEY UPDATE token = VALUES(token), at = VALUES(at)"...)
}

// inTransaction is the condition of a wrapped write's marker: the
// wrapped transaction is still open. A brute-force abort of it (the
// writer applied a conflicting write-set) is reported on the next
// statement, as 1213, and leaves the connection outside any transaction
// (@@in_transaction = 0, checked on MariaDB 10.11): the marker then
// writes nothing, and the COMMIT commits nothing. (A local deadlock or
// lock wait timeout on the statement itself is different: the session
// stays in its explicit transaction, so the marker writes, with rc -1,
// and commits alone; a lost answer is then settled as "the statement
// failed" and the statement runs again, as its 1213 told the client.)
const inTransaction = " AND @@in_transaction"

// Wrapped autocommit writes (an INSERT, UPDATE, DELETE or REPLACE sent
// outside a transaction) run as one pipelined sequence on their
// connection, so that their commit carries a marker too:
//
//	START TRANSACTION; <statement>; Capture; SHOW WARNINGS;
//	<marker, Append(wrapped)>; COMMIT AND NO CHAIN NO RELEASE
//
// The marker's token commits exactly when the statement's transaction
// does: the marker writes only inside that transaction (inTransaction),
// so after a brute-force abort of the statement it writes nothing, and
// the COMMIT has nothing to commit. Capture keeps the statement's
// ROW_COUNT() and LAST_INSERT_ID() in user variables of the backend
// connection; it uses no table, so the statement's warnings stay listed
// for SHOW WARNINGS, which the proxy keeps for the client (the marker,
// which uses a table, clears them). The marker writes the captured counts
// with the token, so that a commit settled after the writer's loss is
// answered with the statement's own affected rows and insert id (rc -1:
// the statement failed, and only the marker committed).
//
// One row write and six commands: an earlier sequence wrote the marker
// first and the counts in a second write (seven commands, two writes),
// which cost the nodes 30 % more CPU per wrapped write and 20 % of its
// throughput (measured directly on node1, without the proxy).
const Capture = "SET @galeon_rc = ROW_COUNT(), @galeon_lid = LAST_INSERT_ID()"

// WrappedStatement is the marker of a wrapped autocommit write.
func (m Marker) WrappedStatement(exists bool) string { return string(m.Append(nil, exists, true)) }

// ReadStatement reads the slot's token (and the counts a wrapped write
// recorded) as of the cluster's latest commit on the node that runs it
// (a causal read).
//
// It reads every column (slot, token, at, and rc, lid where the table
// has them): a table made by an earlier galeon, without the last two,
// still settles COMMITs.
func ReadStatement(slot uint64) string {
	return fmt.Sprintf("SET STATEMENT wsrep_sync_wait=1 FOR SELECT * FROM %s.%s WHERE slot = %d", Schema, Table, slot)
}

// LocalReadStatement reads the slot's row as a node outside a Primary
// component has it: proof of a commit if found, of nothing if not.
func LocalReadStatement(slot uint64) string {
	return fmt.Sprintf("SET STATEMENT wsrep_dirty_reads=1 FOR SELECT * FROM %s.%s WHERE slot = %d", Schema, Table, slot)
}

// ThreadStatement counts the node's connections with id: 0 once the
// connection that ran the COMMIT has ended there.
func ThreadStatement(id uint32) string {
	return fmt.Sprintf("SET STATEMENT wsrep_dirty_reads=1 FOR SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %d", id)
}

// Unavailable reports whether a marker write failed because the marker
// is not set up for the account (no table, no grant, an older table):
// the transaction is intact and its COMMIT's own answer stands; the
// feature is off for that account until an operator sets it up.
func Unavailable(code uint16) bool {
	switch code {
	case 1044, // ER_DBACCESS_DENIED_ERROR
		1049, // ER_BAD_DB_ERROR
		1054, // ER_BAD_FIELD_ERROR (an older table)
		1142, // ER_TABLEACCESS_DENIED_ERROR
		1146: // ER_NO_SUCH_TABLE
		return true
	}
	return false
}

// MarkerFailure is what a failed marker write did to the transaction it
// ran in, which decides what the client is told: the marker is a write
// inside the client's transaction (before its COMMIT, or after the
// statement of a wrapped autocommit write), and some errors on it roll
// back the whole transaction, after which the COMMIT commits nothing
// and still answers OK.
type MarkerFailure int

const (
	// TxIntact: the marker alone failed (not set up for the account, a
	// read-only node or transaction, a node outside the Primary
	// component, @@in_transaction unknown): the transaction goes on and
	// its COMMIT's own answer stands.
	TxIntact MarkerFailure = iota
	// TxRolledBack: the error rolled back the whole transaction — a
	// deadlock or brute-force abort (1213), wsrep_max_ws_rows or
	// wsrep_max_ws_size exceeded (1180), the lock table full (1206):
	// the client gets that error, not the COMMIT's OK.
	TxRolledBack
	// TxUnknown: any other error, which may or may not have rolled the
	// transaction back (1205 does when innodb_rollback_on_timeout is
	// ON): an OK from the COMMIT proves nothing, and the client gets
	// 9003.
	TxUnknown
)

// MarkerFailed classifies a marker write's error code.
func MarkerFailed(code uint16) MarkerFailure {
	switch {
	case Unavailable(code):
		return TxIntact
	}
	switch code {
	case 1047, // ER_UNKNOWN_COM_ERROR: WSREP has not yet prepared node
		1193, // ER_UNKNOWN_SYSTEM_VARIABLE: no @@in_transaction
		1290, // ER_OPTION_PREVENTS_STATEMENT: read_only
		1792: // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
		return TxIntact
	case 1213, // ER_LOCK_DEADLOCK
		1180, // ER_ERROR_DURING_COMMIT (wsrep_max_ws_rows/size)
		1206: // ER_LOCK_TABLE_FULL
		return TxRolledBack
	}
	return TxUnknown
}

// Verdict is what became of a COMMIT.
type Verdict uint8

const (
	// Pending: the COMMIT may still happen; look again.
	Pending Verdict = iota
	// Committed: the marker's write-set is in the cluster.
	Committed
	// NotCommitted: it is not, and can no longer be.
	NotCommitted
)

func (v Verdict) String() string {
	switch v {
	case Committed:
		return "committed"
	case NotCommitted:
		return "not committed"
	}
	return "pending"
}

// Look is one node's answer, read after the COMMIT's connection was lost.
type Look struct {
	Node string
	// Old: the node that ran the COMMIT.
	Old bool
	// Err: the node could not be asked (the other fields are unset).
	Err error
	// Primary: the node is in a Primary component, and then its read
	// was causal (ReadStatement); outside one it was local
	// (LocalReadStatement), which proves a commit but not its absence.
	Primary bool
	// ListsOld (others): that Primary component counts the old node.
	ListsOld bool
	// ThreadGone (Old only): the COMMIT's connection has ended there.
	ThreadGone bool
	// Token is the slot's token as read there (Found: the row exists).
	Token uint64
	Found bool
	// RC and LID: the ROW_COUNT() and LAST_INSERT_ID() a wrapped write
	// recorded with that token (Counted: the row holds them).
	RC      int64
	LID     uint64
	Counted bool
}

// Settle decides from the looks taken at one moment. A look that finds
// the token is proof of the commit wherever it was read: a node commits
// only a write-set the Primary component ordered, and Galera delivers it
// to every member of the view it was ordered in. "Not committed" needs a
// causal read the COMMIT can no longer change: on a node of a Primary
// component that no longer counts the old node (the old node's write-set
// can no longer be ordered in it), or on the old node itself once the
// COMMIT's connection has ended there and it is in a Primary component.
// The old node's own read outside a Primary component proves nothing by
// absence: its write-set may have been delivered to the others as it
// was cut off. how says which look decided.
func Settle(m Marker, looks []Look) (v Verdict, how string) {
	var final string
	for _, l := range looks {
		if l.Err != nil {
			continue
		}
		if l.Found && l.Token == m.Token {
			return Committed, "marker found on " + l.Node
		}
		if final != "" || !l.Primary {
			continue
		}
		switch {
		case l.Old && l.ThreadGone:
			final = fmt.Sprintf("marker absent on %s (causal read) after the COMMIT's connection ended there", l.Node)
		case !l.Old && !l.ListsOld:
			final = fmt.Sprintf("marker absent on %s (causal read), in a Primary component without the old writer", l.Node)
		}
	}
	if final != "" {
		return NotCommitted, final
	}
	return Pending, waiting(looks)
}

// Counts returns the ROW_COUNT() and LAST_INSERT_ID() that m's wrapped
// write recorded, from a look that found its token.
func Counts(m Marker, looks []Look) (rc int64, lid uint64, ok bool) {
	for _, l := range looks {
		if l.Err == nil && l.Found && l.Token == m.Token && l.Counted {
			return l.RC, l.LID, true
		}
	}
	return 0, 0, false
}

// waiting says what a pending decision waits for.
func waiting(looks []Look) string {
	var parts []string
	for _, l := range looks {
		switch {
		case l.Err != nil:
			parts = append(parts, fmt.Sprintf("%s: %v", l.Node, l.Err))
		case !l.Primary:
			parts = append(parts, l.Node+": not in a Primary component")
		case l.Old:
			parts = append(parts, l.Node+": the COMMIT's connection is still there")
		default:
			parts = append(parts, l.Node+": its Primary component still counts the old writer")
		}
	}
	if len(parts) == 0 {
		return "no node to ask"
	}
	return strings.Join(parts, "; ")
}
