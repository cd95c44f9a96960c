package proxy

import (
	"time"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/galera"
)

// This file is what operators watch during an incident: the monitor's
// latest check of every node (galera_checks), the log of routing changes
// (events) and the proxy's own outcome counters (stats_galeon), in admin
// SQL and in /metrics.

// checkColumns are the wsrep figures galera_checks shows, as column name
// and the status or variable it comes from.
var checkColumns = []struct{ col, v string }{
	{"local_state", "wsrep_local_state_comment"}, {"cluster_status", "wsrep_cluster_status"},
	{"cluster_size", "wsrep_cluster_size"}, {"conf_id", "wsrep_cluster_conf_id"},
	{"local_index", "wsrep_local_index"}, {"recv_queue", "wsrep_local_recv_queue"},
	{"fc_paused", "wsrep_flow_control_paused"}, {"last_committed", "wsrep_last_committed"},
	{"desync", "wsrep_desync"}, {"reject_queries", "wsrep_reject_queries"},
	{"donor_rejects_queries", "wsrep_sst_donor_rejects_queries"}, {"sst_method", "wsrep_sst_method"},
	{"read_only", "read_only"}, {"pxc_maint_mode", "pxc_maint_mode"}, {"cluster_uuid", "wsrep_cluster_state_uuid"},
	{"cert_failures", "wsrep_local_cert_failures"}, {"fc_paused_ns", "wsrep_flow_control_paused_ns"},
}

func (p *Proxy) checksTable() admin.Table {
	cols := []admin.Column{
		{Name: "name", Kind: admin.Text}, {Name: "state", Kind: admin.Text}, {Name: "reason", Kind: admin.Text},
		{Name: "last_check", Kind: admin.Text}, {Name: "check_us", Kind: admin.Int},
		{Name: "missed_checks", Kind: admin.Int}, {Name: "error", Kind: admin.Text}, {Name: "segment", Kind: admin.Int},
	}
	for _, c := range checkColumns {
		cols = append(cols, admin.Column{Name: c.col, Kind: admin.Text})
	}
	return admin.Table{
		Name: "galera_checks", Columns: cols,
		Rows: func() [][]any {
			var out [][]any
			for _, c := range p.GaleraChecks() {
				row := []any{c.Node, c.Health.State.String(), c.Health.Reason, c.At.UTC().Format(time.RFC3339Nano),
					c.Latency.Microseconds(), int64(c.Health.Missed), c.Err, int64(c.Health.Segment)}
				for _, k := range checkColumns {
					if v, ok := c.Vars[k.v]; ok {
						row = append(row, v)
					} else {
						row = append(row, nil)
					}
				}
				out = append(out, row)
			}
			return out
		},
	}
}

// GaleraChecks returns the monitor's latest check of every node, or
// nothing when the Galera monitor is off.
func (p *Proxy) GaleraChecks() []galera.Check {
	if p.galera.monitor == nil {
		return nil
	}
	return p.galera.monitor.Checks()
}

// Events returns the kept routing events, newest first.
func (p *Proxy) Events() []Event { return p.events.list() }

func (p *Proxy) eventsTable() admin.Table {
	return admin.Table{
		Name: "events",
		Columns: []admin.Column{{Name: "id", Kind: admin.Int}, {Name: "time", Kind: admin.Text},
			{Name: "kind", Kind: admin.Text}, {Name: "node", Kind: admin.Text}, {Name: "detail", Kind: admin.Text}},
		Rows: func() [][]any {
			var out [][]any
			for _, e := range p.Events() {
				out = append(out, []any{e.ID, e.At.UTC().Format(time.RFC3339Nano), e.Kind, e.Node, e.Detail})
			}
			return out
		},
	}
}

// countersTable shows the proxy's outcome counters.
func (p *Proxy) countersTable() admin.Table {
	return admin.Table{
		Name:    "stats_galeon",
		Columns: []admin.Column{{Name: "variable_name", Kind: admin.Text}, {Name: "variable_value", Kind: admin.Int}, {Name: "description", Kind: admin.Text}},
		Rows: func() [][]any {
			c := &p.counts
			return [][]any{
				{"read_retries", c.readRetries.Load(), "Autocommit reads retried on another node after theirs failed before answering."},
				{"wsrep_not_ready_retries", c.notReadyRetries.Load(), "Statements a node refused with 1047 (WSREP not ready), re-sent elsewhere."},
				{"aborted_writer_changed", c.abortedWriterChanged.Load(), "Transactions or statements ended with 9002 because the writer role moved."},
				{"backend_lost", c.backendLost.Load(), "Statements ended with 9003 because their node's connection broke."},
				{"writer_changes", c.writerChanges.Load(), "Completed writer switches."},
				{"causal_reads", c.causalReads.Load(), "Reads made causal (wsrep_sync_wait) so that their session read its own write."},
				{"degraded_writer_decisions", c.degradedDecisions.Load(), "Writer changes this proxy made alone while the control plane was unreachable."},
				{"client_connections", p.clients.Load(), "Client sessions connected now."},
				{"client_connections_total", p.clientsTotal.Load(), "Client connections accepted."},
			}
		},
	}
}
