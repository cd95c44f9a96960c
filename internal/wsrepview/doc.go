// Package wsrepview samples the wsrep status counters of Galera nodes and
// turns two consecutive samples into one myq_status-style line per node:
// what a DBA watches during a state transfer, a flow-control storm or a
// failover. Counters are turned into per-second rates or per-interval
// deltas here; the rendering (text or JSON) is separate from the sampling
// so `galeon status` and later the admin API share one source of truth.
package wsrepview
