package proxy

import (
	"fmt"
	"time"

	"github.com/galeon-db/galeon/internal/eventlog"
)

// Replica is an asynchronous replica of the cluster as its agent reports
// it through the control plane: the admin table replicas, /metrics and
// the events show it on every proxy.
type Replica struct {
	Name, Address, SourceNode string
	Up, IORunning, SQLRunning bool
	// Error is why the agent cannot reach it; IOError and SQLError the
	// replication threads' last errors.
	Error, IOError, SQLError string
	// Behind is in transactions of the cluster's domain (against the
	// writer's published position); BehindSeconds is
	// Seconds_Behind_Master, -1 when NULL.
	Behind, BehindSeconds int64
	// State and Why are its agent's last decision and reason.
	State, Why  string
	Repoints    int
	RepointTook time.Duration
	LastRepoint time.Time
	Updated     time.Time
	// Archive is the binary log archive kept from it, if any.
	Archive *Archive
}

// Archive is a binary log archive kept from a replica (for
// point-in-time recovery): its size, how far behind the replica's binary
// log it is, and whether it is being written.
type Archive struct {
	Dir                string
	Files              int
	Bytes, BehindBytes int64
	LagSeconds         int64
	Streaming          bool
	Error              string
}

// Replicating says whether it applies from a source now.
func (r Replica) Replicating() bool { return r.Up && r.IORunning && r.SQLRunning }

// SetReplicas replaces the replicas and records what changed for each as
// events: a move to another source, replication stopping or coming back,
// a replica appearing or leaving.
func (p *Proxy) SetReplicas(rs []Replica) {
	prev := map[string]Replica{}
	if old := p.replicas.Swap(&rs); old != nil {
		for _, r := range *old {
			prev[r.Name] = r
		}
	}
	for _, r := range rs {
		o, ok := prev[r.Name]
		delete(prev, r.Name)
		switch {
		case !ok:
			p.events.Add(eventlog.Replica, r.Name, fmt.Sprintf("replica %s (%s) registered, replicating from %s", r.Name, r.Address, orDash(r.SourceNode)))
		case r.LastRepoint.After(o.LastRepoint) && o.SourceNode == "":
			p.events.Add(eventlog.Replica, r.Name, fmt.Sprintf("replica %s set up to replicate from %s", r.Name, orDash(r.SourceNode)))
		case r.LastRepoint.After(o.LastRepoint) && r.RepointTook > 0:
			p.events.Add(eventlog.Replica, r.Name, fmt.Sprintf("replica %s moved from %s to %s, %s after the writer decision", r.Name, orDash(o.SourceNode), orDash(r.SourceNode), r.RepointTook.Round(time.Millisecond)))
		case r.LastRepoint.After(o.LastRepoint):
			p.events.Add(eventlog.Replica, r.Name, fmt.Sprintf("replica %s moved from %s to %s", r.Name, orDash(o.SourceNode), orDash(r.SourceNode)))
		case o.Replicating() && !r.Replicating():
			p.events.Add(eventlog.Replica, r.Name, fmt.Sprintf("replica %s stopped replicating: %s", r.Name, r.problem()))
		case !o.Replicating() && r.Replicating():
			p.events.Add(eventlog.Replica, r.Name, fmt.Sprintf("replica %s replicates again from %s", r.Name, orDash(r.SourceNode)))
		}
		switch {
		case r.Archive == nil:
		case o.Archive != nil && o.Archive.Streaming && !r.Archive.Streaming:
			p.events.Add(eventlog.Replica, r.Name, fmt.Sprintf("binary log archive of %s (%s) stopped: %s", r.Name, r.Archive.Dir, orDash(r.Archive.Error)))
		case o.Archive != nil && !o.Archive.Streaming && r.Archive.Streaming:
			p.events.Add(eventlog.Replica, r.Name, fmt.Sprintf("binary log archive of %s (%s) streams again", r.Name, r.Archive.Dir))
		}
	}
	for name := range prev {
		p.events.Add(eventlog.Replica, name, "replica "+name+" deregistered (its agent stopped, or its lease expired)")
	}
}

// problem says why a replica does not replicate.
func (r Replica) problem() string {
	switch {
	case !r.Up:
		return "unreachable: " + r.Error
	case r.SQLError != "":
		return "applying failed: " + r.SQLError
	case r.IOError != "":
		return "reading failed: " + r.IOError
	}
	return r.Why
}

// Replicas are the registered replicas, by name.
func (p *Proxy) Replicas() []Replica {
	if rs := p.replicas.Load(); rs != nil {
		return *rs
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
