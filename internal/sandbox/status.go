package sandbox

import "context"

// NodeStatus is one node's process and Galera state.
type NodeStatus struct {
	Node
	PID           int    `json:"pid"`
	Process       string `json:"process"` // running, paused, stopped
	State         string `json:"state,omitempty"`
	ClusterStatus string `json:"cluster_status,omitempty"`
	ClusterSize   string `json:"cluster_size,omitempty"`
	Error         string `json:"error,omitempty"`
}

// Status reports every node. A node that does not answer shows its error.
func (sb *Sandbox) Status(ctx context.Context) []NodeStatus {
	out := make([]NodeStatus, 0, len(sb.Nodes))
	for _, n := range sb.Nodes {
		ns := NodeStatus{Node: n, PID: sb.pid(n), Process: "stopped"}
		if ns.PID != 0 {
			ns.Process = "running"
			if processState(ns.PID) == "T" {
				ns.Process = "paused"
			}
		}
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
	return out
}
