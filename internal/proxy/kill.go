package proxy

import (
	"context"
	"fmt"

	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// Drivers cancel a statement (a query timeout, Ctrl-C in the mariadb
// CLI) by opening a second connection and sending KILL QUERY with the
// connection id from the first one's greeting: galeon's session id. Sent
// to a node as it is, that id would name an unrelated backend thread —
// possibly another client's pooled connection. So galeon numbers its
// sessions from sessionIDBase up, above the thread ids nodes hand out,
// and answers KILL of such an id itself: it interrupts the statement the
// session runs on its node (KILL QUERY with the backend thread id) and,
// for KILL [CONNECTION], ends the session too. A smaller id is a node's
// thread id, which galeon refuses to kill (see comKillStatement).

// sessionIDBase is the first session id; ids stay below 2^31 so that
// clients reading them as signed 32-bit integers see them positive.
const sessionIDBase = 1 << 30

// nextSessionID returns a session id in [sessionIDBase, 2^31).
func (p *Proxy) nextSessionID() uint32 {
	return sessionIDBase + p.connIDs.Add(1)%sessionIDBase
}

// comKillStatement answers a KILL statement. Only galeon's own session
// ids are valid targets: a node's thread id, sent on, would end whichever
// pooled connection has it — another client's, maybe.
func (s *session) comKillStatement(q string) error {
	id, queryOnly, ok := sqlclass.KillTarget(q)
	switch {
	case !ok:
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErrorCode(1235),
			"galeon: this KILL form (KILL USER, KILL QUERY ID) would act on a node's pooled connections, which other sessions share; use KILL [QUERY] with a galeon connection id (CONNECTION_ID(), SHOW PROCESSLIST), or connect to the node itself"))
	case id < sessionIDBase:
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErrorCode(1094),
			"Unknown thread id: %d (galeon: connection ids through galeon are galeon's session ids, as CONNECTION_ID() and SHOW PROCESSLIST give them, from %d up; to kill a node's own thread, connect to the node)", id, uint32(sessionIDBase)))
	}
	return s.comKill(id, queryOnly)
}

// comKill answers KILL of a galeon session id.
func (s *session) comKill(id uint32, queryOnly bool) error {
	var target *session
	s.p.mu.Lock()
	for t := range s.p.sessions {
		if t.id == id {
			target = t
			break
		}
	}
	s.p.mu.Unlock()
	var owner *string
	if target != nil {
		owner = target.userName.Load() // nil until it has logged in
	}
	if owner == nil {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErrorCode(1094), "Unknown thread id: %d", id))
	}
	if *owner != s.user.name {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErrorCode(1095), "You are not owner of thread %d", id))
	}
	if !queryOnly {
		// The client's connection goes first, so that it sees its
		// connection killed (as directly), not an error about the node
		// connection galeon kills next.
		s.p.mu.Lock() // Serve also closes sessions through nc
		target.nc.Close()
		s.p.mu.Unlock()
	}
	if err := s.interrupt(target, queryOnly); err != nil && queryOnly {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErrorCode(1094),
			"galeon: could not interrupt the statement of connection %d on its node: %v", id, err))
	}
	return s.sendOK()
}

// interrupt stops the statement target is running on a node, if any, with
// KILL QUERY of its backend thread — or, when the session is killed, KILL
// CONNECTION, so that the statement ends as it would directly (the
// client sees its connection killed, not its query) — sent over a
// connection of the same node.
func (s *session) interrupt(target *session, queryOnly bool) error {
	running := target.running.Load()
	if running == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.p.cfg.Pool.ConnectTimeout.D())
	defer cancel()
	c, err := s.p.pool(running.Server()).Get(ctx, s.prof)
	if err != nil {
		return err
	}
	defer s.release(c)
	what := "CONNECTION"
	if queryOnly {
		what = "QUERY"
	}
	return c.Query(fmt.Sprintf("KILL %s %d", what, running.ThreadID))
}
