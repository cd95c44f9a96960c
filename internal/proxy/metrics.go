package proxy

import (
	"maps"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/galeon-db/galeon/internal/metrics"
)

// histograms are the distributions the proxy observes as they happen (the
// counters and gauges are read at scrape time, see Metrics).
type histograms struct {
	// statement: statement latency through the proxy, by the hostgroup
	// that served it (writer, reader, or held: a session pinned to one
	// node by a transaction, a lock or a temporary table; none: no node
	// could take it, and the client got an error).
	statement *prometheus.HistogramVec
	byGroup   map[string]prometheus.Observer
	// writerChange: how long writes paused in this proxy at a writer
	// change, from the switch's start (new writes held back, the old
	// writer fenced) to the new writer taking them; by kind: planned (the
	// old writer was healthy or draining: in-flight writes could finish)
	// or failover.
	writerChange *prometheus.HistogramVec
}

func newHistograms() *histograms {
	h := &histograms{
		statement: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "galeon_statement_duration_seconds",
			Help:    "Statement latency through the proxy (received from the client to answered, errors included), by hostgroup (none: no node could take it).",
			Buckets: metrics.LatencyBuckets,
		}, []string{"hostgroup"}),
		writerChange: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "galeon_writer_change_pause_seconds",
			Help:    "How long writes paused in this proxy at a writer change, by kind (planned or failover).",
			Buckets: metrics.LatencyBuckets,
		}, []string{"kind"}),
		byGroup: map[string]prometheus.Observer{},
	}
	// The label values a statement can have, resolved once: a statement
	// then costs one observation, no label lookup.
	for _, g := range []string{"writer", "reader", "held", statementNoBackend} {
		h.byGroup[g] = h.statement.WithLabelValues(g)
	}
	for _, k := range []string{"planned", "failover"} {
		h.writerChange.WithLabelValues(k)
	}
	return h
}

// statementNoBackend labels statements that got no node.
const statementNoBackend = "none"

// observeStatement records one statement's latency; hostgroup is writer,
// reader, held or none.
func (h *histograms) observeStatement(hostgroup string, d time.Duration) {
	o := h.byGroup[hostgroup]
	if o == nil {
		o = h.statement.WithLabelValues(hostgroup)
	}
	o.Observe(d.Seconds())
}

// Collectors are the proxy's Prometheus collectors: its histograms and
// the samples Metrics reads at each scrape.
func (p *Proxy) Collectors() []prometheus.Collector {
	return []prometheus.Collector{metrics.Func(p.Metrics), p.hist.statement, p.hist.writerChange}
}

// Metrics returns the Prometheus view of the proxy.
func (p *Proxy) Metrics() []metrics.Sample {
	ms := []metrics.Sample{
		{Name: "galeon_client_connections", Help: "Client sessions connected now.", Type: metrics.Gauge, Value: float64(p.clients.Load())},
		{Name: "galeon_client_connections_total", Help: "Client connections accepted.", Type: metrics.Counter, Value: float64(p.clientsTotal.Load())},
	}
	snap := p.view.Load()
	w, _ := snap.Writer()
	ms = append(ms, metrics.Sample{Name: "galeon_writer_epoch", Help: "Epoch of the current writer: it grows by one at every writer change.", Type: metrics.Gauge, Value: float64(snap.Epoch)})
	online := map[string]bool{}
	for _, s := range snap.Servers {
		online[s.Name] = s.Online
	}
	p.galera.mu.Lock()
	drained := maps.Clone(p.galera.adminDrain)
	p.galera.mu.Unlock()
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
		if drained[r.Server] {
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
	return append(ms, p.observeMetrics()...)
}

// observeMetrics is the Prometheus view of the counters, the event log
// and the monitor's checks.
func (p *Proxy) observeMetrics() []metrics.Sample {
	c := &p.counts
	counter := func(name, help string, v int64, labels map[string]string) metrics.Sample {
		return metrics.Sample{Name: name, Help: help, Type: metrics.Counter, Labels: labels, Value: float64(v)}
	}
	ms := []metrics.Sample{
		counter("galeon_retries_total", "Statements galeon re-sent to another node so the client saw no error, by cause.", c.readRetries.Load(), map[string]string{"cause": "read_node_failed"}),
		counter("galeon_retries_total", "Statements galeon re-sent to another node so the client saw no error, by cause.", c.notReadyRetries.Load(), map[string]string{"cause": "wsrep_not_ready"}),
		counter("galeon_aborted_total", "Statements or transactions ended with an error the client must handle, by cause.", c.abortedWriterChanged.Load(), map[string]string{"cause": "writer_changed"}),
		counter("galeon_aborted_total", "Statements or transactions ended with an error the client must handle, by cause.", c.backendLost.Load(), map[string]string{"cause": "backend_lost"}),
		counter("galeon_writer_changes_total", "Completed writer switches.", c.writerChanges.Load(), nil),
		counter("galeon_causal_reads_total", "Reads galeon made causal (wsrep_sync_wait) so that their session read its own write.", c.causalReads.Load(), nil),
		counter("galeon_degraded_writer_decisions_total", "Writer changes this proxy made alone while the control plane was unreachable.", c.degradedDecisions.Load(), nil),
	}
	ms = append(ms, counter("galeon_events_total", "Routing events recorded (see the admin table events).", p.events.total(), nil))
	gauge := func(name, help string, node string, v float64) metrics.Sample {
		return metrics.Sample{Name: name, Help: help, Type: metrics.Gauge, Labels: map[string]string{"server": node}, Value: v}
	}
	for _, ch := range p.GaleraChecks() {
		ms = append(ms,
			gauge("galeon_monitor_check_seconds", "Round trip of the latest Galera check.", ch.Node, ch.Latency.Seconds()),
			gauge("galeon_monitor_missed_checks", "Consecutive failed Galera checks.", ch.Node, float64(ch.Health.Missed)),
			gauge("galeon_monitor_last_check_timestamp_seconds", "When the latest Galera check ran (Unix time).", ch.Node, float64(ch.At.UnixNano())/1e9),
		)
		if ch.Err != "" {
			continue
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
