package sites_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// galeonBin is the binary `make build` leaves, which runs the sites'
// delay processes.
var galeonBin, _ = filepath.Abs("../../bin/galeon")

// commitP50 is the median time of n autocommit INSERTs on db.
func commitP50(t *testing.T, db *sql.DB, n int) time.Duration {
	t.Helper()
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS app.wan (id INT AUTO_INCREMENT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	took := make([]time.Duration, 0, n)
	for i := range n {
		start := time.Now()
		if _, err := db.Exec("INSERT INTO app.wan (v) VALUES (?)", i); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return took[n/2]
}

// wanBytesPerCommit commits n rows of 16 KiB on dc1-1 and returns how
// many bytes per commit left dc1 for the other sites (the sandbox counts
// what crosses each link).
func wanBytesPerCommit(t *testing.T, sb *sandbox.Sandbox, db *sql.DB, n int) float64 {
	t.Helper()
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS app.wanbytes (id INT AUTO_INCREMENT PRIMARY KEY, v MEDIUMBLOB)"); err != nil {
		t.Fatal(err)
	}
	out := func() uint64 {
		links, err := sb.Links(context.Background(), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var sum uint64
		for _, l := range links {
			switch "dc1" {
			case l.A:
				sum += l.BytesA
			case l.B:
				sum += l.BytesB
			}
		}
		return sum
	}
	before := out()
	for range n {
		if _, err := db.Exec("INSERT INTO app.wanbytes (v) VALUES (REPEAT(MD5(RAND()), 512))"); err != nil {
			t.Fatal(err)
		}
	}
	return float64(out()-before) / float64(n)
}

// minSize watches dc1-1's cluster size for d and returns the smallest.
func minSize(t *testing.T, sb *sandbox.Sandbox, d time.Duration) int {
	t.Helper()
	db, err := sb.DB(sb.Nodes[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	least := 99
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var k, v string
		if err := db.QueryRow("SHOW STATUS LIKE 'wsrep_cluster_size'").Scan(&k, &v); err == nil {
			n, _ := strconv.Atoi(v)
			least = min(least, n)
		}
	}
	return least
}

// spike delays everything dc2 sends for 4 s (a WAN latency spike) and
// returns the smallest cluster size dc1-1 saw meanwhile and for 10 s
// after.
func spike(t *testing.T, sb *sandbox.Sandbox, base time.Duration) int {
	t.Helper()
	ctx := context.Background()
	if err := sb.SetDelay(ctx, "dc2", 4*time.Second); err != nil {
		t.Fatal(err)
	}
	during := minSize(t, sb, 6*time.Second)
	if err := sb.SetDelay(ctx, "dc2", base); err != nil {
		t.Fatal(err)
	}
	return min(during, minSize(t, sb, 10*time.Second))
}

// TestWANLatencyAndProfile puts 30 ms between sites, measures what it
// costs a commit, and shows why the WAN profile exists: a 4 s latency
// spike out of one site evicts its nodes with LAN timeouts and not with
// the profile.
func TestWANLatencyAndProfile(t *testing.T) {
	const spec, rtt = "dc1:2,dc2:2,dc3:garbd", 30 * time.Millisecond
	// The delay goes in after the nodes have joined: their state
	// transfers would only be slower, and nothing is learnt from that.
	// This one has no segments (every site in segment 0): its commit
	// latency is the figure TestProxiesInSites's (with segments) is
	// compared with.
	lan := sandboxtest.New(t, sandbox.Options{Sites: spec, OneSegment: true, Control: sandbox.Control{AgentBinary: galeonBin}})
	db := sandboxtest.AppDB(t, lan, lan.Nodes[0].Name)
	without := commitP50(t, db, 40)
	if err := lan.SetDelay(context.Background(), "", rtt/2); err != nil {
		t.Fatal(err)
	}
	atRTT := commitP50(t, db, 40)
	t.Logf("FIGURE commit p50 on dc1-1, %s without segments: %.1f ms with %s between sites, %.1f ms without", spec, float64(atRTT.Microseconds())/1000, rtt, float64(without.Microseconds())/1000)
	if atRTT < rtt/2 {
		t.Errorf("a commit took %s with %s between sites: the delay is not in place", atRTT, rtt)
	}
	if least := spike(t, lan, rtt/2); least >= 5 {
		t.Errorf("LAN timeouts: a 4 s spike out of dc2 left the cluster whole (smallest size %d); the test no longer shows why the WAN profile exists", least)
	} else {
		t.Logf("FIGURE LAN timeouts (suspect 2 s): a 4 s spike out of dc2 shrank the cluster to %d members", least)
	}
	waitView(t, lan, "after the spike, LAN timeouts", allPrimary(lan, 5), 2*time.Minute)
	bytesWithout := wanBytesPerCommit(t, lan, db, 50)
	if err := lan.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}

	wan := sandboxtest.New(t, sandbox.Options{Sites: spec, WAN: true, Control: sandbox.Control{AgentBinary: galeonBin}})
	if err := wan.SetDelay(context.Background(), "", rtt/2); err != nil {
		t.Fatal(err)
	}
	if least := spike(t, wan, rtt/2); least != 5 {
		t.Errorf("WAN profile: a 4 s spike out of dc2 shrank the cluster to %d members", least)
	} else {
		t.Logf("FIGURE WAN profile (suspect 30 s): the cluster stayed at 5 members through a 4 s spike out of dc2")
	}
	wdb := sandboxtest.AppDB(t, wan, wan.Nodes[0].Name)
	t.Logf("FIGURE commit p50 on dc1-1 with the WAN profile at %s: %.1f ms", rtt, float64(commitP50(t, wdb, 40).Microseconds())/1000)
	// Segments send a write-set across the WAN once per site, to one
	// relay, instead of to every remote node.
	bytesWith := wanBytesPerCommit(t, wan, wdb, 50)
	t.Logf("FIGURE bytes leaving dc1 per 16 KiB commit: %.0f with a segment per site, %.0f without segments (%.2f×)", bytesWith, bytesWithout, bytesWith/bytesWithout)
	if bytesWith > 0.85*bytesWithout {
		t.Errorf("segments did not cut WAN traffic: %.0f bytes per commit with, %.0f without", bytesWith, bytesWithout)
	}
}
