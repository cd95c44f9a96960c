// Package metrics is galeon's Prometheus exposition, built on
// client_golang: one registry per process with the Go runtime and process
// collectors (memory, goroutines, GC, file descriptors, CPU), the
// histograms the proxy observes, and galeon's own counters and gauges.
//
// Those counters and gauges already live as atomics in the proxy, the
// monitor and the pools, and their series come and go with the nodes the
// control plane discovers. Rather than mirroring every value into a
// client_golang metric (two copies that can disagree), Func reads them at
// scrape time and hands them to client_golang as constant metrics; the
// registry then does the format, escaping, family grouping and
// consistency checks.
package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Sample is one value read at scrape time. Samples sharing a Name form one
// metric family; its help text and type come from the first of them.
type Sample struct {
	Name   string
	Help   string
	Type   Type
	Labels map[string]string
	Value  float64
}

// Type is a sample's Prometheus type.
type Type int

// The types galeon exposes as samples (histograms are real client_golang
// histograms, see NewRegistry's collectors).
const (
	Gauge Type = iota
	Counter
)

// Func is a collector of the samples f returns at each scrape. It is
// "unchecked" (it describes nothing up front) because its series follow
// the nodes the proxy knows, which change at run time.
func Func(f func() []Sample) prometheus.Collector { return sampleCollector(f) }

type sampleCollector func() []Sample

func (sampleCollector) Describe(chan<- *prometheus.Desc) {}

func (f sampleCollector) Collect(ch chan<- prometheus.Metric) {
	type family struct {
		help string
		typ  Type
	}
	families := map[string]family{}
	descs := map[string]*prometheus.Desc{}
	for _, s := range f() {
		fam, seen := families[s.Name]
		if !seen {
			fam = family{help: s.Help, typ: s.Type}
			if fam.help == "" {
				fam.help = s.Name
			}
			families[s.Name] = fam
		}
		names := make([]string, 0, len(s.Labels))
		for k := range s.Labels {
			names = append(names, k)
		}
		sort.Strings(names)
		key := s.Name + "{" + strings.Join(names, ",")
		desc := descs[key]
		if desc == nil {
			desc = prometheus.NewDesc(s.Name, fam.help, names, nil)
			descs[key] = desc
		}
		values := make([]string, len(names))
		for i, k := range names {
			values[i] = s.Labels[k]
		}
		vt := prometheus.GaugeValue
		if fam.typ == Counter {
			vt = prometheus.CounterValue
		}
		m, err := prometheus.NewConstMetric(desc, vt, s.Value, values...)
		if err != nil {
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	}
}

// NewRegistry is a registry with the Go runtime and process collectors
// and cs.
func NewRegistry(cs ...prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	all := append([]prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}, cs...)
	for _, c := range all {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// Handler serves g's metrics. A series that cannot be gathered is left out
// and logged, rather than failing the whole scrape: one bad label must not
// blind the dashboards to everything else.
func Handler(g prometheus.Gatherer, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      errorLog{log},
	})
}

type errorLog struct{ log *slog.Logger }

func (e errorLog) Println(v ...any) {
	if e.log != nil {
		e.log.Warn("metrics: a series could not be gathered", "error", fmt.Sprint(v...))
	}
}

// LatencyBuckets are the upper bounds, in seconds, of galeon's latency
// histograms: from 100 µs (a point select through a proxy on the same
// host) to 10 s (a stalled failover), about 2.5 apart.
var LatencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
