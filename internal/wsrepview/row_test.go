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
	sites := Sites(rows)
	if len(sites) != 2 || sites[0].Name != "segment 0" || len(sites[0].Rows) != 2 || sites[0].Primary != 1 || sites[0].ReplLatencyMax != 0.031 {
		t.Fatalf("sites %+v", sites)
	}
	if len(sites[1].Delayed) != 1 || !strings.Contains(sites[1].Line(), "delayed: a1") {
		t.Errorf("segment 1: %s", sites[1].Line())
	}
	for i := range rows {
		rows[i].Site = "dc1"
	}
	if Sites(rows) != nil {
		t.Error("one site: grouped anyway")
	}
}
