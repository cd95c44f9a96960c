package proxy

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Event is one thing that changed where traffic goes: a node's state, the
// writer, an operator's drain or switchover. Operators read them in the
// admin table events to answer "what happened at 03:12, and why" without
// searching logs.
type Event struct {
	ID     int64
	At     time.Time
	Kind   string // node_state, writer_change, drain, undrain, switchover, node_joined, node_left
	Node   string
	Detail string
}

// Event kinds.
const (
	EventNodeState    = "node_state"
	EventWriterChange = "writer_change"
	EventDrain        = "drain"
	EventUndrain      = "undrain"
	EventSwitchover   = "switchover"
	EventNodeJoined   = "node_joined" // registered through service discovery
	EventNodeLeft     = "node_left"   // deregistered, or its agent's lease expired
	EventRejected     = "rejected"    // a control-plane value that failed validation
	EventDecision     = "decision"    // the controller published a writer decision
	EventDegraded     = "degraded"    // the control plane became unreachable, or reachable again
	EventController   = "controller"  // this proxy became, or stopped being, the controller
	EventConfig       = "config"      // a shared configuration change was applied
	EventRecovery     = "recovery"    // the controller recovering a cluster that lost every node
	EventHomeSite     = "home_site"   // proxy.site = auto found the site the proxy runs in
)

// maxEvents bounds the event log: a flapping node must not grow memory.
const maxEvents = 1000

// eventLog is a bounded ring of the most recent events. Each event is
// also one log line (msg=event kind=... node=... epoch=... cause=...),
// so an incident can be rebuilt from the logs after the ring has moved on
// or the process restarted.
type eventLog struct {
	mu   sync.Mutex
	ring []Event
	next int64 // ID of the next event; also the count ever added

	log   *slog.Logger  // nil: events are not logged (tests)
	epoch func() uint64 // the writer epoch when the event happened
}

// warnEvents are the kinds an operator should notice in the logs.
var warnEvents = []string{EventWriterChange, EventRejected, EventDegraded, EventRecovery}

func (l *eventLog) add(kind, node, detail string) {
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
	if len(l.ring) < maxEvents {
		l.ring = append(l.ring, e)
	} else {
		l.ring[l.next%maxEvents] = e
	}
	l.next++
}

// total is how many events were ever added.
func (l *eventLog) total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// list returns the kept events, newest first.
func (l *eventLog) list() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Event, 0, len(l.ring))
	for i := l.next - 1; i >= 0 && i >= l.next-int64(len(l.ring)); i-- {
		out = append(out, l.ring[i%maxEvents])
	}
	return out
}

// counters are the proxy's own outcomes worth alerting on: how often it
// hid a failure from clients and how often it could not.
type counters struct {
	// readRetries: autocommit reads retried on another node after their
	// node failed before any byte reached the client.
	readRetries atomic.Int64
	// notReadyRetries: statements a node refused with 1047 (WSREP not
	// ready) and galeon re-sent elsewhere.
	notReadyRetries atomic.Int64
	// abortedWriterChanged: transactions or statements ended with 9002
	// because the writer role moved.
	abortedWriterChanged atomic.Int64
	// backendLost: statements ended with 9003 because their node's
	// connection broke.
	backendLost atomic.Int64
	// writerChanges: completed writer switches.
	writerChanges atomic.Int64
	// degradedDecisions: writer changes made alone while the control
	// plane was unreachable.
	degradedDecisions atomic.Int64
	// causalReads: reads galeon made causal (wsrep_sync_wait) so that
	// their session read its own write (read-your-writes, ryw.go).
	causalReads atomic.Int64
}

// RecordConfigApplied records that a shared configuration was applied.
func (p *Proxy) RecordConfigApplied(detail string) { p.events.add(EventConfig, "", detail) }

// RecordRecovery records what the controller sees or does about a cluster
// that lost every node.
func (p *Proxy) RecordRecovery(detail string) { p.events.add(EventRecovery, "", detail) }
