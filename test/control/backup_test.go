package control_test

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestBackupCostsNothing takes a backup under write and read load through
// three proxies: it comes from a node that is not the writer, drained and
// desynchronised while it copies; the writer is never drained nor
// desynchronised; clients see no error. The backup then starts a new
// cluster (sandbox up --from-backup) at the position it recorded, whose
// tables hold exactly what the source held there: a table not written
// meanwhile checksums equal, every ledger row it has is the source's, and
// every write acknowledged before the backup began is in it.
func TestBackupCostsNothing(t *testing.T) {
	// The agents run their nodes, as on machines of their own: the copy
	// is made by the chosen node's agent, and galeon reaches the nodes at
	// the addresses the agents registered, with an account given.
	sb, store, ms := newRig(t, 3, true)
	w0, _, _ := agreement(ms)
	db, _ := sb.DB(w0)
	createLedger(t, db)
	for _, q := range []string{
		"CREATE TABLE app.static (id INT PRIMARY KEY, v VARCHAR(64))",
		"INSERT INTO app.static SELECT seq, MD5(seq) FROM app.seq_1_to_200000",
		"INSERT INTO app.ledger (node, proxy, at) SELECT 'fill', 'fill', NOW(6) FROM app.seq_1_to_200000",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	l := startLedger(ms, 1, 1)
	m := startMeter(ms[0])
	waitFor(t, 10*time.Second, "writes acknowledged", func() bool { return ackCount(l) > 30 })
	// Before: the write rate and latency without a backup.
	quiet := time.Now()
	acks0 := ackCount(l)
	time.Sleep(3 * time.Second) // a measuring window, not a wait for a condition
	rateBefore := float64(ackCount(l)-acks0) / time.Since(quiet).Seconds()
	p99Before := m.p99(quiet, time.Now())

	// The writer is never drained nor desynchronised meanwhile.
	var mu sync.Mutex
	var writerTouched []string
	stop := make(chan struct{})
	watched := make(chan struct{})
	wdb, _ := sb.DB(w0)
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var name, desync string
			if err := wdb.QueryRow("SHOW GLOBAL VARIABLES LIKE 'wsrep_desync'").Scan(&name, &desync); err == nil && desync != "OFF" {
				mu.Lock()
				writerTouched = append(writerTouched, "desync "+desync)
				mu.Unlock()
			}
			for _, mb := range ms {
				if mb.p.OperatorDrained(w0) {
					mu.Lock()
					writerTouched = append(writerTouched, mb.name+" drained it")
					mu.Unlock()
				}
			}
		}
	}()
	acksBefore := l.snapshot()
	started := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	nodeDB, closeAll := lifecycle.CachedNodeDB(lifecycle.DirectNodeDB(store, sb.Credentials.AdminUser, sb.Credentials.AdminPassword))
	defer closeAll()
	b := lifecycle.Backup{Store: store, By: "test", DrainTimeout: 5 * time.Second,
		DB: nodeDB, Copier: lifecycle.AgentCopier{Store: store, By: "test"},
		Progress: func(node, msg string) { t.Logf("[%5.1fs] %s: %s", time.Since(started).Seconds(), node, msg) }}
	acksAt := ackCount(l)
	path, info, err := b.Run(ctx, dir)
	ended := time.Now()
	close(stop)
	<-watched
	if err != nil {
		t.Fatal(err)
	}
	rateDuring := float64(ackCount(l)-acksAt) / ended.Sub(started).Seconds()
	p99During := m.p99(started, ended)
	acks := l.finish()
	meterErrs := m.finish()
	t.Logf("FIGURE backup of %s (%s) under load through 3 proxies: copy %.1fs (%.0f MiB/s), prepare %.1fs, in all %s; writes/s %.0f before, %.0f during; write p99 %s before, %s during",
		info.Node, humanMiB(info.Bytes), info.CopySeconds, float64(info.Bytes)/(1<<20)/info.CopySeconds, info.PrepareSeconds, ended.Sub(started).Round(time.Millisecond),
		rateBefore, rateDuring, p99Before.Round(100*time.Microsecond), p99During.Round(100*time.Microsecond))
	if info.Node == w0 {
		t.Errorf("the backup was taken on the writer %s", w0)
	}
	mu.Lock()
	if len(writerTouched) > 0 {
		t.Errorf("the writer was touched during the backup: %v", writerTouched)
	}
	mu.Unlock()
	if len(l.errs) > 0 || len(meterErrs) > 0 {
		t.Errorf("clients saw errors during the backup: %v %v", l.errs, meterErrs)
	}
	checkAcked(t, sb, []string{"node1", "node2", "node3"}, acks)
	if op, err := store.ReadOperation(ctx); err != nil || op != nil {
		t.Errorf("operation left recorded: %+v %v", op, err)
	}

	// A new cluster from the backup.
	restoreStart := time.Now()
	rs := sandboxtest.New(t, sandbox.Options{Name: "restored" + fmt.Sprint(os.Getpid()%100000), FromBackup: path})
	t.Logf("FIGURE restore of %s into a new 3-node cluster: %s", humanMiB(info.Bytes), time.Since(restoreStart).Round(time.Millisecond))
	rdb, _ := rs.DB(rs.Nodes[0].Name)
	var name, uuid string
	if err := rdb.QueryRow("SHOW STATUS LIKE 'wsrep_cluster_state_uuid'").Scan(&name, &uuid); err != nil || uuid != info.UUID {
		t.Errorf("restored cluster's state UUID %q (%v), want the backup's %s", uuid, err, info.UUID)
	}
	db, _ = sb.DB(w0)
	if a, b := checksum(t, db, "app.static"), checksum(t, rdb, "app.static"); a != b {
		t.Errorf("app.static checksums differ: source %d, restored %d", a, b)
	}
	src, restored := ledgerRows(t, db), ledgerRows(t, rdb)
	for id, crc := range restored {
		if src[id] != crc {
			t.Errorf("restored ledger row %d differs from the source's", id)
			break
		}
	}
	missing := 0
	for _, id := range acksBefore {
		if _, ok := restored[id]; !ok {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d writes acknowledged before the backup began are not in it", missing, len(acksBefore))
	}
	t.Logf("FIGURE restored ledger: %d rows of the source's %d (writes went on during the copy)", len(restored), len(src))
}

// snapshot copies the acknowledged ids so far.
func (l *ledger) snapshot() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.acks)
}

func checksum(t *testing.T, db *sql.DB, table string) int64 {
	t.Helper()
	var name string
	var sum sql.NullInt64
	if err := db.QueryRow("CHECKSUM TABLE "+table).Scan(&name, &sum); err != nil {
		t.Fatal(err)
	}
	return sum.Int64
}

// ledgerRows maps each app.ledger id to a CRC of its row.
func ledgerRows(t *testing.T, db *sql.DB) map[int64]uint32 {
	t.Helper()
	rows, err := db.Query("SELECT id, node, proxy, at FROM app.ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]uint32{}
	for rows.Next() {
		var id int64
		var node, proxy, at string
		if err := rows.Scan(&id, &node, &proxy, &at); err != nil {
			t.Fatal(err)
		}
		out[id] = crc32.ChecksumIEEE([]byte(strings.Join([]string{node, proxy, at}, "|")))
	}
	return out
}

func humanMiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// p99 is the 99th percentile of the meter's write latencies begun in
// [from, to].
func (mt *meter) p99(from, to time.Time) time.Duration {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	var ds []time.Duration
	for i, at := range mt.at {
		if !at.Before(from) && at.Before(to) {
			ds = append(ds, mt.took[i])
		}
	}
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)*99/100]
}
