package replica

import (
	"fmt"
	"strings"
)

// Input is what a replica's agent knows at one moment.
type Input struct {
	// Target is where the replica should replicate from: the writer the
	// controller published (or the node an operator named), as
	// host:port, and its name; "" when there is none (no writer).
	Target, TargetNode string
	// TargetPos is the target's gtid_binlog_pos as its agent last
	// published it; TargetKnown says whether it was published at all.
	TargetPos   Position
	TargetKnown bool
	// Domain is the cluster's GTID domain (wsrep_gtid_domain_id): the
	// only one the replica follows.
	Domain uint32
	// The replica, from SHOW SLAVE STATUS: its source (host:port, ""
	// when none is set up), its threads and their last errors, and
	// gtid_slave_pos.
	Source                string
	IORunning, SQLRunning bool
	IOError, SQLError     string
	SlavePos              Position
	// TargetProblems are what makes the target unsafe as a source
	// (CheckSource, CheckCluster): the replica does not move there.
	TargetProblems []string
	// Missing names the writer (or pinned node) when no node of that
	// name is registered (its agent is down).
	Missing string
}

// Action is what the agent does next.
type Action int

const (
	// Keep: nothing to do.
	Keep Action = iota
	// Repoint: stop replication, CHANGE MASTER to the target with
	// MASTER_USE_GTID=slave_pos, start it.
	Repoint
	// Start: the threads are stopped without an error on the right
	// source: start them.
	Start
	// Wait: the target has not yet logged everything the replica has
	// applied; moving now would ask it for transactions it lacks.
	Wait
	// Stop: the writer moved and the replica still applies from the old
	// source: stop it first, so that its position stops moving and the
	// new writer can be seen to have logged all of it.
	Stop
)

func (a Action) String() string {
	return [...]string{"keep", "repoint", "start", "wait", "stop"}[a]
}

// Decision is Step's answer: the action, its target, and why, in words
// an operator reads in status and events.
type Decision struct {
	Action Action
	To     string
	Why    string
}

// Step decides what a replica's agent does next. When the writer moves,
// it stops the replica first (its position then holds still: while it
// applies from the old source it can stay ahead of what the agents last
// published for the new writer), then moves it only once the new writer
// has logged, in the cluster's domain, everything the replica applied (a
// replica moved too early would ask for what the writer has not logged
// yet, and stop with error 1236). It never restarts or moves a replica
// whose applying stopped on an error: someone must look at the data.
func Step(in Input) Decision {
	switch {
	case in.SQLError != "":
		return Decision{Action: Keep, Why: "applying stopped on an error (look at the data, then START SLAVE): " + in.SQLError}
	case in.Missing != "":
		return Decision{Action: Keep, Why: in.Missing + " is not registered (its agent is down?): the replica stays on " + orNowhere(in.Source)}
	case in.Target == "":
		if in.Source == "" {
			return Decision{Action: Keep, Why: "no writer is published and no source set up: nothing to follow yet"}
		}
		return Decision{Action: Keep, Why: "no writer is published: the replica stays on " + in.Source}
	case in.Source == in.Target:
		switch {
		case !in.IORunning || !in.SQLRunning:
			if in.IOError != "" {
				return Decision{Action: Start, To: in.Target, Why: "reading from " + in.TargetNode + " stopped (" + in.IOError + "): start again"}
			}
			return Decision{Action: Start, To: in.Target, Why: "replication is stopped: start it from " + in.TargetNode}
		}
		return Decision{Action: Keep, Why: "replicating from " + in.TargetNode}
	case len(in.TargetProblems) > 0:
		return Decision{Action: Keep, Why: in.TargetNode + " is not a safe source, so the replica stays on " + orNowhere(in.Source) + ": " + strings.Join(in.TargetProblems, "; ")}
	case in.Source != "" && (in.IORunning || in.SQLRunning):
		return Decision{Action: Stop, To: in.Target, Why: fmt.Sprintf("the writer is %s: stopping replication from %s before moving", in.TargetNode, in.Source)}
	case !in.TargetKnown:
		return Decision{Action: Wait, To: in.Target, Why: in.TargetNode + "'s binary log position is not published yet (its agent reports it)"}
	case !in.TargetPos.Covers(in.SlavePos, in.Domain):
		return Decision{Action: Wait, To: in.Target, Why: fmt.Sprintf("%s has logged up to %d in domain %d, the replica has applied %d: waiting for it to catch up",
			in.TargetNode, in.TargetPos.Seqno(in.Domain), in.Domain, in.SlavePos.Seqno(in.Domain))}
	}
	return Decision{Action: Repoint, To: in.Target, Why: fmt.Sprintf("the writer is %s: moving from %s at %d in domain %d", in.TargetNode, orNowhere(in.Source), in.SlavePos.Seqno(in.Domain), in.Domain)}
}

func orNowhere(s string) string {
	if s == "" {
		return "nowhere"
	}
	return s
}
