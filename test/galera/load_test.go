// Package galera_test checks galeon's Galera promises under load against a
// real 3-node cluster: one writer at a time, reads that never fail while a
// healthy node exists, planned work without client errors, fast failover,
// and nothing acknowledged lost.
package galera_test

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/testkit"
)

// ack is a write the client saw succeed: its id and the node that
// committed it (recorded by the node itself in the row).
type ack struct {
	id        int64
	start, at time.Time
}

// load runs bounded read and write traffic through the proxy: writers
// insert ledger rows (autocommit and in short transactions), readers do
// autocommit reads; half the clients keep one connection ("sticky"), the
// others reconnect for every few statements.
type load struct {
	db      *sql.DB
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	acks    []ack
	readOK  atomic.Int64
	readErr atomic.Int64
	wErr    atomic.Int64
	errs    map[string]int // "read|write: message prefix" -> count
}

// startLoad starts writers (every other one sticky; with txWriters, every
// third one writes in explicit transactions) and readers.
func startLoad(t *testing.T, db *sql.DB, writers, readers int, txWriters bool) *load {
	t.Helper()
	l := &load{db: db, stop: make(chan struct{}), errs: map[string]int{}}
	for i := 0; i < writers; i++ {
		l.wg.Add(1)
		go l.writer(i%2 == 0, txWriters && i%3 == 0)
	}
	for i := 0; i < readers; i++ {
		l.wg.Add(1)
		go l.reader(i%2 == 0)
	}
	return l
}

func (l *load) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

func (l *load) fail(kind *atomic.Int64, err error) {
	kind.Add(1)
	what := "write"
	if kind == &l.readErr {
		what = "read"
	}
	msg := err.Error()
	if len(msg) > 90 {
		msg = msg[:90]
	}
	l.mu.Lock()
	l.errs[what+": "+msg]++
	l.mu.Unlock()
}

func (l *load) conn(sticky bool, prev *sql.Conn, n int) *sql.Conn {
	if prev != nil && (sticky || n%5 != 0) {
		return prev
	}
	if prev != nil {
		prev.Close()
	}
	c, err := l.db.Conn(context.Background())
	if err != nil {
		return nil
	}
	return c
}

func (l *load) writer(sticky, tx bool) {
	defer l.wg.Done()
	var c *sql.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for n := 0; !l.stopped() && n < 200000; n++ {
		if c = l.conn(sticky, c, n); c == nil {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		var id int64
		var err error
		began := time.Now()
		if tx && n%2 == 0 {
			err = l.txWrite(ctx, c, &id)
		} else {
			var res sql.Result
			res, err = c.ExecContext(ctx, "INSERT INTO app.ledger (node, at) VALUES (@@wsrep_node_name, NOW(6))")
			if err == nil {
				id, _ = res.LastInsertId()
			}
		}
		cancel()
		if err != nil {
			l.fail(&l.wErr, err)
			c.Close()
			c = nil
			time.Sleep(2 * time.Millisecond)
			continue
		}
		l.mu.Lock()
		l.acks = append(l.acks, ack{id, began, time.Now()})
		l.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}
}

func (l *load) txWrite(ctx context.Context, c *sql.Conn, id *int64) error {
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO app.ledger (node, at) VALUES (@@wsrep_node_name, NOW(6))")
	if err != nil {
		tx.Rollback()
		return err
	}
	*id, _ = res.LastInsertId()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.ledger WHERE id = ?", *id).Scan(&n); err != nil || n != 1 {
		tx.Rollback()
		return fmt.Errorf("own insert not visible inside the transaction: n=%d err=%v", n, err)
	}
	return tx.Commit()
}

func (l *load) reader(sticky bool) {
	defer l.wg.Done()
	var c *sql.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for n := 0; !l.stopped() && n < 500000; n++ {
		if c = l.conn(sticky, c, n); c == nil {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		var one int
		err := c.QueryRowContext(ctx, "SELECT 1 FROM app.ledger LIMIT 1").Scan(&one)
		cancel()
		if err != nil && err != sql.ErrNoRows {
			l.fail(&l.readErr, err)
			c.Close()
			c = nil
			continue
		}
		l.readOK.Add(1)
		time.Sleep(time.Millisecond)
	}
}

// finish stops the load and returns what it saw.
func (l *load) finish() []ack {
	close(l.stop)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ack(nil), l.acks...)
}

func (l *load) errorsSeen() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.errs {
		out[k] = v
	}
	return out
}

// checkOneWriter asserts, from the node each row names and the time the
// node committed it, that writer intervals never overlap: ordered by
// commit time, the committing node changes exactly once per writer switch
// the proxy made (switches = epoch - 1). Two writers at once would show as
// alternation, i.e. more changes than switches.
func checkOneWriter(t *testing.T, db *sql.DB, switches uint64) []string {
	t.Helper()
	rows, err := db.Query("SELECT node, at FROM app.ledger ORDER BY at, id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var order []string
	for rows.Next() {
		var node, at string
		if err := rows.Scan(&node, &at); err != nil {
			t.Fatal(err)
		}
		if len(order) == 0 || order[len(order)-1] != node {
			order = append(order, node)
			if uint64(len(order)-1) > switches {
				t.Errorf("at %s writes moved to %s: %d changes of committing node for %d writer switches, so two writers overlapped (sequence %v)", at, node, len(order)-1, switches, order)
			}
		}
	}
	return order
}

// checkNothingLost asserts every acknowledged write is on every node.
func checkNothingLost(t *testing.T, nodes map[string]*sql.DB, acks []ack) {
	t.Helper()
	ids := make([]int64, len(acks))
	for i, a := range acks {
		ids[i] = a.id
	}
	testkit.CheckLedger(t, nodes, ids)
}

// writesByNode counts the ledger rows per committing node.
func writesByNode(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query("SELECT node, COUNT(*) FROM app.ledger GROUP BY node ORDER BY node")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var n string
		var c int
		_ = rows.Scan(&n, &c)
		parts = append(parts, fmt.Sprintf("%s=%d", n, c))
	}
	sort.Strings(parts)
	return fmt.Sprint(parts)
}
