package sandbox

import (
	"context"
	"fmt"
)

// Running says whether the named node's server (or arbitrator) runs.
func (sb *Sandbox) Running(name string) bool {
	if a, ok := sb.arbitrator(name); ok {
		return sb.arbPidOf(a) != 0
	}
	n, err := sb.Node(name)
	return err == nil && sb.pid(n) != 0
}

// Position returns a stopped node's last committed position: its
// grastate.dat, or after a crash (seqno -1) the position recovered from
// InnoDB with mariadbd --wsrep-recover.
func (sb *Sandbox) Position(ctx context.Context, name string) (GraState, error) {
	n, err := sb.Node(name)
	if err != nil {
		return GraState{}, err
	}
	if sb.pid(n) != 0 {
		return GraState{}, fmt.Errorf("%s is running: its position is what it reports", n.Name)
	}
	return sb.position(ctx, n)
}

// BootstrapNode starts a stopped node as a new Primary component (marking
// it safe to bootstrap first): the first step of recovering a cluster
// that lost every node. It must be the most advanced node.
func (sb *Sandbox) BootstrapNode(ctx context.Context, name string) error {
	n, err := sb.Node(name)
	if err != nil {
		return err
	}
	if sb.pid(n) != 0 {
		return fmt.Errorf("%s is already running", n.Name)
	}
	if err := setSafeToBootstrap(sb.grastate(n)); err != nil {
		return fmt.Errorf("mark %s safe to bootstrap: %w", n.Name, err)
	}
	return sb.startAndWait(ctx, n, true)
}

// PromoteNode makes a running node that lost quorum (non-Primary) the
// new Primary component, in place (pc.bootstrap=YES), and waits until it
// is Synced: the others, started or still running, then join it.
func (sb *Sandbox) PromoteNode(ctx context.Context, name string) error {
	n, err := sb.Node(name)
	if err != nil {
		return err
	}
	db, err := sb.DB(n.Name)
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, "SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'"); err != nil {
		return fmt.Errorf("promote %s (pc.bootstrap=YES): %w", n.Name, err)
	}
	return sb.waitSynced(ctx, n, sb.pid(n), fileSize(sb.errLog(n)))
}

// RestartNode restarts a node cleanly (the agent's restart action).
func (sb *Sandbox) RestartNode(ctx context.Context, name string) error { return sb.Restart(ctx, name) }

// SetServerOptions merges opts into the sandbox's [mariadbd] options and
// saves them: each node uses them from its next start (a rolling restart
// applies a configuration change that way).
func (sb *Sandbox) SetServerOptions(opts map[string]string) error {
	if len(opts) == 0 {
		return nil
	}
	if sb.ServerOptions == nil {
		sb.ServerOptions = map[string]string{}
	}
	for k, v := range opts {
		sb.ServerOptions[k] = v
	}
	return sb.save()
}

// SetReadOnly sets node's read_only (the agent's fence while a replica's
// promotion fences the cluster), as the sandbox's administrator.
func (sb *Sandbox) SetReadOnly(ctx context.Context, node string, on bool) error {
	db, err := sb.DB(node)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A global read lock is taken: a long write on the node must not keep
	// it waiting (and new writes behind it) for long.
	if _, err := conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = 5"); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "SET GLOBAL read_only = "+map[bool]string{true: "ON", false: "OFF"}[on])
	return err
}
