package wsrepview

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func sample(t time.Time, kv ...string) Sample {
	s := Sample{Node: "n1", Time: t, Vars: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Vars[kv[i]] = kv[i+1]
	}
	return s
}

func TestComputeRatesAndDeltas(t *testing.T) {
	t0 := time.Unix(1000, 0)
	prev := sample(t0, "wsrep_replicated", "100", "wsrep_replicated_bytes", "10000", "wsrep_received", "50",
		"wsrep_flow_control_paused_ns", "0", "wsrep_flow_control_sent", "3", "wsrep_local_cert_failures", "1", "wsrep_local_bf_aborts", "0")
	cur := sample(t0.Add(2*time.Second), "wsrep_replicated", "300", "wsrep_replicated_bytes", "30000", "wsrep_received", "60",
		"wsrep_flow_control_paused_ns", "500000000", "wsrep_flow_control_sent", "5", "wsrep_local_cert_failures", "4", "wsrep_local_bf_aborts", "2",
		"wsrep_cluster_status", "Primary", "wsrep_cluster_size", "3", "wsrep_local_state_comment", "Synced",
		"wsrep_last_committed", "1200", "wsrep_local_cached_downto", "200", "wsrep_apply_oooe", "0.25")
	r := Compute(&prev, cur)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"out msgs/s", r.OutMsgsPerSec, 100}, {"out bytes/s", r.OutBytesPerSec, 10000}, {"in msgs/s", r.InMsgsPerSec, 5},
		{"fc paused", r.FCPaused, 0.25}, {"fc sent", float64(r.FCSent), 2}, {"cert failures", float64(r.CertFailures), 3},
		{"bf aborts", float64(r.BFAborts), 2}, {"ist window", float64(r.ISTWindow), 1000}, {"apply eff", r.ApplyEfficiency, 25},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !r.Rates || !r.Up || r.Size != 3 {
		t.Errorf("row %+v", r)
	}
	if line := r.Line(); !strings.Contains(line, " P ") || !strings.Contains(line, "Synced") {
		t.Errorf("line %q", line)
	}
	// A first sample has no rates; a counter reset is not a negative rate.
	if first := Compute(nil, cur); first.Rates || !strings.Contains(first.Line(), " - ") {
		t.Errorf("first sample shows rates: %q", first.Line())
	}
	reset := sample(t0.Add(4*time.Second), "wsrep_replicated", "10")
	if r := Compute(&cur, reset); r.OutMsgsPerSec != 5 {
		t.Errorf("after a counter reset: %v msgs/s, want 10 over 2 s", r.OutMsgsPerSec)
	}
}

func TestDownNodeAndShortState(t *testing.T) {
	r := Compute(nil, Sample{Node: "n3", Time: time.Now(), Err: errors.New("connection refused")})
	if r.Up || !strings.Contains(r.Line(), "DOWN  connection refused") {
		t.Errorf("down node line %q", r.Line())
	}
	for in, want := range map[string]string{
		"Synced": "Synced", "Donor/Desynced": "Donor", "Joining: receiving State Transfer": "Join:SST-rx",
		"Joining: preparing for State Transfer": "Join:prep", "Joined": "Joined", "Initialized": "Init",
	} {
		if got := ShortState(in); got != want {
			t.Errorf("ShortState(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSitesGroupNodes: rows group by site (by segment when the site is
// unknown), with the group latency and delayed members of each; one
// group is no grouping.
func TestSitesGroupNodes(t *testing.T) {
	at := time.Now()
	mk := func(node, site, seg, lat, delayed string) Row {
		return Compute(nil, Sample{Node: node, Time: at, Vars: map[string]string{
			"wsrep_cluster_status": "Primary", "wsrep_gmcast_segment": seg,
			"wsrep_evs_repl_latency": lat, "wsrep_evs_delayed": delayed}})
	}
	rows := []Row{
		mk("a1", "", "0", "0.001/0.031/0.040/0.002/10", ""),
		mk("b1", "", "1", "0.001/0.029/0.035/0.002/10", "a1:tcp://10.0.0.1:4567:1"),
		mk("a2", "", "0", "0/0/0/0/0", ""),
	}
	rows[2].Up, rows[2].ClusterStatus = false, ""
	sites := Sites(rows, nil)
	if l := sites[0].Line(); !strings.HasPrefix(l, "── segment 0: ") {
		t.Errorf("grouped by segment: %q", l)
	}
	if len(sites) != 2 || sites[0].Name != "segment 0" || len(sites[0].Rows) != 2 || sites[0].Primary != 1 || sites[0].ReplLatency == nil || *sites[0].ReplLatency != 0.031 {
		t.Fatalf("sites %+v", sites)
	}
	if len(sites[1].Delayed) != 1 || !strings.Contains(sites[1].Line(), "delayed: a1") {
		t.Errorf("segment 1: %s", sites[1].Line())
	}
	if l := sites[0].Line(); !strings.Contains(l, "repl latency 31.0 ms ·") || !strings.Contains(l, "write-sets replicated") {
		t.Errorf("segment 0: %s", l)
	}
	for i := range rows {
		rows[i].Site = "dc1"
	}
	if Sites(rows, nil) != nil {
		t.Error("one site: grouped anyway")
	}
	// An arbitrator's site is a group of its own, and it counts.
	arbs := []ArbitratorRow{{Name: "dc3-garbd", Site: "dc3", Segment: 2, Process: "running", ClusterStatus: "Primary", Size: 3, Time: at}}
	sites = Sites(rows, arbs)
	if len(sites) != 2 || sites[1].Name != "dc3" || sites[1].Arbitrators != 1 || sites[1].Primary != 1 || len(sites[1].ArbRows) != 1 {
		t.Fatalf("sites with an arbitrator: %+v", sites)
	}
	if l := sites[1].Line(); !strings.Contains(l, "dc3 (segment 2): arbitrator only, 1 of 1 Primary") {
		t.Errorf("arbitrator site: %s", l)
	}
	if l := arbs[0].Line(); !strings.Contains(l, "dc3-garbd") || !strings.Contains(l, " P ") || !strings.Contains(l, "arbitrator (garbd)") {
		t.Errorf("arbitrator line: %s", l)
	}
	arbs[0].Process = "stopped"
	if l := arbs[0].Line(); !strings.Contains(l, "STOPPED") {
		t.Errorf("stopped arbitrator line: %s", l)
	}
}

// TestNonPrimaryConfID: outside a Primary component Galera reports
// conf_id 2^64-1; the view shows "-", not 9223372036854775807.
func TestNonPrimaryConfID(t *testing.T) {
	for _, c := range []struct {
		status, v string
		want      int64
	}{
		{"Primary", "7", 7}, {"non-Primary", "18446744073709551615", -1}, {"Primary", "18446744073709551615", -1},
		{"Disconnected", "0", -1}, {"Primary", "", -1},
	} {
		if got := ConfID(c.status, c.v); got != c.want {
			t.Errorf("ConfID(%q, %q) = %d, want %d", c.status, c.v, got, c.want)
		}
	}
	r := Compute(nil, sample(time.Now(), "wsrep_cluster_status", "non-Primary", "wsrep_cluster_conf_id", "18446744073709551615", "wsrep_cluster_size", "1"))
	if line := r.Line(); strings.Contains(line, "922337") || !strings.Contains(line, " N    - ") {
		t.Errorf("non-Primary line %q", line)
	}
}

// TestReplLatencyKeepsTheLastMeasure: an empty window (0 samples) is
// not a latency of 0: the row keeps the last measured value and when.
func TestReplLatencyKeepsTheLastMeasure(t *testing.T) {
	if _, _, n := ParseReplLatency("0/0/0/0/0"); n != 0 {
		t.Errorf("empty window: %d samples", n)
	}
	if avg, mx, n := ParseReplLatency("0.030/0.040/0.050/0.002/12"); avg != 0.040 || mx != 0.050 || n != 12 {
		t.Errorf("parse: %v %v %v", avg, mx, n)
	}
	t0 := time.Unix(1000, 0)
	first := Compute(nil, sample(t0, "wsrep_cluster_status", "Primary", "wsrep_evs_repl_latency", "0.030/0.040/0.050/0.002/12"))
	empty := CarryLatency(Compute(nil, sample(t0.Add(5*time.Second), "wsrep_cluster_status", "Primary", "wsrep_evs_repl_latency", "0/0/0/0/0")), &first)
	if empty.ReplLatencyAt == nil || !empty.ReplLatencyAt.Equal(t0) || empty.ReplLatencyAvg != 0.040 {
		t.Fatalf("carried latency %+v", empty)
	}
	s := Sites([]Row{empty, {Node: "b", Site: "dc2", Up: true}}, nil)
	if l := s[0].Line(); !strings.Contains(l, "repl latency 40.0 ms, 5s ago") {
		t.Errorf("site line %q", l)
	}
	if l := s[1].Line(); !strings.Contains(l, "repl latency - ") {
		t.Errorf("never measured: %q", l)
	}
	// A lone member's self-delivery is microseconds, not 0.
	lone := Compute(nil, sample(t0, "wsrep_cluster_status", "non-Primary", "wsrep_evs_repl_latency", "0.0000035/0.0000035/0.0000035/0/1"))
	lone.Site = "dc1"
	if l := Sites([]Row{lone, {Node: "b", Site: "dc2", Up: true}}, nil)[0].Line(); !strings.Contains(l, "repl latency 0.004 ms") {
		t.Errorf("lone member: %q", l)
	}
	never := CarryLatency(Compute(nil, sample(t0, "wsrep_evs_repl_latency", "0/0/0/0/0")), nil)
	if never.ReplLatencyAt != nil {
		t.Errorf("never measured, yet %+v", never.ReplLatencyAt)
	}
}

// TestArbitratorsFromIncomingAddresses: garbd is a member without a
// client address.
func TestArbitratorsFromIncomingAddresses(t *testing.T) {
	for _, c := range []struct {
		in   string
		size int64
		want int
	}{
		{"172.30.166.11:14601,172.30.166.12:14602,", 3, 1},
		{"a:1,b:2", 2, 0},
		{"a:1,b:2,", 2, -1}, // a view being installed
		{"", 0, -1},
	} {
		if _, got := Arbitrators(c.in, c.size); got != c.want {
			t.Errorf("Arbitrators(%q, %d) = %d, want %d", c.in, c.size, got, c.want)
		}
	}
	r := Compute(nil, sample(time.Now(), "wsrep_cluster_status", "Primary", "wsrep_cluster_size", "3",
		"wsrep_incoming_addresses", "172.30.166.11:14601,172.30.166.12:14602,"))
	r.Node = "dc1-1"
	if u := Unnamed([]Row{r}); !strings.Contains(u, "1 arbitrator") || !strings.Contains(u, "dc1-1 (3 members)") {
		t.Errorf("unnamed: %q", u)
	}
}

func TestDurability(t *testing.T) {
	rows := []Row{
		{Node: "node1", Up: true, DurabilityRisk: "innodb_flush_log_at_trx_commit=2: x"},
		{Node: "node2", Up: true},
		{Node: "node3", Up: true, DurabilityRisk: "innodb_flush_log_at_trx_commit=2: x"},
		{Node: "node4", Up: false, DurabilityRisk: "stale"},
	}
	got := Durability(rows)
	if len(got) != 1 || got[0] != "── durability: node1, node3: innodb_flush_log_at_trx_commit=2: x" {
		t.Errorf("Durability = %q", got)
	}
	if Durability(rows[1:2]) != nil {
		t.Error("a node without a risk gets no line")
	}
}
