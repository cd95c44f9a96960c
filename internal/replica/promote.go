package replica

import (
	"fmt"
	"time"
)

// PromoteInput is what a replica's agent knows when a promotion is
// recorded.
type PromoteInput struct {
	// Me is this replica; Promoted the one the record names.
	Me, Promoted string
	// SlavePos is what the replica has applied; ClusterPos the cluster's
	// last position its agents published when the promotion began, in
	// Domain.
	SlavePos, ClusterPos Position
	Domain               uint32
	// Replicating: both threads run (more may still come);
	// CatchUpUntil bounds the wait for ClusterPos. FenceHeld: the
	// controller published no writer and every proxy applied it, so the
	// cluster takes no more writes through galeon.
	Replicating  bool
	FenceHeld    bool
	CatchUpUntil time.Time
	// Planned: the promotion was forced while the cluster ran (a planned
	// move): the catch-up time is waited out even when the replica's
	// threads are not running this moment (a reconnect, a move).
	Planned bool
	// Writable: the replica already takes writes (promoted before).
	Writable bool
	Now      time.Time
}

// PromoteAction is what the agent does about a promotion.
type PromoteAction int

const (
	// StandBy: another replica was promoted; this one stays as it is.
	StandBy PromoteAction = iota
	// CatchUp: wait, still applying what the cluster had.
	CatchUp
	// Promote: stop replicating, forget the source, take writes.
	Promote
	// Promoted: done before.
	Promoted
)

func (a PromoteAction) String() string {
	return [...]string{"fenced", "catching up", "promote", "promoted"}[a]
}

// PromoteDecision is PromoteStep's answer: the action, why, and how many of
// the cluster's transactions (in its domain, against its last published
// position) the replica lacks.
type PromoteDecision struct {
	Action PromoteAction
	Why    string
	Lost   uint64
}

// PromoteStep is what a replica's agent does while a promotion is recorded,
// a pure function of its input:
//
//   - another replica was promoted: stand by (the cluster it follows is
//     fenced; it keeps what it has);
//   - this one, already writable: done;
//   - this one, still replicating, before the catch-up deadline, and
//     short of the cluster's last position or with the fence not yet
//     applied by every proxy: wait (a planned move to the DR site loses
//     nothing);
//   - otherwise promote, counting what it lacks.
func PromoteStep(in PromoteInput) PromoteDecision {
	lost := uint64(0)
	if have, want := in.SlavePos.Seqno(in.Domain), in.ClusterPos.Seqno(in.Domain); want > have {
		lost = want - have
	}
	switch {
	case in.Me != in.Promoted:
		return PromoteDecision{Action: StandBy, Why: fmt.Sprintf("replica %s was promoted: the cluster is fenced, this replica keeps what it has", in.Promoted)}
	case in.Writable:
		return PromoteDecision{Action: Promoted, Why: "writable: promoted to a primary of its own", Lost: lost}
	case lost > 0 && (in.Replicating || in.Planned) && in.Now.Before(in.CatchUpUntil):
		return PromoteDecision{Action: CatchUp, Lost: lost,
			Why: fmt.Sprintf("applying the cluster's last %d transactions before it is promoted (until %s at most)", lost, in.CatchUpUntil.UTC().Format(time.TimeOnly))}
	case !in.FenceHeld && (in.Replicating || in.Planned) && in.Now.Before(in.CatchUpUntil):
		// The cluster still runs and may take writes until every proxy
		// applied the fence: those must reach the replica first.
		return PromoteDecision{Action: CatchUp, Why: fmt.Sprintf("waiting for every proxy to apply the fence, then for the cluster's last writes (until %s at most)", in.CatchUpUntil.UTC().Format(time.TimeOnly))}
	case lost > 0:
		why := "the catch-up time is over"
		if !in.Replicating && !in.Planned {
			why = "it does not replicate (the cluster is gone)"
		}
		return PromoteDecision{Action: Promote, Lost: lost,
			Why: fmt.Sprintf("promoted %d transactions short of the cluster's last published position: %s", lost, why)}
	}
	return PromoteDecision{Action: Promote, Why: "promoted with everything the cluster's agents last published"}
}
