package discovery_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/testkit"
)

// memberCfg is one embedded member on loopback.
type memberCfg struct {
	name, client, peer, dir string
}

func newMembers(t *testing.T, n int) []*memberCfg {
	var ms []*memberCfg
	for i := 1; i <= n; i++ {
		ms = append(ms, &memberCfg{name: "m" + string(rune('0'+i)), client: discoverytest.FreeAddr(t), peer: discoverytest.FreeAddr(t), dir: t.TempDir()})
	}
	return ms
}

func peersOf(ms []*memberCfg) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.name+"=http://"+m.peer)
	}
	return out
}

func (m *memberCfg) config(peers []string, join string) discovery.Config {
	return discovery.Config{Endpoints: discovery.Embedded, Cluster: "test", DataDir: m.dir, ClientListen: m.client, PeerListen: m.peer,
		MemberName: m.name, Peers: peers, Join: join}
}

// openAll opens every member at once and fails on the first error.
func openAll(t *testing.T, cfgs []discovery.Config) []*discovery.Store {
	t.Helper()
	stores := make([]*discovery.Store, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			stores[i], errs[i] = discovery.Open(ctx, c, testLog())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	return stores
}

func testLog() *slog.Logger {
	if os.Getenv("GALEON_TEST_VERBOSE") == "" {
		return discoverytest.Quiet()
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}

func votingStarted(t *testing.T, s *discovery.Store) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ms, err := s.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range ms {
		if m.Started() && !m.Learner && m.Healthy {
			n++
		}
	}
	return n
}

// TestEmbeddedCluster: three members formed at once are one cluster;
// two members joining at once both get in (etcd takes one learner at a
// time: the second retries); a member whose data directory is gone is
// refused, and so is a removed member that restarts with its data.
func TestEmbeddedCluster(t *testing.T) {
	ms := newMembers(t, 5)
	peers := peersOf(ms[:3])
	start := time.Now()
	stores := openAll(t, []discovery.Config{ms[0].config(peers, ""), ms[1].config(peers, ""), ms[2].config(peers, "")})
	t.Logf("3 members formed at once in %s", time.Since(start).Round(time.Millisecond))
	var cluster uint64
	for i, s := range stores {
		// Its own first; a member not yet started when this one became
		// ready had published no client URL, and the client learns it
		// from the membership (auto-sync, every 5 s).
		if len(s.Endpoints) == 0 || s.Endpoints[0] != "http://"+ms[i].client {
			t.Errorf("member %s: client endpoints %v, want its own first", ms[i].name, s.Endpoints)
		}
		testkit.WaitFor(t, 15*time.Second, "member "+ms[i].name+"'s client knows all three members", func() bool {
			return len(s.Client.Endpoints()) == 3
		})
		r, err := s.Client.Get(context.Background(), "x")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			cluster = r.Header.ClusterId
		} else if r.Header.ClusterId != cluster {
			t.Fatalf("member %s is in cluster %x, member m1 in %x: two clusters", ms[i].name, r.Header.ClusterId, cluster)
		}
	}
	if n := votingStarted(t, stores[0]); n != 3 {
		t.Fatalf("%d healthy voting members, want 3", n)
	}

	join := "etcd://" + ms[0].client + ",etcd://" + ms[1].client
	start = time.Now()
	joined := openAll(t, []discovery.Config{ms[3].config(nil, join), ms[4].config(nil, join)})
	t.Logf("2 members joined at once in %s", time.Since(start).Round(time.Millisecond))
	if n := votingStarted(t, stores[0]); n != 5 {
		t.Fatalf("%d healthy voting members after two joins, want 5", n)
	}
	if _, err := joined[1].Client.Put(context.Background(), "/test/after-join", "1"); err != nil {
		t.Fatal(err)
	}

	// m5 loses its data directory: it must not start afresh.
	start = time.Now()
	joined[1].Close()
	if err := os.RemoveAll(filepath.Join(ms[4].dir, "etcd")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s, err := discovery.Open(ctx, ms[4].config(nil, join), discoverytest.Quiet()); err == nil {
		s.Close()
		t.Fatal("a member whose data directory is gone started again")
	} else if !strings.Contains(err.Error(), "member replace m5") {
		t.Errorf("data loss refused with %q; want it to say how to replace the member", err)
	} else {
		t.Logf("data loss refused: %v", err)
	}
	// A static member likewise (its peers answer).
	stores[2].Close()
	if err := os.RemoveAll(filepath.Join(ms[2].dir, "etcd")); err != nil {
		t.Fatal(err)
	}
	if s, err := discovery.Open(ctx, ms[2].config(peers, ""), discoverytest.Quiet()); err == nil {
		s.Close()
		t.Fatal("a static member whose data directory is gone started again")
	} else if !strings.Contains(err.Error(), "member replace m3") {
		t.Errorf("data loss refused with %q", err)
	}
	t.Logf("static member's data loss refused after %s", time.Since(start).Round(time.Millisecond))
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The lost members are removed (quorum holds: m1, m2, m4 of 5), then
	// m4 is removed while down and restarts with its data.
	for _, name := range []string{"m5", "m3"} {
		if _, err := stores[0].RemoveMember(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	joined[0].Close()
	if _, err := stores[0].RemoveMember(ctx, "m4"); err != nil {
		t.Fatal(err)
	}
	if s, err := discovery.Open(ctx, ms[3].config(nil, join), discoverytest.Quiet()); err == nil {
		s.Close()
		t.Fatal("a removed member came back")
	} else if !strings.Contains(err.Error(), "removed") {
		b, _ := os.ReadFile(filepath.Join(ms[3].dir, "etcd.log"))
		t.Errorf("removed member refused with %q; etcd.log:\n%s", err, b)
	} else {
		t.Logf("removed member refused: %v", err)
	}
}

// TestMemberAddedTooQuickly: a member added but never started (a proxy
// that fails before it starts, an operator's add ahead of time) costs no
// quorum, because galeon adds members as learners: with one of three
// voting members then down, the cluster still takes writes. A second
// add is refused while the first learner is pending (etcd takes one at
// a time) with a message saying what to do; removing the pending
// learner lets it through.
func TestMemberAddedTooQuickly(t *testing.T) {
	ms := newMembers(t, 3)
	peers := peersOf(ms)
	stores := openAll(t, []discovery.Config{ms[0].config(peers, ""), ms[1].config(peers, ""), ms[2].config(peers, "")})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pending, err := stores[0].AddMember(ctx, "http://"+discoverytest.FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores[0].AddMember(ctx, "http://"+discoverytest.FreeAddr(t)); err == nil || !strings.Contains(err.Error(), "still a learner") {
		t.Fatalf("a second add while a learner is pending: %v", err)
	} else {
		t.Logf("second add refused: %v", err)
	}
	stores[2].Close()
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = stores[0].Client.Put(pctx, "/test/quorum", "kept")
	pcancel()
	if err != nil {
		t.Fatalf("with a never-started learner and one of three members down, etcd takes no write: %v", err)
	}
	if _, err := stores[0].RemoveMember(ctx, strconv.FormatUint(pending.ID, 16)); err != nil {
		t.Fatal(err)
	}
	list, err := stores[0].Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("members after removing the pending learner: %+v", list)
	}
}
