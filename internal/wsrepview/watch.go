package wsrepview

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// Target is a node to watch and how to reach it.
type Target struct {
	Name string
	DB   *sql.DB
	Site string // the node's data centre, if known
}

// Watcher keeps the previous sample of each node so every poll yields
// rates over the last interval.
type Watcher struct {
	Targets []Target
	Timeout time.Duration // per-node read timeout
	prev    map[string]*Sample
	last    map[string]*Row // each node's last row while up (its last measured latency)
}

// Poll samples every node concurrently (a hung node must not delay the
// others) and returns one Row per node, in target order.
func (w *Watcher) Poll(ctx context.Context) []Row {
	if w.prev == nil {
		w.prev, w.last = map[string]*Sample{}, map[string]*Row{}
	}
	timeout := w.Timeout
	if timeout == 0 {
		timeout = time.Second
	}
	samples := make([]Sample, len(w.Targets))
	var wg sync.WaitGroup
	for i, t := range w.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			samples[i] = Fetch(c, t.Name, t.DB)
		}()
	}
	wg.Wait()
	rows := make([]Row, len(samples))
	for i := range samples {
		s := samples[i]
		rows[i] = CarryLatency(Compute(w.prev[s.Node], s), w.last[s.Node])
		rows[i].Site = w.Targets[i].Site
		w.prev[s.Node] = &samples[i]
		if rows[i].Up {
			w.last[s.Node] = &rows[i]
		}
	}
	return rows
}
