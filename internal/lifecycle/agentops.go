package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// ThroughAgents returns a function that restarts (or stops) a node by
// asking its agent (discovery.ActionRestart / ActionStop) and waiting for
// the agent's report: how Rolling, StopCluster and Membership.Remove act
// on nodes of any platform, as long as each agent can run its node (the
// sandbox, or galeon agent --manage systemd / --*-cmd). by names who
// asks, for the record.
func ThroughAgents(store *discovery.Store, kind, by string, timeout time.Duration) func(ctx context.Context, node string) error {
	return func(ctx context.Context, node string) error {
		if kind != discovery.ActionRestart && kind != discovery.ActionStop {
			return fmt.Errorf("agents restart or stop nodes, not %q", kind)
		}
		_, err := askAgent(ctx, store, discovery.Action{Kind: kind, Node: node, Reason: by, Controller: by}, timeout, nil)
		return err
	}
}

// askAgent asks node's agent for the action a and waits up to timeout for
// its report, handing each progress detail it publishes meanwhile to
// progress (if set).
func askAgent(ctx context.Context, store *discovery.Store, a discovery.Action, timeout time.Duration, progress func(string)) (discovery.ActionState, error) {
	now := time.Now()
	a.ID, a.At = a.Kind+"-"+a.Node+"-"+strconv.FormatInt(now.UnixNano(), 10), now.UTC()
	if err := store.RequestAction(ctx, a); err != nil {
		return discovery.ActionState{}, err
	}
	var last discovery.ActionState
	var detail string
	asked, seen := time.Now(), time.Time{}
	var lost error
	err := until(ctx, timeout, a.Node+"'s agent to "+a.Kind+" it", func() bool {
		ns, err := store.Nodes(ctx)
		if err != nil {
			return false
		}
		for _, n := range ns {
			if n.Name != a.Node || n.Action == nil || n.Action.ID != a.ID {
				continue
			}
			seen = time.Now()
			if progress != nil && n.Action.Detail != "" && n.Action.Detail != detail {
				detail = n.Action.Detail
				progress(detail)
			}
			if n.Action.Done {
				last = *n.Action
				return true
			}
		}
		// An agent that never takes the action up (it does not run
		// its node, or is too old to know it), or stops reporting it
		// (restarted: it will not take it up again), is not waited for.
		switch {
		case seen.IsZero() && time.Since(asked) > agentTakeUp:
			lost = fmt.Errorf("%s's agent did not take up the %s within %s: does it run its node? (galeon agent --manage systemd, or the sandbox's agents, of this version)", a.Node, a.Kind, agentTakeUp)
		case !seen.IsZero() && time.Since(seen) > agentTakeUp:
			lost = fmt.Errorf("%s's agent stopped reporting the %s (restarted or gone) %s ago", a.Node, a.Kind, time.Since(seen).Round(time.Second))
		}
		return lost != nil
	})
	// Cleared in any case (with a context of its own: ctx may be what
	// ended the wait), so that the agent does not act on it later, and
	// stops a backup still running for it.
	cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = store.ClearAction(cctx, a)
	ccancel()
	switch {
	case lost != nil:
		return last, lost
	case err != nil:
		return last, err
	case last.Err != "":
		return last, errors.New(a.Node + "'s agent: " + last.Err)
	}
	return last, nil
}

// agentTakeUp bounds how long an agent may take to report an action it
// was asked for (it checks every half second by default).
const agentTakeUp = 15 * time.Second

// AgentCopier has each node's agent make the backup's copy on the node's
// machine (discovery.ActionBackupCopy, ActionBackupFinish): the backup's
// directories are there, not where galeon cluster backup runs.
type AgentCopier struct {
	Store *discovery.Store
	By    string
	// CopyTimeout bounds the copy (default 24h); the prepare gets as long.
	CopyTimeout time.Duration
}

func (c AgentCopier) timeout() time.Duration {
	if c.CopyTimeout <= 0 {
		return 24 * time.Hour
	}
	return c.CopyTimeout
}

// Copy implements Copier.
func (c AgentCopier) Copy(ctx context.Context, node, work string, progress func(msg string)) error {
	_, err := askAgent(ctx, c.Store, discovery.Action{Kind: discovery.ActionBackupCopy, Node: node, Reason: c.By, Controller: c.By, Dir: work},
		c.timeout(), progress)
	return err
}

// Finish implements Copier.
func (c AgentCopier) Finish(ctx context.Context, node, work, final string, info BackupInfo) (BackupInfo, error) {
	payload, _ := json.Marshal(info)
	st, err := askAgent(ctx, c.Store, discovery.Action{Kind: discovery.ActionBackupFinish, Node: node, Reason: c.By, Controller: c.By,
		Dir: work, Final: final, Payload: string(payload)}, c.timeout(), nil)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal([]byte(st.Result), &info); err != nil {
		return info, fmt.Errorf("%s's agent finished the backup but its report is unreadable (%v): see %s on its machine", node, err, final)
	}
	return info, nil
}

// Discard implements Copier: the agent removes the copy (a copy that
// failed on the agent's side is removed there already; this covers one
// interrupted here, or after the copy). Best effort: a copy left behind
// is a directory ending in .partial.
func (c AgentCopier) Discard(ctx context.Context, node, work string) {
	_, _ = askAgent(ctx, c.Store, discovery.Action{Kind: discovery.ActionBackupDiscard, Node: node, Reason: c.By, Controller: c.By, Dir: work},
		30*time.Second, nil)
}

// CarryOutBackup is an agent's side of AgentCopier: it carries out a
// backup action on its own node with copier (a LocalCopier), publishing
// progress through detail, and returns the report (for a finish: the
// backup's description, JSON).
func CarryOutBackup(ctx context.Context, copier LocalCopier, a discovery.Action, detail func(string)) (result string, err error) {
	switch a.Kind {
	case discovery.ActionBackupCopy:
		if err := copier.Copy(ctx, a.Node, a.Dir, detail); err != nil {
			if !errors.Is(err, ErrNotOurs) {
				copier.Discard(context.WithoutCancel(ctx), a.Node, a.Dir)
			}
			return "", err
		}
		return "", nil
	case discovery.ActionBackupDiscard:
		copier.Discard(ctx, a.Node, a.Dir)
		return "", nil
	case discovery.ActionBackupFinish:
		var info BackupInfo
		if err := json.Unmarshal([]byte(a.Payload), &info); err != nil {
			return "", fmt.Errorf("the backup's description: %w", err)
		}
		info, err := copier.Finish(ctx, a.Node, a.Dir, a.Final, info)
		if err != nil {
			return "", err
		}
		raw, _ := json.Marshal(info)
		return string(raw), nil
	}
	return "", fmt.Errorf("not a backup action: %q", a.Kind)
}
