package proxy

import (
	"fmt"
	"time"

	"github.com/galeon-db/galeon/internal/eventlog"
)

// Operation is the cluster-wide operation an operator runs (a schema
// change), as the control plane records it: the admin table operations,
// /metrics and the events show it on every proxy.
type Operation struct {
	ID, Kind, By, Statement, Schema, Method string
	// Current is the node in hand, Step what happens to it and Detail
	// its progress (not an event: it changes every few seconds); Done of
	// Total nodes are finished. Failed says why it stopped.
	Current, Step, Detail, Failed string
	Done, Total                   int
	Started, Updated              time.Time
}

// SetOperation replaces the recorded operation (nil: none) and records
// its steps as events.
func (p *Proxy) SetOperation(op *Operation) {
	prev := p.operation.Swap(op)
	if prev != nil && (op == nil || op.ID != prev.ID) {
		// Ended (also when the watch skipped straight to the next one).
		p.events.Add(eventlog.Operation, "", fmt.Sprintf("%s %s ended (%d of %d nodes done)", prev.Kind, prev.ID, prev.Done, prev.Total))
		prev = nil
	}
	if op == nil {
		return
	}
	if prev == nil {
		p.events.Add(eventlog.Operation, op.Current, fmt.Sprintf("%s %s by %s (%s): %s", op.Kind, op.ID, op.By, op.Method, op.Statement))
	}
	switch {
	case op.Failed != "" && (prev == nil || prev.Failed != op.Failed):
		p.events.Add(eventlog.Operation, op.Current, fmt.Sprintf("%s %s stopped: %s", op.Kind, op.ID, op.Failed))
	case op.Step != "" && (prev == nil || prev.Current != op.Current || prev.Step != op.Step):
		p.events.Add(eventlog.Operation, op.Current, fmt.Sprintf("%s %s: %s %s (%d of %d nodes done)", op.Kind, op.ID, op.Current, op.Step, op.Done, op.Total))
	}
}

// Operation is the recorded operation, or nil.
func (p *Proxy) Operation() *Operation { return p.operation.Load() }
