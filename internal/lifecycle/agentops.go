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
	err := until(ctx, timeout, a.Node+"'s agent to "+a.Kind+" it", func() bool {
		ns, err := store.Nodes(ctx)
		if err != nil {
			return false
		}
		for _, n := range ns {
			if n.Name != a.Node || n.Action == nil || n.Action.ID != a.ID {
				continue
			}
			if progress != nil && n.Action.Detail != "" && n.Action.Detail != detail {
				detail = n.Action.Detail
				progress(detail)
			}
			if n.Action.Done {
				last = *n.Action
				return true
			}
		}
		return false
	})
	// Cleared in any case (with a context of its own: ctx may be what
	// ended the wait), so that the agent does not act on it later.
	cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = store.ClearAction(cctx, a)
	ccancel()
	switch {
	case err != nil:
		return last, fmt.Errorf("%w (does %s's agent manage its node? galeon agent --manage systemd, or the sandbox's agents)", err, a.Node)
	case last.Err != "":
		return last, errors.New(a.Node + "'s agent: " + last.Err)
	}
	return last, nil
}

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

// Discard implements Copier: the agent's copy failed or was interrupted;
// it removes what it copied itself (a failed copy leaves nothing), so
// nothing is asked here.
func (AgentCopier) Discard(context.Context, string, string) {}

// CarryOutBackup is an agent's side of AgentCopier: it carries out a
// backup action on its own node with copier (a LocalCopier), publishing
// progress through detail, and returns the report (for a finish: the
// backup's description, JSON).
func CarryOutBackup(ctx context.Context, copier LocalCopier, a discovery.Action, detail func(string)) (result string, err error) {
	switch a.Kind {
	case discovery.ActionBackupCopy:
		if err := copier.Copy(ctx, a.Node, a.Dir, detail); err != nil {
			copier.Discard(ctx, a.Node, a.Dir)
			return "", err
		}
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
