package proxy

import (
	"context"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// Tables in engines Galera does not replicate (MyISAM and Aria unless
// wsrep_mode says REPLICATE_MYISAM / REPLICATE_ARIA, MEMORY, CONNECT, ...)
// exist on every node — DDL replicates — but hold rows only on the node
// that wrote them: the writer. A read of one on a reader finds it empty.
// galeon keeps, per backend account (what it can see), the names of such
// tables, and sends a read that names one to the writer. The list is read
// from the writer every localTablesEvery, and at once after a DDL
// statement through galeon (on that statement's connection).

// localTablesEvery is how often the lists are refreshed.
const localTablesEvery = 10 * time.Second

// localTablesQuery lists the base tables the account can see whose rows
// Galera does not replicate.
const localTablesQuery = "SELECT GROUP_CONCAT(DISTINCT LOWER(TABLE_NAME) SEPARATOR '/') FROM information_schema.TABLES" +
	" WHERE TABLE_TYPE <> 'VIEW' AND ENGINE IS NOT NULL AND ENGINE NOT IN ('InnoDB', 'SEQUENCE')" +
	" AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')" +
	" AND NOT (ENGINE = 'MyISAM' AND FIND_IN_SET('REPLICATE_MYISAM', @@wsrep_mode))" +
	" AND NOT (ENGINE = 'Aria' AND FIND_IN_SET('REPLICATE_ARIA', @@wsrep_mode))"

// readLocalTables reads the list on c and records it for u.
func readLocalTables(c *backend.Conn, u *user) error {
	row, err := c.QueryRow(localTablesQuery)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	if len(row) == 1 && !row[0].Null {
		for _, n := range strings.Split(row[0].Text, "/") {
			if n != "" {
				names[n] = true
			}
		}
	}
	u.localTables.Store(&names)
	return nil
}

// readsLocalTable reports whether a read q of the session names a table
// only the writer holds the rows of.
func (s *session) readsLocalTable(q string) bool {
	m := s.user.localTables.Load()
	return m != nil && sqlclass.NamesAny(q, *m)
}

// localTablesLoop refreshes every account's list from the writer.
func (p *Proxy) localTablesLoop(ctx context.Context) {
	t := time.NewTicker(localTablesEvery)
	defer t.Stop()
	for {
		p.refreshLocalTables(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *Proxy) refreshLocalTables(ctx context.Context) {
	w, ok := p.view.Load().Writer()
	if !ok {
		return
	}
	for _, u := range *p.users.Load() {
		p.refreshUser(ctx, w.Name, u)
	}
}

// refreshUser reads u's list on node.
func (p *Proxy) refreshUser(ctx context.Context, node string, u *user) {
	prof := backend.Profile{User: u.backendUser, Password: u.backendPassword}
	gctx, cancel := context.WithTimeout(ctx, p.cfg.Pool.ConnectTimeout.D())
	c, err := p.pool(node).Get(gctx, prof)
	cancel()
	if err != nil {
		return
	}
	if err := readLocalTables(c, u); err != nil && !c.Broken() {
		p.log.Debug("could not list non-replicated tables", "user", u.name, "err", err)
	}
	if c.Broken() {
		c.Pool().Discard(c)
	} else {
		c.Pool().Put(c, prof)
	}
}

// afterDDL refreshes the session's account list after a DDL statement
// succeeded on c's node, so that a table created, altered to another
// engine or dropped is routed right from the next statement. It reads it
// on another connection of that node: a statement on c would change what
// the client sees next there (warnings, the row a warning names).
func (s *session) afterDDL(c *backend.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), localTablesEvery)
	defer cancel()
	s.p.refreshUser(ctx, c.Server(), s.user)
}

// localTableHostgroup sends a read of a non-replicated table to the
// writer.
func (s *session) localTableHostgroup(hg route, q string) route {
	if hg == routeReader && s.readsLocalTable(q) {
		return routeWriter
	}
	return hg
}
