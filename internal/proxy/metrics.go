package proxy

import (
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
	for _, g := range []route{routeWriter, routeReader, routeHeld, routeNone} {
		h.byGroup[string(g)] = h.statement.WithLabelValues(string(g))
	}
	for _, k := range []string{"planned", "failover"} {
		h.writerChange.WithLabelValues(k)
	}
	return h
}

// observeStatement records one statement's latency; hostgroup is writer,
// reader, held or none.
func (h *histograms) observeStatement(hostgroup string, d time.Duration) {
	o := h.byGroup[hostgroup]
	if o == nil {
		o = h.statement.WithLabelValues(hostgroup)
	}
	o.Observe(d.Seconds())
}

// Histograms are the distributions the proxy observes as statements and
// writer changes happen, for its Prometheus registry (the samples read at
// scrape time are package proxyadmin's).
func (p *Proxy) Histograms() []prometheus.Collector {
	return []prometheus.Collector{p.hist.statement, p.hist.writerChange}
}

// EventsTotal is how many routing events were ever recorded.
func (p *Proxy) EventsTotal() int64 { return p.events.Total() }

// PausedWrites are the statements waiting for a writer now, how many
// ever waited, for how long in all, and how many were refused past
// proxy.max_paused_writes.
func (p *Proxy) PausedWrites() (now, total int64, waited time.Duration, rejected int64) {
	return p.pauses.now.Load(), p.pauses.total.Load(), time.Duration(p.pauses.nanos.Load()), p.pauses.rejected.Load()
}
