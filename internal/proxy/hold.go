package proxy

import "github.com/galeon-db/galeon/internal/backend"

// holdKind says why a session keeps its backend connection between
// statements.
type holdKind uint8

const (
	holdNone holdKind = iota
	// holdSoft: kept after a write or a statement with per-connection
	// results, so that LAST_INSERT_ID(), ROW_COUNT(), FOUND_ROWS() or SHOW
	// WARNINGS that follow see them; given up as soon as the next
	// statement does not need it.
	holdSoft
	// holdTx: a transaction is open on the connection.
	holdTx
	// holdPinned: the session created state that cannot be replayed
	// (temporary tables, user variables, locks, cursors); the connection
	// is the session's until it ends or resets.
	holdPinned
)

// holding is everything a session keeps of its node connections between
// statements: the connection it holds and why, and the previous
// statement's connection (for a statement about that one).
type holding struct {
	conn *backend.Conn
	kind holdKind
	// pinWhy is the first reason the session was pinned.
	pinWhy string
	// nextTxn: a SET TRANSACTION (next transaction only) ran on conn;
	// keep it until that transaction ends.
	nextTxn bool
	// last is the connection of the previous statement when it was not
	// held, returned to the pool as generation lastGen.
	last    *backend.Conn
	lastGen uint64
	// lastKept: the pool keeps last for the session (Pool.Keep).
	lastKept bool
	// wrote: the open transaction on conn ran a statement that may have
	// written rows (its COMMIT carries a marker, outcome.go).
	wrote bool
	// lost says why the session's transaction or pinned state was lost
	// with its connection ("" while it was not).
	lost string
}

// drop forgets the held connection (the caller releases or discards it)
// and returns it, or nil.
func (h *holding) drop() *backend.Conn {
	c := h.conn
	h.conn, h.kind, h.pinWhy, h.wrote = nil, holdNone, "", false
	return c
}

// keep holds c for kind.
func (h *holding) keep(c *backend.Conn, kind holdKind) {
	h.conn, h.kind = c, kind
}

// pin holds c for good: the session made state there that cannot be
// replayed elsewhere.
func (h *holding) pin(c *backend.Conn, why string) {
	c.Dirty = true
	h.conn, h.kind = c, holdPinned
	if h.pinWhy == "" {
		h.pinWhy = why
	}
}

// stateful says whether the held connection carries what the session
// cannot get back elsewhere: a transaction or pinned state.
func (h *holding) stateful() bool {
	return h.kind == holdTx || h.kind == holdPinned
}
