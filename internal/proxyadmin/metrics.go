package proxyadmin

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/metrics"
	"github.com/galeon-db/galeon/internal/proxy"
)

// Collectors are a proxy's Prometheus collectors: its histograms and the
// samples Metrics reads at each scrape.
func Collectors(p *proxy.Proxy) []prometheus.Collector {
	return append([]prometheus.Collector{metrics.Func(func() []metrics.Sample { return Metrics(p) })}, p.Histograms()...)
}

// Metrics returns the Prometheus view of a proxy.
func Metrics(p *proxy.Proxy) []metrics.Sample {
	c := counterValues(p)
	ms := []metrics.Sample{
		{Name: "galeon_client_connections", Help: "Client sessions connected now.", Type: metrics.Gauge, Value: float64(c["client_connections"])},
		{Name: "galeon_client_connections_total", Help: "Client connections accepted.", Type: metrics.Counter, Value: float64(c["client_connections_total"])},
	}
	snap := p.View().Load()
	w, _ := snap.Writer()
	ms = append(ms, metrics.Sample{Name: "galeon_writer_epoch", Help: "Epoch of the current writer: it grows by one at every writer change.", Type: metrics.Gauge, Value: float64(snap.Epoch)})
	online := map[string]bool{}
	for _, s := range snap.Servers {
		online[s.Name] = s.Online
	}
	for _, r := range p.PoolStats() {
		l := map[string]string{"server": r.Server}
		with := func(k, v string) map[string]string {
			m := map[string]string{"server": r.Server, k: v}
			return m
		}
		up, isWriter, drain := 0.0, 0.0, 0.0
		if online[r.Server] {
			up = 1
		}
		if p.OperatorDrained(r.Server) {
			drain = 1
		}
		if r.Server == w.Name {
			isWriter = 1
		}
		ms = append(ms,
			metrics.Sample{Name: "galeon_server_online", Help: "1 if the node takes traffic.", Type: metrics.Gauge, Labels: l, Value: up},
			metrics.Sample{Name: "galeon_server_writer", Help: "1 for the node that takes writes.", Type: metrics.Gauge, Labels: l, Value: isWriter},
			metrics.Sample{Name: "galeon_server_drained", Help: "1 while an operator drains the node (admin_state 'drain').", Type: metrics.Gauge, Labels: l, Value: drain},
			metrics.Sample{Name: "galeon_backend_connections", Help: "Backend connections by state.", Type: metrics.Gauge, Labels: with("state", "used"), Value: float64(r.ConnUsed)},
			metrics.Sample{Name: "galeon_backend_connections", Help: "Backend connections by state.", Type: metrics.Gauge, Labels: with("state", "free"), Value: float64(r.ConnFree)},
			metrics.Sample{Name: "galeon_backend_connects_total", Help: "Backend connection attempts by result.", Type: metrics.Counter, Labels: with("result", "ok"), Value: float64(r.ConnOK)},
			metrics.Sample{Name: "galeon_backend_connects_total", Help: "Backend connection attempts by result.", Type: metrics.Counter, Labels: with("result", "error"), Value: float64(r.ConnERR)},
			metrics.Sample{Name: "galeon_backend_queries_total", Help: "Statements sent to the node.", Type: metrics.Counter, Labels: l, Value: float64(r.Queries)},
			metrics.Sample{Name: "galeon_backend_sent_bytes_total", Help: "Bytes of commands sent to the node.", Type: metrics.Counter, Labels: l, Value: float64(r.BytesSent)},
			metrics.Sample{Name: "galeon_backend_received_bytes_total", Help: "Bytes of responses relayed from the node.", Type: metrics.Counter, Labels: l, Value: float64(r.BytesRecv)},
			metrics.Sample{Name: "galeon_backend_latency_seconds", Help: "Last health-check round trip.", Type: metrics.Gauge, Labels: l, Value: float64(r.LatencyUs) / 1e6},
		)
	}
	return append(ms, observeMetrics(p, c)...)
}

// counterValues are the proxy's counters by name.
func counterValues(p *proxy.Proxy) map[string]int64 {
	out := map[string]int64{}
	for _, c := range p.Counters() {
		out[c.Name] = c.Value
	}
	return out
}

// observeMetrics is the Prometheus view of the counters, the event log
// and the monitor's checks.
func observeMetrics(p *proxy.Proxy, c map[string]int64) []metrics.Sample {
	counter := func(name, help string, v int64, labels map[string]string) metrics.Sample {
		return metrics.Sample{Name: name, Help: help, Type: metrics.Counter, Labels: labels, Value: float64(v)}
	}
	ms := []metrics.Sample{
		counter("galeon_retries_total", "Statements galeon re-sent (to another node, or again after a deadlock) so the client saw no error, by cause.", c["read_retries"], map[string]string{"cause": "read_node_failed"}),
		counter("galeon_retries_total", "Statements galeon re-sent (to another node, or again after a deadlock) so the client saw no error, by cause.", c["wsrep_not_ready_retries"], map[string]string{"cause": "wsrep_not_ready"}),
		counter("galeon_retries_total", "Statements galeon re-sent (to another node, or again after a deadlock) so the client saw no error, by cause.", c["autocommit_write_retries"], map[string]string{"cause": "autocommit_write_aborted"}),
		counter("galeon_aborted_total", "Statements or transactions ended with an error the client must handle, by cause.", c["aborted_writer_changed"], map[string]string{"cause": "writer_changed"}),
		counter("galeon_aborted_total", "Statements or transactions ended with an error the client must handle, by cause.", c["backend_lost"], map[string]string{"cause": "backend_lost"}),
		counter("galeon_aborted_total", "Statements or transactions ended with an error the client must handle, by cause.", c["transactions_replay_failed"], map[string]string{"cause": "replay_failed"}),
		counter("galeon_writer_changes_total", "Completed writer switches.", c["writer_changes"], nil),
		counter("galeon_lost_commits_total", "COMMITs whose answer was lost with the writer, by how galeon settled them (galera.commit_outcome).", c["commits_settled_committed"], map[string]string{"outcome": "committed"}),
		counter("galeon_lost_commits_total", "COMMITs whose answer was lost with the writer, by how galeon settled them (galera.commit_outcome).", c["commits_settled_not_committed"], map[string]string{"outcome": "not_committed"}),
		counter("galeon_lost_commits_total", "COMMITs whose answer was lost with the writer, by how galeon settled them (galera.commit_outcome).", c["commits_unknown"], map[string]string{"outcome": "unknown"}),
		counter("galeon_transactions_replayed_total", "Transactions lost with the writer and replayed on the new one, every answer as the client saw it.", c["transactions_replayed"], nil),
		counter("galeon_transactions_replay_failed_total", "Transactions lost with the writer whose replay answered differently or found no writer (the client got 9002).", c["transactions_replay_failed"], nil),
		counter("galeon_commits_without_marker_total", "COMMITs of transactions that wrote, sent without a commit marker (markers off for the account, or a compressed link).", c["commits_without_marker"], nil),
		counter("galeon_causal_reads_total", "Reads galeon made causal (wsrep_sync_wait) so that their session read its own write.", c["causal_reads"], nil),
		counter("galeon_degraded_writer_decisions_total", "Writer changes this proxy made alone while the control plane was unreachable.", c["degraded_writer_decisions"], nil),
	}
	now, total, waited, rejected := p.PausedWrites()
	ms = append(ms, counter("galeon_events_total", "Routing events recorded (see the admin table events).", p.EventsTotal(), nil),
		metrics.Sample{Name: "galeon_paused_writes", Help: "Statements waiting for a writer now (a writer switch, or no node fit to write).", Type: metrics.Gauge, Value: float64(now)},
		counter("galeon_paused_writes_total", "Statements that waited for a writer.", total, nil),
		metrics.Sample{Name: "galeon_paused_writes_seconds_total", Help: "Time statements spent waiting for a writer, summed.", Type: metrics.Counter, Value: waited.Seconds()},
		counter("galeon_paused_writes_rejected_total", "Statements refused with 9001 because proxy.max_paused_writes statements already waited.", rejected, nil))
	if op := p.Operation(); op != nil {
		labels := map[string]string{"kind": op.Kind, "method": op.Method}
		failed := 0.0
		if op.Failed != "" {
			failed = 1
		}
		ms = append(ms,
			metrics.Sample{Name: "galeon_operation_running", Help: "1 while an operator's cluster operation (a schema change) is recorded.", Type: metrics.Gauge, Labels: labels, Value: 1},
			metrics.Sample{Name: "galeon_operation_failed", Help: "1 when the recorded operation stopped and waits for --resume or --abandon.", Type: metrics.Gauge, Labels: labels, Value: failed},
			metrics.Sample{Name: "galeon_operation_nodes_done", Help: "Nodes the recorded operation has finished.", Type: metrics.Gauge, Labels: labels, Value: float64(op.Done)},
			metrics.Sample{Name: "galeon_operation_nodes_total", Help: "Nodes the recorded operation handles.", Type: metrics.Gauge, Labels: labels, Value: float64(op.Total)})
	}
	for _, r := range p.Replicas() {
		labels := map[string]string{"replica": r.Name, "source": r.SourceNode}
		ms = append(ms,
			metrics.Sample{Name: "galeon_replica_replicating", Help: "1 while the asynchronous replica reads and applies from its source.", Type: metrics.Gauge, Labels: labels, Value: float64(boolInt(r.Replicating()))},
			metrics.Sample{Name: "galeon_replica_behind_transactions", Help: "Transactions of the cluster the replica has not applied yet (against the writer's published position).", Type: metrics.Gauge, Labels: labels, Value: float64(max(r.Behind, 0))},
			metrics.Sample{Name: "galeon_replica_behind_seconds", Help: "Seconds_Behind_Master of the replica (-1: not replicating).", Type: metrics.Gauge, Labels: labels, Value: float64(r.BehindSeconds)},
			metrics.Sample{Name: "galeon_replica_repoints_total", Help: "Times the replica's agent moved it to a new writer.", Type: metrics.Counter, Labels: map[string]string{"replica": r.Name}, Value: float64(r.Repoints)},
			metrics.Sample{Name: "galeon_replica_last_repoint_seconds", Help: "How long the last move took from the writer decision.", Type: metrics.Gauge, Labels: map[string]string{"replica": r.Name}, Value: r.RepointTook.Seconds()})
		if a := r.Archive; a != nil {
			al := map[string]string{"replica": r.Name}
			ms = append(ms,
				metrics.Sample{Name: "galeon_archive_streaming", Help: "1 while the binary log archive kept from the replica is being written.", Type: metrics.Gauge, Labels: al, Value: float64(boolInt(a.Streaming))},
				metrics.Sample{Name: "galeon_archive_lag_seconds", Help: "Bound on the age of the oldest write the archive lacks (0: it has all the replica logged); what a point-in-time recovery would lose, with the replica's own lag.", Type: metrics.Gauge, Labels: al, Value: float64(a.LagSeconds)},
				metrics.Sample{Name: "galeon_archive_behind_bytes", Help: "Bytes of the replica's binary log the archive lacks.", Type: metrics.Gauge, Labels: al, Value: float64(a.BehindBytes)},
				metrics.Sample{Name: "galeon_archive_bytes", Help: "Size of the binary log archive.", Type: metrics.Gauge, Labels: al, Value: float64(a.Bytes)})
		}
	}
	gauge := func(name, help string, node string, v float64) metrics.Sample {
		return metrics.Sample{Name: name, Help: help, Type: metrics.Gauge, Labels: map[string]string{"server": node}, Value: v}
	}
	for _, ch := range p.GaleraChecks() {
		ms = append(ms,
			gauge("galeon_monitor_check_seconds", "Round trip of the latest Galera check.", ch.Node, ch.Latency.Seconds()),
			gauge("galeon_monitor_missed_checks", "Consecutive failed Galera checks.", ch.Node, float64(ch.Health.Missed)),
			metrics.Sample{Name: "galeon_monitor_missed_checks_total", Help: "Failed Galera checks (a count, not events: a node's state change is one event).",
				Type: metrics.Counter, Labels: map[string]string{"server": ch.Node}, Value: float64(ch.Missed)},
			gauge("galeon_monitor_last_check_timestamp_seconds", "When the latest Galera check ran (Unix time).", ch.Node, float64(ch.At.UnixNano())/1e9),
		)
		if ch.Err != "" {
			continue
		}
		if _, read := ch.Vars["innodb_flush_log_at_trx_commit"]; read {
			risk := 0.0
			if galera.DurabilityRisk(ch.Vars) != "" {
				risk = 1
			}
			ms = append(ms, gauge("galeon_node_durability_risk", "1 when the node's settings let a crash of every node lose acknowledged commits (innodb_flush_log_at_trx_commit != 1, or sync_binlog != 1 with the binary log on): see galera_checks.durability_risk.", ch.Node, risk))
		}
		for _, v := range wsrepSeries {
			if f, err := strconv.ParseFloat(ch.Vars[v.variable], 64); err == nil {
				ms = append(ms, metrics.Sample{Name: v.name, Help: v.help, Type: v.typ, Labels: map[string]string{"server": ch.Node}, Value: f * v.scale})
			}
		}
	}
	return ms
}

// wsrepSeries are the Galera status variables of each check exposed as
// series, for dashboards and alerts (see deploy/).
var wsrepSeries = []struct {
	name, variable, help string
	typ                  metrics.Type
	scale                float64
}{
	{"galeon_wsrep_local_recv_queue", "wsrep_local_recv_queue", "Write-sets waiting to be applied on the node.", metrics.Gauge, 1},
	{"galeon_wsrep_flow_control_paused", "wsrep_flow_control_paused", "Fraction of time replication was paused by flow control since the node's last FLUSH STATUS.", metrics.Gauge, 1},
	{"galeon_wsrep_flow_control_paused_seconds_total", "wsrep_flow_control_paused_ns", "Time the node paused replication by flow control (rate() of it is the paused fraction).", metrics.Counter, 1e-9},
	{"galeon_wsrep_local_cert_failures_total", "wsrep_local_cert_failures", "Transactions of the node that failed certification (conflicts with another node's writes).", metrics.Counter, 1},
	{"galeon_wsrep_local_bf_aborts_total", "wsrep_local_bf_aborts", "Local transactions aborted by a replicated write-set (brute-force aborts).", metrics.Counter, 1},
	{"galeon_wsrep_cluster_size", "wsrep_cluster_size", "Members of the node's cluster component.", metrics.Gauge, 1},
	{"galeon_wsrep_last_committed", "wsrep_last_committed", "Seqno of the node's last committed write-set.", metrics.Gauge, 1},
	{"galeon_wsrep_local_state", "wsrep_local_state", "1 Joining, 2 Donor/Desynced, 3 Joined, 4 Synced.", metrics.Gauge, 1},
}
