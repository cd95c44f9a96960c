package proxy

import (
	"slices"
	"strconv"
	"strings"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// Read-your-writes (galera.read_your_writes = "on", the default). On a
// Galera cluster a COMMIT returns once the write-set is certified, before
// the other nodes have applied it: a session that reads on another node
// right after its own write may not see it (measured here: 14 of 200
// reads through galeon with the option off). galeon closes that window
// for the session that wrote, and only where it can be open: the
// session's first read on each node other than the one that took the
// write, after each write, is a causal read (wsrep_sync_wait = 1): the
// node first applies everything the cluster committed before the read,
// the session's write included. Later reads on that node need nothing:
// a node only moves forward.
//
// The causal read costs no extra round trip: the statement is sent as
// SET STATEMENT wsrep_sync_wait=9 FOR <statement> (MariaDB's
// per-statement variables), and a prepared statement runs as a prepared
// copy of that text. Only reads that cannot be prefixed (a
// multi-statement text, DO, HANDLER ...) set the variable around the
// statement, two round trips.
//
// Why not WSREP_SYNC_WAIT_UPTO_GTID() with the write's GTID, which waits
// for the session's write alone: on MariaDB 10.11.19 it returns as soon as
// the node has *assigned* the seqno, before the commit is visible (its
// wait_gtid_upto compares with the assigned seqno; measured here: 1 read
// in 1,000–3,000 missed the write after the wait returned 1, and 30–40%
// with sync_binlog=1 on the readers). A causal read missed none in 16,800.

// causalPrefix makes one statement a causal read: wsrep_sync_wait bits
// 1 (SELECT, BEGIN) and 8 (SHOW).
const causalPrefix = "SET STATEMENT wsrep_sync_wait=9 FOR "

// rywState is a session's read-your-writes bookkeeping.
type rywState struct {
	// wrote: the session wrote on the writer since it began; node is
	// where its latest write ran, synced the nodes that have served it a
	// causal read since.
	wrote  bool
	node   string
	synced []string
}

// rywOn reports whether the proxy gives sessions read-your-writes.
func (s *session) rywOn() bool { return s.p.cfg.Galera.ReadYourWrites != "off" }

// noteWrite records a statement that succeeded on c and may have
// committed a write there.
func (s *session) noteWrite(c *backend.Conn, r sqlclass.Result) {
	if c.WriterEpoch() != 0 && (r.IsWrite() || r.Kind == sqlclass.Commit || r.ImplicitCommit) {
		s.armCausal(c.Server())
	}
}

// armCausal records that the session's latest write committed (or may
// have) on node: its next read on each other node is causal. Also for a
// write whose answer was lost with node and that galeon settled as
// committed, or could not settle.
func (s *session) armCausal(node string) {
	if s.rywOn() {
		s.ryw.wrote, s.ryw.node, s.ryw.synced = true, node, s.ryw.synced[:0]
	}
}

// needsCausal reports whether a read q of kind r on c must be causal:
// the session wrote, c's node is not where the write ran and has not
// served the session a causal read since, and the session does not
// make its reads causal itself (wsrep_sync_wait with bit 1), nor reads
// the variable (a causal statement would see 1 there).
func (s *session) needsCausal(c *backend.Conn, r sqlclass.Result, q string) bool {
	if !s.ryw.wrote || r.IsWrite() || c.Server() == s.ryw.node || slices.Contains(s.ryw.synced, c.Server()) {
		return false
	}
	if strings.Contains(q, "sync_wait") || strings.Contains(q, "SYNC_WAIT") {
		return false
	}
	switch r.Kind {
	case sqlclass.Set, sqlclass.Empty, sqlclass.Kill:
		return false // they read no data (USE does: the schema must exist there)
	}
	if frag, own := s.vars["wsrep_sync_wait"]; own && causalSetting(frag) {
		return false // its reads are causal already
	}
	srv, _ := s.p.view.Load().Server(c.Server())
	return !srv.Stale // a stale read (galera.stale_reads) cannot be fresh
}

// causalSetting reports whether a session's wsrep_sync_wait fragment
// ("@@session.wsrep_sync_wait = 3") makes its reads causal (bit 1).
func causalSetting(frag string) bool {
	i := strings.LastIndexByte(frag, '=')
	n, err := strconv.Atoi(strings.Trim(frag[i+1:], " '"))
	return err == nil && n&1 != 0
}

// prefixable: statements SET STATEMENT ... FOR can carry.
func prefixable(r sqlclass.Result) bool {
	if r.MultiStatement {
		return false
	}
	switch r.Kind {
	case sqlclass.Select, sqlclass.Show, sqlclass.Begin:
		// Not EXPLAIN: SET STATEMENT shifts the select ids it shows.
		return true
	}
	return false
}

// causalWait makes c's node catch up with the cluster before a read that
// cannot carry the prefix: a causal SELECT 1 first, one round trip, and
// nothing left on the connection. (wsrep_sync_wait itself covers only
// SELECT, SHOW and BEGIN: USE would not wait.)
func causalWait(c *backend.Conn) error { return c.Query(causalPrefix + "SELECT 1") }

// causalDone records that c's node served the session a causal read.
func (s *session) causalDone(c *backend.Conn) {
	s.ryw.synced = append(s.ryw.synced, c.Server())
	s.p.counts.causalReads.Add(1)
}

// causalFailed answers a read whose causal setting failed on c: the
// node's own error if it refused it, a lost backend if c broke.
func (s *session) causalFailed(c *backend.Conn, r sqlclass.Result, err error) error {
	if !c.Broken() {
		s.release(c)
		return s.sendErr(asSQLError(err))
	}
	return s.failed(c, r, &backendErr{c.Server(), err}, relayResult{})
}
