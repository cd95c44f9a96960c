package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/sessionvars"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// SHOW PROCESSLIST through galeon lists galeon's sessions — the ids
// CONNECTION_ID() and KILL use — not the pooled connections of whichever
// node the statement would reach. Like a server to an account without
// the PROCESS privilege, it shows the sessions of the same user. The
// columns are MariaDB's, plus Node: where the session's statement runs.
// State and Info of a running statement come from that node's own
// processlist entry for the backend connection.

// processRow is one session as SHOW PROCESSLIST shows it.
type processRow struct {
	id                  uint32
	user, host, db, cmd string
	secs                int64
	state, info, node   string
	infoNull, dbNull    bool
}

// processRows lists the sessions of user, the asking session's own
// statement shown as q.
func (s *session) processRows(q string, full bool) []processRow {
	s.p.mu.Lock()
	var list []*session
	for t := range s.p.sessions {
		if n := t.userName.Load(); n != nil && *n == s.user.name {
			list = append(list, t)
		}
	}
	s.p.mu.Unlock()
	slices.SortFunc(list, func(a, b *session) int { return int(a.id) - int(b.id) })
	now := time.Now()
	var rows []processRow
	for _, t := range list {
		r := processRow{id: t.id, user: s.user.name, host: t.host, cmd: "Sleep", infoNull: true}
		if db := t.db.Load(); db != nil && *db != "" {
			r.db = *db
		} else {
			r.dbNull = true
		}
		busy, idle := t.busySince.Load(), t.idleSince.Load()
		since := idle
		if busy != 0 {
			since = busy
			r.cmd = mysqlproto.Command(t.command.Load()).ProcesslistName()
		}
		if since != 0 {
			r.secs = int64(now.Sub(time.Unix(0, since)) / time.Second)
		}
		switch {
		case t == s:
			r.cmd, r.state, r.info, r.infoNull = "Query", "starting", q, false
		case busy != 0:
			if c := t.running.Load(); c != nil {
				r.node = c.Server()
				r.state, r.info, r.infoNull = s.nodeThread(c)
			}
		}
		if !full && len(r.info) > 100 {
			r.info = r.info[:100]
		}
		rows = append(rows, r)
	}
	return rows
}

// nodeThread reads the state and statement of c's thread on its node.
func (s *session) nodeThread(c *backend.Conn) (state, info string, infoNull bool) {
	ctx, cancel := context.WithTimeout(context.Background(), s.p.cfg.Pool.ConnectTimeout.D())
	defer cancel()
	q, err := s.p.pool(c.Server()).Get(ctx, s.prof)
	if err != nil {
		return "", "", true
	}
	defer s.release(q)
	row, err := q.QueryRow(fmt.Sprintf("SELECT STATE, INFO FROM information_schema.PROCESSLIST WHERE ID = %d", c.ThreadID))
	if err != nil || len(row) != 2 {
		return "", "", true
	}
	return row[0].Text, row[1].Text, row[1].Null
}

// comProcesslist answers SHOW [FULL] PROCESSLIST. The rows are galeon's;
// a node encodes them (SELECT of literals) so that the result set has
// exactly the wire format this client negotiated.
func (s *session) comProcesslist(q string, full bool) error {
	rows := s.processRows(q, full)
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&b, "SELECT %d AS `Id`, %s AS `User`, %s AS `Host`, %s AS `db`, %s AS `Command`, %d AS `Time`, %s AS `State`, %s AS `Info`, 0.000 AS `Progress`, %s AS `Node`",
			r.id, textLiteral(r.user, false), textLiteral(r.host, false), textLiteral(r.db, r.dbNull), textLiteral(r.cmd, false),
			r.secs, textLiteral(r.state, false), textLiteral(r.info, r.infoNull), textLiteral(r.node, false))
	}
	pkt := mysqlproto.AppendComQuery(nil, b.String(), s.caps)
	c, _, err := s.connFor("", sqlclass.Result{Kind: sqlclass.Show})
	if err != nil {
		return s.sendErr(asSQLError(err))
	}
	res, err := s.forward(c, pkt, mysqlproto.ResponseQuery)
	if err != nil {
		return s.backendFailed(c, err, res)
	}
	s.after(c, sqlclass.Result{Kind: sqlclass.Show}, res)
	return nil
}

// textLiteral quotes a string for a statement galeon builds.
func textLiteral(v string, null bool) string {
	return sessionvars.Literal(backend.Value{Text: v, Null: null})
}
