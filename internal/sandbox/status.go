package sandbox

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
)

// NodeStatus is one member's process and Galera state: a data node, or
// an arbitrator (Role "arbitrator": its address is its group port, and
// its state comes from its own log, garbd having no SQL to ask).
type NodeStatus struct {
	Node
	Role          string `json:"role"` // data, arbitrator
	PID           int    `json:"pid"`
	Process       string `json:"process"` // running, paused, stopped
	State         string `json:"state,omitempty"`
	ClusterStatus string `json:"cluster_status,omitempty"`
	ClusterSize   string `json:"cluster_size,omitempty"`
	Error         string `json:"error,omitempty"`
}

// Status reports every data node, then every arbitrator. A node that
// does not answer shows its error.
func (sb *Sandbox) Status(ctx context.Context) []NodeStatus {
	out := make([]NodeStatus, 0, len(sb.Nodes)+len(sb.Arbitrators))
	for _, n := range sb.Nodes {
		ns := NodeStatus{Node: n, Role: "data", PID: sb.pid(n)}
		ns.Process = processLabel(ns.PID)
		if ns.Process == "running" {
			st, err := sb.wsrepStatus(ctx, n)
			if err != nil {
				ns.Error = err.Error()
			} else {
				ns.State = st["wsrep_local_state_comment"]
				ns.ClusterStatus = st["wsrep_cluster_status"]
				ns.ClusterSize = st["wsrep_cluster_size"]
			}
		}
		out = append(out, ns)
	}
	for _, r := range sb.Replicas {
		ns := NodeStatus{Node: r, Role: "replica", PID: sb.pid(r)}
		ns.Process = processLabel(ns.PID)
		if ns.Process == "running" {
			// Its source and lag: galeon status (from its agent).
			ns.State = "asynchronous replica"
		}
		out = append(out, ns)
	}
	return append(out, sb.ArbitratorStatus()...)
}

// ArbitratorStatus reports every arbitrator: its process, and the last
// component it logged (Primary or not, and its size) while it runs.
func (sb *Sandbox) ArbitratorStatus() []NodeStatus {
	out := make([]NodeStatus, 0, len(sb.Arbitrators))
	for _, a := range sb.Arbitrators {
		ns := NodeStatus{Node: Node{Name: a.Name, Site: a.Site, Host: a.Host, Port: a.Port, Segment: a.Segment, Weight: a.Weight},
			Role: "arbitrator", PID: sb.arbPidOf(a)}
		ns.Process = processLabel(ns.PID)
		if ns.PID != 0 {
			c := lastComponent(logTail(sb.arbLog(a), 64<<10))
			ns.State, ns.ClusterStatus, ns.ClusterSize = "arbitrator", c.status, c.size
			if c.status == "" {
				ns.State = "arbitrator, joining"
			}
		}
		out = append(out, ns)
	}
	return out
}

func processLabel(pid int) string {
	switch {
	case pid == 0:
		return "stopped"
	case processState(pid) == "T":
		return "paused"
	}
	return "running"
}

// logTail returns the last max bytes of the file at path.
func logTail(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// componentLine is how Galera logs each new component it is part of:
// "New COMPONENT: primary = yes, bootstrap = no, my_idx = 1, memb_num = 3".
var componentLine = regexp.MustCompile(`New COMPONENT: primary = (yes|no), bootstrap = \w+, my_idx = -?\d+, memb_num = (\d+)`)

// logComponent is the last component a member logged.
type logComponent struct{ status, size string }

// lastComponent finds the last component a garbd log reports:
// ("Primary"|"non-Primary", its size), empty if none yet.
func lastComponent(log string) logComponent {
	m := componentLine.FindAllStringSubmatch(log, -1)
	if len(m) == 0 {
		return logComponent{}
	}
	last := m[len(m)-1]
	status := "non-Primary"
	if strings.EqualFold(last[1], "yes") {
		status = "Primary"
	}
	return logComponent{status: status, size: last[2]}
}
