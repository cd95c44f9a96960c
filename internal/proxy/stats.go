package proxy

import (
	"sort"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/digest"
)

// PoolRow is one node's connection pool counters, for
// stats_connection_pool and /metrics.
type PoolRow struct {
	Server, Addr, Status string
	backend.Stats
}

// PoolStats returns every node's pool counters, by name.
func (p *Proxy) PoolStats() []PoolRow {
	snap := p.view.Load()
	rows := make([]PoolRow, 0, len(snap.Servers))
	for _, s := range snap.Servers {
		st := "ONLINE"
		if !s.Online {
			st = "OFFLINE"
		}
		rows = append(rows, PoolRow{Server: s.Name, Addr: s.Addr, Status: st, Stats: p.pool(s.Name).Stats()})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Server < rows[j].Server })
	return rows
}

// Digests returns the query digest statistics, most expensive first.
func (p *Proxy) Digests() []digest.Row { return p.digests.Rows() }

// ResetDigests clears the query digest statistics.
func (p *Proxy) ResetDigests() { p.digests.Reset() }
