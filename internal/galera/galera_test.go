package galera

import (
	"errors"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func synced() map[string]string {
	return map[string]string{
		"wsrep_cluster_status": "Primary", "wsrep_ready": "ON", "wsrep_connected": "ON",
		"wsrep_local_state": "4", "wsrep_local_state_comment": "Synced", "wsrep_reject_queries": "NONE",
		"wsrep_desync": "OFF", "wsrep_sst_donor_rejects_queries": "OFF", "wsrep_sst_method": "rsync",
		"wsrep_local_recv_queue": "0", "read_only": "OFF", "wsrep_cluster_state_uuid": "u1",
		"wsrep_provider_options": "evs.suspect_timeout = PT1S; gmcast.segment = 2; pc.weight = 1",
	}
}

func with(kv ...string) map[string]string {
	v := synced()
	for i := 0; i+1 < len(kv); i += 2 {
		v[kv[i]] = kv[i+1]
	}
	return v
}

func TestEvaluate(t *testing.T) {
	p := Policy{MaxTransactionsBehind: 100, OKChecks: 1, MaxMissedChecks: 3}
	online := Health{State: Online}
	cases := []struct {
		name   string
		vars   map[string]string
		allow  bool
		state  State
		reason string
	}{
		{"synced", synced(), false, Online, ""},
		{"non-primary", with("wsrep_cluster_status", "non-Primary"), false, Offline, "non-Primary"},
		{"not ready", with("wsrep_ready", "OFF"), false, Offline, "wsrep_ready=OFF"},
		{"joining", with("wsrep_local_state", "1", "wsrep_local_state_comment", "Joining: receiving State Transfer"), false, Offline, "not Synced: Joining: receiving State Transfer"},
		{"joined", with("wsrep_local_state", "3", "wsrep_local_state_comment", "Joined"), false, Offline, "not Synced: Joined"},
		{"desync", with("wsrep_local_state", "2", "wsrep_desync", "ON"), false, Draining, "desync"},
		{"donor rejecting", with("wsrep_local_state", "2", "wsrep_sst_donor_rejects_queries", "ON"), true, Draining, "donor (rejects queries)"},
		{"donor rsync blocks", with("wsrep_local_state", "2"), true, Draining, "donor (rsync)"},
		{"donor mariabackup allowed", with("wsrep_local_state", "2", "wsrep_sst_method", "mariabackup"), true, Online, ""},
		{"donor mariabackup not allowed", with("wsrep_local_state", "2", "wsrep_sst_method", "mariabackup"), false, Draining, "donor (mariabackup)"},
		{"reject all", with("wsrep_reject_queries", "ALL"), false, Draining, "reject_queries=ALL"},
		{"reject all kill", with("wsrep_reject_queries", "ALL_KILL"), false, Offline, "reject_queries=ALL_KILL"},
		{"pxc maintenance", with("pxc_maint_mode", "MAINTENANCE"), false, Draining, "pxc_maint_mode=MAINTENANCE"},
		{"lagging", with("wsrep_local_recv_queue", "250"), false, Online, "recv queue 250 > max 100"},
	}
	for _, c := range cases {
		pp := p
		pp.AllowDonor = c.allow
		h := pp.Evaluate(online, Sample{Vars: c.vars})
		if h.State != c.state || !strings.HasPrefix(h.Reason, c.reason) {
			t.Errorf("%s: got %s %q, want %s %q", c.name, h.State, h.Reason, c.state, c.reason)
		}
	}
	if h := p.Evaluate(online, Sample{Vars: synced()}); h.Segment != 2 || h.ClusterID != "u1" {
		t.Errorf("segment %d cluster %q", h.Segment, h.ClusterID)
	}
}

// TestDonorThatKeepsCommittingStaysOnline: a donor whose SST method
// could block (rsync) but whose commits go on (an IST donor runs the SST
// script with a bypass: no global read lock) is not drained; once its
// commits stand still (rsync's FLUSH TABLES WITH READ LOCK) it is.
func TestDonorThatKeepsCommittingStaysOnline(t *testing.T) {
	p := Policy{OKChecks: 2, MaxMissedChecks: 3}
	donor := func(seqno string) Sample {
		return Sample{Vars: with("wsrep_local_state", "2", "wsrep_local_state_comment", "Donor/Desynced", "wsrep_last_committed", seqno)}
	}
	h := p.Evaluate(Health{State: Online, LastCommit: 100}, Sample{Vars: with("wsrep_last_committed", "100")})
	steps := []struct {
		name   string
		s      Sample
		state  State
		reason string
	}{
		{"IST donor, commits go on", donor("140"), Online, ""},
		{"still a donor, still committing", donor("180"), Online, ""},
		{"commits stopped (global read lock)", donor("180"), Draining, "donor (rsync)"},
		{"committing again but must prove itself", donor("200"), Draining, "donor (rsync)"},
	}
	for _, st := range steps {
		h = p.Evaluate(h, st.s)
		if h.State != st.state || h.Reason != st.reason {
			t.Errorf("%s: got %s %q, want %s %q", st.name, h.State, h.Reason, st.state, st.reason)
		}
	}
	// A desynced node (an operator's wsrep_desync) or a donor that
	// rejects queries is drained even while it commits.
	for _, vars := range []map[string]string{
		with("wsrep_local_state", "2", "wsrep_desync", "ON", "wsrep_last_committed", "150"),
		with("wsrep_local_state", "2", "wsrep_sst_donor_rejects_queries", "ON", "wsrep_last_committed", "150"),
	} {
		if h := p.Evaluate(Health{State: Online, LastCommit: 100}, Sample{Vars: vars}); h.State != Draining {
			t.Errorf("%v: %s %q, want DRAINING", vars, h.State, h.Reason)
		}
	}
	cases := []struct {
		wasOnline bool
		from, to  int64
		want      bool
	}{
		{true, 100, 101, true},
		{true, 100, 100, false},
		{false, 100, 150, false},
		{true, 0, 150, false}, // no previous position: not proven
		{true, 150, 100, false},
	}
	for _, c := range cases {
		if got := DonorServes(c.wasOnline, c.from, c.to); got != c.want {
			t.Errorf("DonorServes(%v, %d, %d) = %v, want %v", c.wasOnline, c.from, c.to, got, c.want)
		}
	}
}

func TestMissedChecksAndRecovery(t *testing.T) {
	p := Policy{OKChecks: 2, MaxMissedChecks: 3}
	h := Health{State: Online}
	timeout := Sample{Err: errors.New("i/o timeout")}
	for i := 1; i <= 2; i++ {
		if h = p.Evaluate(h, timeout); h.State != Online {
			t.Fatalf("offline after %d missed checks, want 3", i)
		}
	}
	if h = p.Evaluate(h, timeout); h.State != Offline || !strings.Contains(h.Reason, "3 missed checks") {
		t.Fatalf("after 3 misses: %s %q", h.State, h.Reason)
	}
	// Comes back only after 2 good checks in a row.
	if h = p.Evaluate(h, Sample{Vars: synced()}); h.State != Offline {
		t.Fatalf("back after 1 good check: %s", h.State)
	}
	if h = p.Evaluate(h, Sample{Vars: synced()}); h.State != Online {
		t.Fatalf("not back after 2 good checks: %s %q", h.State, h.Reason)
	}
	if h = p.Evaluate(Health{State: Online}, Sample{Err: errors.New("dial tcp: connect: connection refused")}); h.State != Offline {
		t.Fatalf("refused connection should be OFFLINE at once")
	}
}

func TestReconcileMinority(t *testing.T) {
	nodes := map[string]Health{
		"a": {State: Online, ClusterID: "u1"}, "b": {State: Online, ClusterID: "u1"}, "c": {State: Online, ClusterID: "u2"},
	}
	Reconcile(nodes)
	if nodes["c"].State != Offline || !strings.Contains(nodes["c"].Reason, "minority cluster UUID") {
		t.Errorf("c: %s %q", nodes["c"].State, nodes["c"].Reason)
	}
	if nodes["a"].State != Online {
		t.Errorf("a went %s", nodes["a"].State)
	}
}

func cand(name string, w int, st State, lag bool) Candidate {
	return Candidate{Name: name, WriterWeight: w, Health: Health{State: st, Lagging: lag}}
}

func TestChooseWriter(t *testing.T) {
	now := time.Now()
	all := []Candidate{cand("n1", 100, Online, false), cand("n2", 50, Online, false), cand("n3", 50, Online, false)}
	cases := []struct {
		name    string
		cands   []Candidate
		current string
		fb      Failback
		want    string
	}{
		{"highest weight", all, "", Failback{}, "n1"},
		{"tie by name", []Candidate{cand("n3", 50, Online, false), cand("n2", 50, Online, false)}, "", Failback{}, "n2"},
		{"sticky: recovered n1 does not take the role back", all, "n2", Failback{Mode: "never"}, "n2"},
		{"failback immediate", all, "n2", Failback{Mode: "immediate"}, "n1"},
		{"failback after, not yet", []Candidate{{Name: "n1", WriterWeight: 100, Health: Health{State: Online}, HealthySince: now.Add(-time.Second)}, cand("n2", 50, Online, false)}, "n2", Failback{Mode: "after", After: time.Minute}, "n2"},
		{"failback after, done", []Candidate{{Name: "n1", WriterWeight: 100, Health: Health{State: Online}, HealthySince: now.Add(-2 * time.Minute)}, cand("n2", 50, Online, false)}, "n2", Failback{Mode: "after", After: time.Minute}, "n1"},
		{"current writer draining moves", []Candidate{cand("n1", 100, Online, false), cand("n2", 50, Draining, false), cand("n3", 50, Online, false)}, "n2", Failback{}, "n1"},
		{"lagging never chosen if another exists", []Candidate{cand("n1", 100, Online, true), cand("n2", 50, Online, false)}, "", Failback{}, "n2"},
		{"lagging current writer replaced", []Candidate{cand("n1", 100, Online, true), cand("n2", 50, Online, false)}, "n1", Failback{}, "n2"},
		{"lagging as last resort", []Candidate{cand("n1", 100, Online, true), cand("n2", 50, Offline, false)}, "", Failback{}, "n1"},
		{"read_only never writer", []Candidate{{Name: "n1", WriterWeight: 100, Health: Health{State: Online, ReadOnly: true}}, cand("n2", 1, Online, false)}, "", Failback{}, "n2"},
		{"no candidate", []Candidate{cand("n1", 100, Offline, false), cand("n2", 0, Online, false)}, "n1", Failback{}, ""},
	}
	for _, c := range cases {
		if got := ChooseWriter(c.cands, c.current, c.fb, now); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestClustercheck(t *testing.T) {
	synced := map[string]string{"wsrep_local_state": "4", "wsrep_cluster_status": "Primary", "wsrep_ready": "ON"}
	donor := map[string]string{"wsrep_local_state": "2", "wsrep_local_state_comment": "Donor/Desynced", "wsrep_cluster_status": "Primary", "wsrep_ready": "ON"}
	nonPrim := map[string]string{"wsrep_local_state": "4", "wsrep_cluster_status": "non-Primary", "wsrep_ready": "OFF"}
	joiner := map[string]string{"wsrep_local_state": "1", "wsrep_local_state_comment": "Joining", "wsrep_cluster_status": "Primary", "wsrep_ready": "OFF"}
	cases := []struct {
		name       string
		status     map[string]string
		allowDonor bool
		ok         bool
	}{
		{"synced", synced, false, true},
		{"donor refused", donor, false, false},
		{"donor allowed", donor, true, true},
		{"non-Primary", nonPrim, true, false},
		{"joiner", joiner, true, false},
		{"unreachable", nil, true, false},
	}
	for _, c := range cases {
		if ok, why := Clustercheck(c.status, c.allowDonor); ok != c.ok || why == "" {
			t.Errorf("%s: got %v (%q), want %v", c.name, ok, why, c.ok)
		}
	}
}

// TestChooseWriterWaitsForBetterNodeComingUp: with no writer yet, the
// choice waits for a better node still proving itself, so that it does
// not depend on which node answered its checks first — but not forever.
func TestChooseWriterWaitsForBetterNodeComingUp(t *testing.T) {
	now := time.Now()
	node3 := Candidate{Name: "node3", WriterWeight: 100, Health: Health{State: Online}, HealthySince: now.Add(-time.Second)}
	node1 := Candidate{Name: "node1", WriterWeight: 100, Health: Health{State: Offline, Reason: "recovering: 1 of 2 good checks"}}
	never := Failback{Mode: "never"}
	if got := ChooseWriter([]Candidate{node1, node3}, "", never, now); got != "" {
		t.Errorf("chose %q while node1 (first by name) is coming up", got)
	}
	if got := ChooseWriter([]Candidate{node1, node3}, "", never, now.Add(startupGrace)); got != "node3" {
		t.Errorf("after the grace: %q, want node3", got)
	}
	node1.Health = Health{State: Offline, Reason: "unreachable: connection refused"}
	if got := ChooseWriter([]Candidate{node1, node3}, "", never, now); got != "node3" {
		t.Errorf("a failing (not coming-up) node1 held up the choice: %q", got)
	}
	node1.Health = Health{State: Offline, Reason: ReasonNotChecked}
	if got := ChooseWriter([]Candidate{node1, node3}, "node3", never, now); got != "node3" {
		t.Errorf("a current writer must not wait for anyone: %q", got)
	}
	node1.Health = Health{State: Online}
	if got := ChooseWriter([]Candidate{node1, node3}, "", never, now); got != "node1" {
		t.Errorf("both online, no writer yet: %q, want node1", got)
	}
}

func TestDonorIsNeverTheWriterWhileAnotherCanServe(t *testing.T) {
	cands := []DonorCandidate{
		{Name: "node1", Synced: true, CachedDownto: 1},
		{Name: "node2", Synced: true, CachedDownto: 500, RecvQueue: 3},
		{Name: "node3", Synced: true, CachedDownto: 90},
		{Name: "node5", Synced: false, CachedDownto: 1},
	}
	// A new node (no position): no IST anywhere; least loaded reader first.
	if got := ChooseDonors(Joiner{Name: "node4", Seqno: -1}, cands, "node1"); !slices.Equal(got, []string{"node3", "node2"}) {
		t.Errorf("new joiner: %v, want [node3 node2] (never the writer node1, never unsynced node5)", got)
	}
	// A joiner at seqno 100: node3's gcache (from 90) covers it, IST first.
	if got := ChooseDonors(Joiner{Name: "node4", Seqno: 100}, cands, "node1"); got[0] != "node3" {
		t.Errorf("joiner at 100: %v, want node3 (IST) first", got)
	}
	// A joiner at 600 is covered by both readers; node3 is less loaded.
	if got := ChooseDonors(Joiner{Name: "node4", Seqno: 600}, cands, "node1"); !slices.Equal(got, []string{"node3", "node2"}) {
		t.Errorf("joiner at 600: %v", got)
	}
	// Same segment first.
	cands[1].Segment, cands[2].Segment = 1, 2
	if got := ChooseDonors(Joiner{Name: "node4", Seqno: -1, Segment: 1}, cands, "node1"); got[0] != "node2" {
		t.Errorf("segment 1 joiner: %v, want node2 (its segment) first", got)
	}
	// Same site first where segments do not tell (all in segment 0).
	cands[1].Segment, cands[2].Segment = 0, 0
	cands[1].Site, cands[2].Site = "dc2", "dc1"
	if got := ChooseDonors(Joiner{Name: "node4", Seqno: -1, Site: "dc2"}, cands, "node1"); got[0] != "node2" {
		t.Errorf("dc2 joiner: %v, want node2 (its site) first", got)
	}
	// Only the writer can serve: it is offered.
	if got := ChooseDonors(Joiner{Name: "node4", Seqno: -1}, cands[:1], "node1"); !slices.Equal(got, []string{"node1"}) {
		t.Errorf("only the writer: %v, want [node1]", got)
	}
	if got := ChooseDonors(Joiner{Name: "node4"}, nil, "node1"); len(got) != 0 {
		t.Errorf("no candidate: %v", got)
	}
}

func TestWriterStaysInItsSite(t *testing.T) {
	now := time.Now()
	up := Health{State: Online}
	down := Health{State: Offline, Reason: "unreachable"}
	cands := func(a1, a2, b1 Health, downSince time.Time) []Candidate {
		return []Candidate{
			{Name: "a1", Site: "dc1", WriterWeight: 100, Health: a1, DownSince: downSince},
			{Name: "a2", Site: "dc1", WriterWeight: 50, Health: a2, DownSince: downSince},
			{Name: "b1", Site: "dc2", WriterWeight: 90, Health: b1},
		}
	}
	never := Failback{Mode: "never"}
	hold := SitePolicy{Preferred: "dc1", HoldDown: 30 * time.Second}
	for _, tc := range []struct {
		name    string
		cands   []Candidate
		current string
		fb      Failback
		sp      SitePolicy
		want    string
		recheck time.Duration
	}{
		{"the writer fails: the other node of its site, not the heavier remote one", cands(down, up, up, now), "a1", never, SitePolicy{}, "a2", 0},
		{"preferred site at start", cands(up, up, up, time.Time{}), "", never, hold, "a1", 0},
		{"the site is gone for 10 s of a 30 s hold-down: no writer yet", cands(down, down, up, now.Add(-10*time.Second)), "a1", never, hold, "", 20 * time.Second},
		{"the site is gone for longer than the hold-down: another site", cands(down, down, up, now.Add(-31*time.Second)), "a1", never, hold, "b1", 0},
		{"no hold-down: another site at once", cands(down, down, up, now), "a1", never, SitePolicy{}, "b1", 0},
		{"away from home and fit, failback never: stays", cands(up, up, up, time.Time{}), "b1", never, hold, "b1", 0},
		{"away from home, failback immediate: back home", cands(up, up, up, time.Time{}), "b1", Failback{Mode: "immediate"}, hold, "a1", 0},
		{"away from home and unfit: back home", cands(up, up, down, time.Time{}), "b1", never, hold, "a1", 0},
		{"home not checked yet at start: wait", cands(Health{State: Offline, Reason: ReasonNotChecked}, Health{State: Offline, Reason: ReasonNotChecked}, up, time.Time{}), "", never, hold, "", 0},
	} {
		got, recheck := ChooseWriterInSites(tc.cands, tc.current, tc.fb, tc.sp, now)
		if got != tc.want || recheck != tc.recheck {
			t.Errorf("%s: got %q (recheck %s), want %q (recheck %s)", tc.name, got, recheck, tc.want, tc.recheck)
		}
	}
}

// TestStaleOnlyAfterBeingSynced: a node that leaves the Primary
// component after serving is Stale (readable with dirty reads); one that
// was never online, or that is Disconnected, is not.
func TestStaleOnlyAfterBeingSynced(t *testing.T) {
	p := Policy{OKChecks: 1}
	cut := synced()
	cut["wsrep_cluster_status"], cut["wsrep_local_state"], cut["wsrep_local_state_comment"] = "non-Primary", "0", "Initialized"
	h := p.Evaluate(Health{}, Sample{Vars: synced()})
	if h.State != Online || !h.Primary || h.Stale {
		t.Fatalf("synced: %+v", h)
	}
	if h = p.Evaluate(h, Sample{Vars: cut}); !h.Stale || h.Primary || h.State != Offline {
		t.Fatalf("cut off after being synced: %+v", h)
	}
	if h = p.Evaluate(h, Sample{Vars: cut}); !h.Stale {
		t.Fatalf("still cut off: %+v", h)
	}
	if never := p.Evaluate(Health{State: Offline, Reason: ReasonNotChecked}, Sample{Vars: cut}); never.Stale {
		t.Errorf("a node never seen synced is Stale: %+v", never)
	}
	alone := synced()
	alone["wsrep_cluster_status"] = "Disconnected"
	if d := p.Evaluate(h, Sample{Vars: alone}); d.Stale {
		t.Errorf("a Disconnected node is Stale: %+v", d)
	}
	if gone := p.Evaluate(h, Sample{Err: errors.New("refused")}); gone.Stale || gone.Primary {
		t.Errorf("an unreachable node is Stale or Primary: %+v", gone)
	}
}

// TestHeldBy: a node counts another in the cluster only while it answers
// from a Primary component whose members list it.
func TestHeldBy(t *testing.T) {
	p := Policy{MaxMissedChecks: 2}
	primary := map[string]string{"wsrep_cluster_status": "Primary", "wsrep_local_state": "4", "wsrep_ready": "ON", "wsrep_connected": "ON",
		"wsrep_incoming_addresses": "10.0.0.1:3306,,10.0.0.2:3306,AUTO"}
	nonPrimary := map[string]string{"wsrep_cluster_status": "non-Primary", "wsrep_incoming_addresses": "10.0.0.1:3306,10.0.0.3:3306"}
	h2 := p.Evaluate(Health{}, Sample{Vars: primary})
	if want := []string{"10.0.0.1:3306", "10.0.0.2:3306"}; !slices.Equal(h2.Members, want) {
		t.Fatalf("members %v, want %v (arbitrator and AUTO entries left out)", h2.Members, want)
	}
	h3 := p.Evaluate(Health{}, Sample{Vars: nonPrimary})
	if h3.Members != nil {
		t.Errorf("a non-Primary node's members are kept: %v", h3.Members)
	}
	gone := p.Evaluate(h2, Sample{Err: errors.New("i/o timeout")})
	cases := []struct {
		name   string
		health map[string]Health
		addr   string
		want   string
	}{
		{"a Primary node lists it", map[string]Health{"n1": {}, "n2": h2, "n3": h3}, "10.0.0.1:3306", "n2"},
		{"only a non-Primary node lists it", map[string]Health{"n1": {}, "n3": h3}, "10.0.0.3:3306", ""},
		{"not listed", map[string]Health{"n2": h2}, "10.0.0.9:3306", ""},
		{"the lister is unreachable now", map[string]Health{"n2": gone}, "10.0.0.1:3306", ""},
		{"a node does not vouch for itself", map[string]Health{"n1": h2}, "10.0.0.1:3306", ""},
	}
	for _, c := range cases {
		if got := HeldBy(c.health, "n1", c.addr); got != c.want {
			t.Errorf("%s: HeldBy = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestWriterOnlyFromAPrimaryComponent: a node takes the writer role only
// on a check that succeeded and found it in a Primary component; a writer
// rides out a missed check (max_missed_checks). The churn of issue 25
// (dc1-1 → dc1-3 → none within 1 ms, dc1-3 non-Primary) came from choosing
// on checks older than the cut: see TestConfirmHold for the monitor's part.
func TestWriterOnlyFromAPrimaryComponent(t *testing.T) {
	now := time.Now()
	up := Health{State: Online, Primary: true}
	missed := Health{State: Online, Missed: 1} // one check failed, max_missed_checks not reached
	nonPrimary := Health{State: Offline, Reason: "non-Primary (wsrep_cluster_status=non-Primary)"}
	c := func(name string, w int, h Health) Candidate { return Candidate{Name: name, WriterWeight: w, Health: h} }
	never := Failback{Mode: "never"}
	for _, tc := range []struct {
		name    string
		cands   []Candidate
		current string
		want    string
	}{
		{"the writer left the Primary component; the next node's latest check failed", []Candidate{c("dc1-1", 100, nonPrimary), c("dc1-3", 90, missed), c("dc2-1", 10, up)}, "dc1-1", "dc2-1"},
		{"no node known in a Primary component: no writer, writes wait", []Candidate{c("dc1-1", 100, nonPrimary), c("dc1-3", 90, missed)}, "dc1-1", ""},
		{"nor at start", []Candidate{c("n1", 100, missed), c("n2", 50, up)}, "", "n2"},
		{"a writer that missed one check keeps the role (max_missed_checks)", []Candidate{c("n1", 100, missed), c("n2", 50, up)}, "n1", "n1"},
		{"its next check succeeds: chosen", []Candidate{c("dc1-1", 100, nonPrimary), c("dc1-3", 90, up)}, "dc1-1", "dc1-3"},
	} {
		if got := ChooseWriter(tc.cands, tc.current, never, now); got != tc.want {
			t.Errorf("ChooseWriter: %s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	// Sites: the home site's other node missed its latest check; with no
	// hold-down the role must not cross to the other site meanwhile.
	sites := []Candidate{
		{Name: "a1", Site: "dc1", WriterWeight: 100, Health: nonPrimary, DownSince: now},
		{Name: "a2", Site: "dc1", WriterWeight: 50, Health: missed},
		{Name: "b1", Site: "dc2", WriterWeight: 90, Health: up},
	}
	if got, _ := ChooseWriterInSites(sites, "a1", never, SitePolicy{Preferred: "dc1"}, now); got != "" {
		t.Errorf("home node missed a check: got %q, want no writer until its next check", got)
	}
	sites[1].Health = up
	if got, _ := ChooseWriterInSites(sites, "a1", never, SitePolicy{Preferred: "dc1"}, now); got != "a2" {
		t.Errorf("home node checked again: got %q, want a2", got)
	}
}

// TestConfirmHold: a node's departure from the Primary component is held
// back until every other node that is not OFFLINE has been checked since
// (checks that started before do not count), or until the hold's bound.
func TestConfirmHold(t *testing.T) {
	t0 := time.Now()
	health := map[string]Health{
		"dc1-1": {State: Offline, Reason: "non-Primary"},
		"dc1-3": {State: Online, Primary: true},
		"dc2-1": {State: Online, Primary: true},
		"dc2-2": {State: Offline, Reason: "unreachable"},
		"dc2-3": {State: Online, Missed: 1}, // not electable until it answers again
	}
	h := confirmHold{max: time.Second}
	if !h.done(t0) || h.timer() != nil {
		t.Fatal("a hold before any departure")
	}
	kick := h.begin("dc1-1", health, t0)
	slices.Sort(kick)
	if !slices.Equal(kick, []string{"dc1-3", "dc2-1"}) {
		t.Errorf("checked at once: %v, want the others not OFFLINE that answered their latest check", kick)
	}
	if h.done(t0) || h.timer() == nil {
		t.Fatal("not held")
	}
	h.seen("dc1-3", t0.Add(-time.Millisecond)) // started before the departure
	h.seen("dc2-1", t0.Add(time.Millisecond))
	if h.done(t0.Add(5 * time.Millisecond)) {
		t.Error("published before dc1-3's check since the departure")
	}
	// dc2-1 leaves too while held: dc1-3 is awaited again, from then.
	h.begin("dc2-1", health, t0.Add(6*time.Millisecond))
	h.seen("dc1-3", t0.Add(3*time.Millisecond))
	if h.done(t0.Add(7 * time.Millisecond)) {
		t.Error("a check of dc1-3 from before dc2-1's departure counted")
	}
	h.seen("dc1-3", t0.Add(8*time.Millisecond))
	h.seen("dc1-1", t0.Add(8*time.Millisecond))
	if !h.done(t0.Add(9*time.Millisecond)) || h.timer() != nil {
		t.Error("still held with every check in")
	}
	// Bounded: a node that never answers holds nothing past max.
	h.begin("dc1-1", health, t0.Add(time.Second))
	if h.done(t0.Add(1500*time.Millisecond)) || !h.done(t0.Add(2001*time.Millisecond)) {
		t.Error("the hold is not bounded by max")
	}
}

// TestUnreachableReasonHoldsStill: the reason of an unreachable node
// (and so its one node_state event) does not change with every further
// missed check; the running count is Health.Missed.
func TestUnreachableReasonHoldsStill(t *testing.T) {
	p := Policy{OKChecks: 1, MaxMissedChecks: 2}
	h := p.Evaluate(Health{}, Sample{Vars: synced()})
	if !h.Primary || h.Missed != 0 {
		t.Fatalf("synced: %+v", h)
	}
	timeout := Sample{Err: errors.New("dial tcp 10.0.0.1:3306: i/o timeout")}
	var reasons []string
	for range 5 {
		h = p.Evaluate(h, timeout)
		reasons = append(reasons, h.Reason)
	}
	if h.Missed != 5 || h.Primary || h.State != Offline {
		t.Fatalf("after 5 misses: %+v", h)
	}
	want := "unreachable after 2 missed checks (dial tcp 10.0.0.1:3306: i/o timeout)"
	for i, r := range reasons[1:] {
		if r != want {
			t.Errorf("miss %d: reason %q, want %q", i+2, r, want)
		}
	}
}

// TestDialFailed: a check that cannot open the connection marks the node
// out of network reach; one that connects and gets no answer (a hung or
// stopped process) does not.
func TestDialFailed(t *testing.T) {
	p := Policy{MaxMissedChecks: 1}
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("i/o timeout")}
	read := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("i/o timeout")}
	if h := p.Evaluate(Health{}, Sample{Err: dial}); !h.DialFailed || h.State != Offline {
		t.Errorf("dial timeout: %+v, want DialFailed and OFFLINE", h)
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	if h := p.Evaluate(Health{}, Sample{Err: refused}); h.DialFailed {
		t.Errorf("a refused connection (the process died) counted as out of reach: %+v", h)
	}
	if h := p.Evaluate(Health{}, Sample{Err: read}); h.DialFailed {
		t.Errorf("read timeout on an open connection counted as out of reach: %+v", h)
	}
	h := p.Evaluate(Health{}, Sample{Err: dial})
	if h = p.Evaluate(h, Sample{Vars: synced()}); h.DialFailed {
		t.Error("DialFailed kept after a good check")
	}
}
