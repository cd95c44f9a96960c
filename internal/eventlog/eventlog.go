// Package eventlog is the proxy's log of routing events: every change of
// where traffic goes (a node's state, the writer, a drain, a switchover,
// a control-plane decision), kept in a bounded ring per kind for the
// admin table events and written as one structured log line each.
package eventlog

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Event is one thing that changed where traffic goes: a node's state, the
// writer, an operator's drain or switchover. Operators read them in the
// admin table events to answer "what happened at 03:12, and why" without
// searching logs.
type Event struct {
	ID     int64
	At     time.Time
	Kind   string // node_state, writer_change, drain, ...: the constants below
	Node   string
	Detail string
}

// Event kinds.
const (
	NodeState    = "node_state"
	WriterChange = "writer_change"
	Drain        = "drain"
	Undrain      = "undrain"
	Switchover   = "switchover"
	NodeJoined   = "node_joined" // registered through service discovery
	NodeLeft     = "node_left"   // deregistered, or its agent's lease expired
	Rejected     = "rejected"    // a control-plane value that failed validation
	Decision     = "decision"    // the controller published a writer decision
	Degraded     = "degraded"    // the control plane became unreachable, or reachable again
	Controller   = "controller"  // this proxy became, or stopped being, the controller
	Config       = "config"      // a shared configuration change was applied
	Recovery     = "recovery"    // the controller recovering a cluster that lost every node
	HomeSite     = "home_site"   // proxy.site = auto found the site the proxy runs in
	Commit       = "commit"      // a COMMIT lost with the writer, settled or not
	Operation    = "operation"   // an operator's cluster operation (a schema change): its start, steps and end
	Replica      = "replica"     // an asynchronous replica moved to a new writer, stopped, failed or came back
)

// maxEvents bounds each kind's share of the event log: a flapping node
// must not grow memory, and must not push an incident's writer change
// out either. Each kind keeps its own newest maxEvents (a ring per kind):
// noise of one kind evicts only older events of that kind.
const maxEvents = 1000

// Log keeps the most recent events of each kind, listed together in the
// order they happened. Each event is also one log line
// (msg=event kind=... node=... epoch=... cause=...), so an incident can
// be rebuilt from the logs after the ring has moved on or the process
// restarted.
type Log struct {
	mu    sync.Mutex
	rings map[string]*ring
	next  int64 // ID of the next event; also the count ever added

	log   *slog.Logger  // nil: events are not logged (tests)
	epoch func() uint64 // the writer epoch when the event happened
}

// ring is the newest events of one kind; start is the slot the next one
// replaces once it is full.
type ring struct {
	ev    []Event
	start int
}

func (r *ring) add(e Event) {
	if len(r.ev) < maxEvents {
		r.ev = append(r.ev, e)
		return
	}
	r.ev[r.start] = e
	r.start = (r.start + 1) % maxEvents
}

// New is a log that also writes each event to log (nil: not logged),
// with the writer epoch epoch returns at that moment.
func New(log *slog.Logger, epoch func() uint64) *Log {
	return &Log{log: log, epoch: epoch}
}

// warnEvents are the kinds an operator should notice in the logs.
var warnEvents = []string{WriterChange, Rejected, Degraded, Recovery}

// Add records an event.
func (l *Log) Add(kind, node, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := Event{ID: l.next + 1, At: time.Now(), Kind: kind, Node: node, Detail: detail}
	if l.log != nil {
		level := slog.LevelInfo
		if slices.Contains(warnEvents, kind) {
			level = slog.LevelWarn
		}
		var epoch uint64
		if l.epoch != nil {
			epoch = l.epoch()
		}
		l.log.Log(context.Background(), level, "event", "id", e.ID, "kind", kind, "node", node, "epoch", epoch, "cause", detail)
	}
	if l.rings == nil {
		l.rings = map[string]*ring{}
	}
	r := l.rings[kind]
	if r == nil {
		r = &ring{}
		l.rings[kind] = r
	}
	r.add(e)
	l.next++
}

// Total is how many events were ever added.
func (l *Log) Total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// List returns the kept events of every kind, newest first (by ID: the
// order they were added).
func (l *Log) List() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.rings {
		n += len(r.ev)
	}
	out := make([]Event, 0, n)
	for _, r := range l.rings {
		out = append(out, r.ev...) // any order: sorted next
	}
	slices.SortFunc(out, func(a, b Event) int { return cmp.Compare(b.ID, a.ID) })
	return out
}
