package proxy

import (
	"slices"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// Read-your-writes (galera.read_your_writes = "gtid", the default). On a
// Galera cluster a COMMIT returns once the write-set is certified, before
// the other nodes have applied it: a session that reads on another node
// right after its own write may not see it (measured here: 11 of 200
// reads). galeon closes that window for the session that wrote, and only
// when it can be open:
//
//   - a write that may have committed on the writer marks the session
//     (rywPending); the connection stays held, as after any write;
//   - at the session's next read, before that connection goes back to the
//     pool, galeon asks it for the write's GTID
//     (WSREP_LAST_WRITTEN_GTID(), one round trip on the writer, once per
//     run of writes);
//   - a read then borrowed on another node that is not known to have
//     applied that GTID waits there first: WSREP_SYNC_WAIT_UPTO_GTID(g, 1),
//     one round trip that returns as soon as the node has applied it.
//     What any session learnt this way is kept per node (Pool.Applied),
//     so a node is waited on once per GTID, not once per session;
//   - if the wait times out (the node is more than a second behind), the
//     read goes to the writer instead;
//   - if the write's connection was lost before its GTID was taken, the
//     read's node gives the latest GTID it has seen
//     (WSREP_LAST_SEEN_GTID()), which covers the write, and waits for it.
//
// Unlike wsrep_sync_wait, this waits only for the session's own writes,
// not for everything the cluster committed before the read.

// rywState is a session's read-your-writes bookkeeping.
type rywState struct {
	// pending: a write may have committed on the writer since the GTID
	// below was taken.
	pending bool
	// gtid is the session's latest write (zero: none to wait for), node
	// where it ran, and seen the nodes known to have applied it.
	gtid backend.GTID
	node string
	seen []string
}

// rywOn reports whether the proxy gives sessions read-your-writes.
func (s *session) rywOn() bool { return s.p.cfg.Galera.ReadYourWrites != "off" }

// noteWrite records a statement that succeeded on c and may have
// committed a write there.
func (s *session) noteWrite(c *backend.Conn, r sqlclass.Result) {
	if c.WriterEpoch() != 0 && (r.IsWrite() || r.Kind == sqlclass.Commit || r.ImplicitCommit) && s.rywOn() {
		s.ryw.pending = true
	}
}

// captureWrite takes the GTID of the session's latest write from c, the
// writer connection it ran on, before c goes back to the pool. On
// failure the session stays pending (see awaitWrites).
func (s *session) captureWrite(c *backend.Conn) {
	if !s.ryw.pending || c.WriterEpoch() == 0 {
		return
	}
	row, err := c.QueryRow("SELECT WSREP_LAST_WRITTEN_GTID()")
	if err != nil || len(row) != 1 {
		return
	}
	s.ryw.pending = false
	g, ok := backend.ParseGTID(row[0].Text)
	if !ok {
		return // no write-set yet (empty): nothing to wait for
	}
	if g != s.ryw.gtid {
		s.ryw.gtid, s.ryw.node, s.ryw.seen = g, c.Server(), s.ryw.seen[:0]
	}
}

// awaitWrites makes a read borrowed on c (another node than the
// session's last write) wait until that node has applied the write. It
// returns the connection to use: c, or one of the writer's when c's node
// is too far behind.
func (s *session) awaitWrites(c *backend.Conn) (*backend.Conn, string, error) {
	if s.ryw.pending {
		// The write's connection was lost before its GTID was taken (a
		// writer change). Every node of the Primary component saw the
		// write-set when it was certified, before its COMMIT returned:
		// the latest GTID this node has seen covers it.
		if row, err := c.QueryRow("SELECT WSREP_LAST_SEEN_GTID()"); err == nil && len(row) == 1 {
			if g, ok := backend.ParseGTID(row[0].Text); ok {
				s.ryw.gtid, s.ryw.node, s.ryw.seen = g, "", s.ryw.seen[:0]
			}
			s.ryw.pending = false
		}
	}
	if srv, _ := s.p.view.Load().Server(c.Server()); srv.Stale {
		return c, "", nil // a stale read (galera.stale_reads) cannot be fresh
	}
	g := s.ryw.gtid
	switch {
	case g.DomainServer == "", c.Server() == s.ryw.node, slices.Contains(s.ryw.seen, c.Server()):
		return c, "", nil
	case c.Pool().Applied(g):
		s.ryw.seen = append(s.ryw.seen, c.Server())
		return c, "", nil
	}
	row, err := c.QueryRow("SELECT WSREP_SYNC_WAIT_UPTO_GTID('" + g.String() + "', 1)")
	if err == nil && len(row) == 1 && row[0].Text == "1" {
		s.p.counts.rywWaits.Add(1)
		c.Pool().NoteApplied(g)
		s.ryw.seen = append(s.ryw.seen, c.Server())
		return c, "", nil
	}
	// Not applied within a second (1205), or the node failed: read on
	// the writer, which has it.
	s.p.counts.rywToWriter.Add(1)
	if c.Broken() {
		s.discard(c)
	} else {
		s.release(c)
	}
	w, err := s.acquire(config.HostgroupWriter)
	return w, config.HostgroupWriter, err
}
