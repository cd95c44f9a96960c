package replica

import (
	"strings"
	"testing"
)

func pos(t *testing.T, s string) Position {
	t.Helper()
	p, err := ParsePosition(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParsePosition(t *testing.T) {
	p := pos(t, "0-1-100, 7-3-5")
	if p.Seqno(0) != 100 || p.Seqno(7) != 5 || p.Seqno(9) != 0 || p[7].Server != 3 {
		t.Errorf("parsed %v", p)
	}
	if len(pos(t, "")) != 0 {
		t.Error("empty position is not empty")
	}
	for _, bad := range []string{"0-1", "a-1-2", "0-1-2,0-1-3", "1-2-3-4", "-1-2-3"} {
		if _, err := ParsePosition(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if !pos(t, "5-1-10,6-2-3").Covers(pos(t, "5-9-10,8-1-100"), 5) || pos(t, "5-1-9").Covers(pos(t, "5-1-10"), 5) {
		t.Error("Covers compares the seqno in the domain, nothing else")
	}
}

func TestStep(t *testing.T) {
	base := Input{Target: "10.0.0.2:3306", TargetNode: "node2", TargetKnown: true, Domain: 5,
		Source: "10.0.0.2:3306", IORunning: true, SQLRunning: true}
	with := func(f func(*Input)) Input { in := base; f(&in); return in }
	for _, c := range []struct {
		what string
		in   Input
		act  Action
		to   string
		why  string
	}{
		{"on the writer, running", base, Keep, "", "replicating from node2"},
		{"no writer published", with(func(i *Input) { i.Target, i.TargetNode = "", "" }), Keep, "", "stays on 10.0.0.2:3306"},
		{"nothing set up, no writer", with(func(i *Input) { i.Target, i.Source = "", "" }), Keep, "", "nothing to follow"},
		{"threads stopped cleanly", with(func(i *Input) { i.IORunning, i.SQLRunning = false, false }), Start, "10.0.0.2:3306", "start it"},
		{"reading stopped on an error", with(func(i *Input) { i.IORunning, i.IOError = false, "error reconnecting" }), Start, "10.0.0.2:3306", "error reconnecting"},
		{"applying stopped on an error", with(func(i *Input) { i.SQLRunning, i.SQLError = false, "Duplicate entry" }), Keep, "", "look at the data"},
		{"the writer moved: stop first", with(func(i *Input) { i.Source = "10.0.0.1:3306" }), Stop, "10.0.0.2:3306", "stopping replication from 10.0.0.1:3306"},
		{"the writer moved, stopped, the new one has it all", with(func(i *Input) {
			i.Source, i.IORunning, i.SQLRunning = "10.0.0.1:3306", false, false
			i.SlavePos, i.TargetPos = Position{5: {5, 1, 40}}, Position{5: {5, 1, 40}, 9: {9, 2, 1}}
		}), Repoint, "10.0.0.2:3306", "moving from 10.0.0.1:3306 at 40"},
		{"the writer moved, stopped, the new one lags", with(func(i *Input) {
			i.Source, i.IORunning, i.SQLRunning = "10.0.0.1:3306", false, false
			i.SlavePos, i.TargetPos = Position{5: {5, 1, 41}}, Position{5: {5, 1, 40}}
		}), Wait, "10.0.0.2:3306", "logged up to 40 in domain 5, the replica has applied 41"},
		{"another domain does not count", with(func(i *Input) {
			i.Source, i.IORunning, i.SQLRunning = "10.0.0.1:3306", false, false
			i.SlavePos, i.TargetPos = Position{5: {5, 1, 40}, 11: {11, 1, 900}}, Position{5: {5, 1, 40}}
		}), Repoint, "10.0.0.2:3306", ""},
		{"the new writer's position unknown", with(func(i *Input) {
			i.Source, i.IORunning, i.SQLRunning, i.TargetKnown = "10.0.0.1:3306", false, false, false
		}), Wait, "10.0.0.2:3306", "not published"},
		{"first setup", with(func(i *Input) { i.Source, i.IORunning, i.SQLRunning = "", false, false }), Repoint, "10.0.0.2:3306", "from nowhere"},
		{"the old source died: reading stopped, applying stops before the move", with(func(i *Input) {
			i.Source, i.IORunning, i.IOError = "10.0.0.1:3306", false, "Lost connection"
		}), Stop, "10.0.0.2:3306", ""},
		{"the new writer is not a safe source", with(func(i *Input) {
			i.Source, i.TargetProblems = "10.0.0.1:3306", []string{"log_slave_updates is OFF"}
		}), Keep, "", "node2 is not a safe source, so the replica stays on 10.0.0.1:3306: log_slave_updates is OFF"},
		{"the writer's agent is down", with(func(i *Input) { i.Target, i.TargetNode, i.Missing = "", "", "node2" }), Keep, "", "node2 is not registered"},
		{"a data error is never moved past", with(func(i *Input) {
			i.Source, i.SQLRunning, i.SQLError = "10.0.0.1:3306", false, "Duplicate entry"
		}), Keep, "", "look at the data"},
	} {
		d := Step(c.in)
		if d.Action != c.act || d.To != c.to || !strings.Contains(d.Why, c.why) {
			t.Errorf("%s: %+v, want %s to %q saying %q", c.what, d, c.act, c.to, c.why)
		}
	}
}

func TestCheckSource(t *testing.T) {
	good := map[string]string{"log_bin": "ON", "log_slave_updates": "ON", "wsrep_gtid_mode": "ON", "wsrep_gtid_domain_id": "5", "gtid_domain_id": "101", "binlog_format": "ROW"}
	if p := CheckSource(good); len(p) != 0 {
		t.Errorf("a good node: %v", p)
	}
	for k, v := range map[string]string{"log_bin": "OFF", "log_slave_updates": "OFF", "wsrep_gtid_mode": "OFF", "binlog_format": "STATEMENT", "gtid_domain_id": "5"} {
		bad := map[string]string{}
		for a, b := range good {
			bad[a] = b
		}
		bad[k] = v
		if p := CheckSource(bad); len(p) != 1 || !strings.Contains(p[0], k) {
			t.Errorf("%s = %s: %v, want one problem naming it", k, v, p)
		}
	}
	if p := CheckCluster(map[string]map[string]string{"node1": good, "node2": good}); p != nil {
		t.Errorf("one domain: %v", p)
	}
	other := map[string]string{"wsrep_gtid_domain_id": "6"}
	if p := CheckCluster(map[string]map[string]string{"node1": good, "node2": good, "node3": other}); len(p) != 1 || !strings.Contains(p[0], "5 on node1, node2; 6 on node3") {
		t.Errorf("two domains: %v", p)
	}
}
