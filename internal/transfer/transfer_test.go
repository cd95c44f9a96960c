package transfer

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

func write(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.WriteFile(path, make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ctimeOf is path's inode change time.
func ctimeOf(t *testing.T, path string) time.Time {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return changed(info)
}

// afterTick returns once the file system's clock (coarse: a few ms) has
// moved past at, so that files written next are told apart by ctime.
func afterTick(t *testing.T, dir string, at time.Time) {
	t.Helper()
	probe := filepath.Join(dir, "probe")
	for i := 0; i < 100000; i++ {
		write(t, probe, 0)
		if ctimeOf(t, probe).After(at) {
			os.Remove(probe)
			return
		}
	}
	t.Fatal("the file system clock did not move")
}

// An SST seen in a joiner's data directory: the joiner's own files do
// not count until the transfer writes them (in place, as rsync does: same
// inode, same size), new files do.
func TestObserverFollowsAnSSTInTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "ibdata1"), 1000)    // the joiner's own, overwritten later
	write(t, filepath.Join(dir, "aria_log"), 500)    // the joiner's own, untouched
	write(t, filepath.Join(dir, "galera.cache"), 99) // never copied, never counted
	write(t, filepath.Join(dir, "gcache.page.000000"), 99)
	o := &Observer{DataDir: dir}
	t0 := time.Unix(1000, 0)
	var f discovery.NodeFacts
	o.Observe(&f, t0)
	if f.Transfer != nil || f.DataBytes != 1500 {
		t.Fatalf("before the SST: transfer %+v, data bytes %d (want none, 1500)", f.Transfer, f.DataBytes)
	}
	afterTick(t, dir, ctimeOf(t, filepath.Join(dir, "aria_log")))
	write(t, filepath.Join(dir, "sst_in_progress"), 0)
	f = discovery.NodeFacts{}
	o.Observe(&f, t0.Add(time.Second))
	if f.Transfer == nil || f.Transfer.Kind != "SST" {
		t.Fatalf("SST started: %+v, want kind SST", f.Transfer)
	}
	if f.Transfer.Done != 0 {
		t.Fatalf("SST started: %d bytes received, want 0 (the joiner's own files are not progress)", f.Transfer.Done)
	}
	write(t, filepath.Join(dir, "ibdata1"), 1000) // in place: same inode, same size
	os.MkdirAll(filepath.Join(dir, "app"), 0o700)
	write(t, filepath.Join(dir, "app", "t.ibd"), 5000)
	f = discovery.NodeFacts{}
	o.Observe(&f, t0.Add(3*time.Second))
	if f.Transfer.Done != 6000 || f.Transfer.Rate != 3000 {
		t.Errorf("received %d bytes at %.0f/s, want 6000 at 3000/s", f.Transfer.Done, f.Transfer.Rate)
	}
	os.Remove(filepath.Join(dir, "sst_in_progress"))
	f = discovery.NodeFacts{}
	o.Observe(&f, t0.Add(4*time.Second))
	if f.Transfer != nil {
		t.Errorf("after the SST: %+v", f.Transfer)
	}
}

func TestObserverFollowsAnIST(t *testing.T) {
	o := &Observer{}
	t0 := time.Unix(1000, 0)
	f := discovery.NodeFacts{Up: true, LocalState: 1, LastCommitted: 100}
	f.Grastate.Seqno = 90
	o.Observe(&f, t0)
	if f.Transfer == nil || f.Transfer.Kind != "IST" || f.Transfer.From != 90 || f.Transfer.Done != 10 {
		t.Fatalf("IST: %+v, want from 90, 10 applied", f.Transfer)
	}
	f = discovery.NodeFacts{Up: true, LocalState: 4, LastCommitted: 200}
	o.Observe(&f, t0.Add(time.Second))
	if f.Transfer != nil {
		t.Errorf("Synced: %+v", f.Transfer)
	}
}

func TestEstimateSetsTransfersAgainstTheCluster(t *testing.T) {
	nodes := []discovery.NodeFacts{
		{Name: "node1", Up: true, Synced: true, LocalState: 4, ClusterStatus: "Primary", DataBytes: 900, LastCommitted: 500},
		{Name: "node2", Up: true, LocalState: 2, ClusterStatus: "Primary", DataBytes: 1000, LastCommitted: 500},
		{Name: "node3", Transfer: &discovery.Transfer{Kind: "SST", Done: 250, Rate: 50}},
		{Name: "node4", Up: true, LocalState: 1, LastCommitted: 450, Transfer: &discovery.Transfer{Kind: "IST", Done: 50, From: 400, Rate: 25}},
	}
	got := Estimate(nodes)
	if len(got) != 2 {
		t.Fatalf("got %+v", got)
	}
	sst, ist := got[0], got[1]
	if sst.Donor != "node2" || sst.Total != 1000 || sst.Percent != 25 || sst.ETA != 15*time.Second {
		t.Errorf("SST: %+v, want from node2, 1000 bytes in all, 25%%, 15s left", sst)
	}
	if ist.Total != 100 || ist.Percent != 50 || ist.ETA != 2*time.Second {
		t.Errorf("IST: %+v, want 100 write-sets in all, 50%%, 2s left", ist)
	}
	if s := sst.String(); s != "SST from node2: 25% (0.0 of 0.0 MB, 0.0 MB/s, ETA 15s)" {
		t.Errorf("SST said as %q", s)
	}
	if s := ist.String(); s != "IST: 50% (50 of 100 write-sets, 25 write-sets/s, ETA 2s)" {
		t.Errorf("IST said as %q", s)
	}
	// Nothing to set it against: unknown, not a guess.
	if p := Estimate(nodes[2:3]); p[0].Percent != -1 || p[0].ETA != -1 {
		t.Errorf("alone: %+v", p[0])
	}
	// Never 100% before the node is past it.
	nodes[2].Transfer.Done = 5000
	if p := Estimate(nodes); p[0].Percent != 99 || p[0].ETA != 0 {
		t.Errorf("more received than the donor holds: %+v", p[0])
	}
}
