package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// Agent ports: node i's agent serves its clustercheck endpoint on
// base+400+i; a proxy started for the sandbox runs its embedded etcd on
// base+500 (clients) and base+501 (peers).
const (
	offsetAgentHTTP = 400
	offsetEtcd      = 500
)

// DiscoveryEndpoint is where the agents of a sandbox created with base
// port base look for etcd by default: the embedded etcd of the proxy that
// `make up` starts beside it.
func DiscoveryEndpoint(base int) string {
	return "etcd://127.0.0.1:" + strconv.Itoa(base+offsetEtcd)
}

// EtcdListen returns the client and peer addresses of the embedded etcd
// for a sandbox's proxy.
func (s *State) EtcdListen() (client, peer string) {
	return "127.0.0.1:" + strconv.Itoa(s.BasePort+offsetEtcd), "127.0.0.1:" + strconv.Itoa(s.BasePort+offsetEtcd+1)
}

// AgentHTTP is node n's clustercheck address.
func (s *State) AgentHTTP(n Node) string {
	return "127.0.0.1:" + strconv.Itoa(s.BasePort+offsetAgentHTTP+n.Index)
}

// ArchiveDir is where the first replica's agent keeps the sandbox's
// binary log archive (the cluster's transactions, for point-in-time
// recovery).
func (s *State) ArchiveDir() string { return filepath.Join(s.Dir, "archive") }

func (s *State) agentPidPath(n Node) string { return filepath.Join(s.Dir, "agent-"+n.Name+".pid") }
func (s *State) agentLog(n Node) string     { return filepath.Join(s.Dir, "agent-"+n.Name+".log") }

// agentArgs are the agent's arguments. They name the sandbox directory
// and the node but never the node's own directory, so that sweeping a
// node's processes (after it stops) leaves its agent running: an agent
// outlives its node's restarts and reports them.
func (s *State) agentArgs(n Node) []string {
	if s.isDRAgent(n) {
		// A DR cluster's agent keeps one of its nodes replicating from
		// the primary's writer: a replica of the primary's cluster.
		return []string{"agent", "--sandbox-dir=" + s.Dir, "--replica=" + n.Name, "--discovery=" + s.Discovery, "--cluster=" + s.DROf}
	}
	if n.Replica {
		// A replica's agent keeps it on the writer (galeon agent --replica);
		// the first replica's also keeps the sandbox's binary log archive.
		args := []string{"agent", "--sandbox-dir=" + s.Dir, "--replica=" + n.Name, "--discovery=" + s.Discovery, "--cluster=" + s.Name}
		if n.Index == 1 {
			args = append(args, "--archive="+s.ArchiveDir())
		}
		return args
	}
	return []string{"agent", "--sandbox-dir=" + s.Dir, "--node=" + n.Name, "--discovery=" + s.Discovery,
		"--cluster=" + s.Name, "--http=" + s.AgentHTTP(n)}
}

func (s *State) agentMarker(n Node) string {
	if n.Replica {
		return "--sandbox-dir=" + s.Dir + "\x00--replica=" + n.Name + "\x00"
	}
	return "--sandbox-dir=" + s.Dir + "\x00--node=" + n.Name + "\x00"
}

// agentPid returns the PID of node n's agent if it runs, else 0.
func (s *State) agentPid(n Node) int { return runningPID(s.agentPidPath(n), s.agentMarker(n)) }

// agentsWanted says whether this handle runs agents: the sandbox has a
// discovery endpoint and the caller said which galeon binary to run.
func (sb *Sandbox) agentsWanted() bool { return sb.Discovery != "" && sb.ctl.AgentBinary != "" }

// StartAgent starts node n's agent (`galeon agent`) unless it runs: it
// registers the node in etcd, retrying until etcd answers.
func (sb *Sandbox) StartAgent(n Node) error {
	if !sb.agentsWanted() || sb.agentPid(n) != 0 {
		return nil
	}
	out, err := os.OpenFile(sb.agentLog(n), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(sb.ctl.AgentBinary, sb.agentArgs(n)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = sb.Dir
	attr := &syscall.SysProcAttr{Setsid: true}
	if sb.ctl.KillWithParent {
		attr.Pdeathsig = syscall.SIGKILL
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the agent of %s: %w", n.Name, err)
	}
	pid := cmd.Process.Pid
	go func() { _ = cmd.Wait() }() // reap it if it dies while we run
	if sb.isDRAgent(n) {
		sb.ctl.Progress(n.Name, fmt.Sprintf("DR agent started (pid %d, keeps one node replicating from %s's writer; log %s)", pid, sb.DROf, sb.agentLog(n)))
	} else if n.Replica {
		what := "keeps it on the writer"
		if n.Index == 1 {
			what += " and the cluster's binary log archive in " + sb.ArchiveDir() + ", for galeon cluster restore --archive"
		}
		sb.ctl.Progress(n.Name, fmt.Sprintf("agent started (pid %d, %s; log %s)", pid, what, sb.agentLog(n)))
	} else {
		sb.ctl.Progress(n.Name, fmt.Sprintf("agent started (pid %d, clustercheck http://%s, log %s)", pid, sb.AgentHTTP(n), sb.agentLog(n)))
	}
	return os.WriteFile(sb.agentPidPath(n), []byte(strconv.Itoa(pid)+"\n"), 0o600)
}

// StopAgent stops node n's agent cleanly (it deregisters the node at
// once), killing it after 5 s.
func (sb *Sandbox) StopAgent(ctx context.Context, n Node) error {
	pid := sb.agentPid(n)
	defer os.Remove(sb.agentPidPath(n))
	if pid == 0 {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if waitExit(wctx, pid, sb.agentMarker(n)) != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return fmt.Errorf("the agent of %s (pid %d) did not stop within 5s and was killed", n.Name, pid)
	}
	sb.ctl.Progress(n.Name, "agent stopped")
	return nil
}

// AgentStatus says whether node n's agent runs ("running (pid N)",
// "stopped", or "none" for a sandbox without discovery).
func (sb *Sandbox) AgentStatus(n Node) string {
	if sb.Discovery == "" {
		return "none"
	}
	if pid := sb.agentPid(n); pid != 0 {
		return fmt.Sprintf("running (pid %d)", pid)
	}
	return "stopped"
}

// drAgent is the DR cluster's agent as a pseudo-node: a replica of the
// primary named after the sandbox.
func (s *State) drAgent() Node { return Node{Name: s.Name, Replica: true} }

func (s *State) isDRAgent(n Node) bool { return s.DROf != "" && n.Replica && n.Name == s.Name }

// agentNodes are the nodes and replicas that have an agent, and a DR
// cluster's own agent.
func (s *State) agentNodes() []Node {
	ns := append(slices.Clone(s.Nodes), s.Replicas...)
	if s.DROf != "" {
		ns = append(ns, s.drAgent())
	}
	return ns
}

func (sb *Sandbox) startAgents() error {
	var errs []error
	for _, n := range sb.agentNodes() {
		errs = append(errs, sb.StartAgent(n))
	}
	return errors.Join(errs...)
}

// stopAgents stops every agent, whether or not this handle would start
// them (a sandbox being destroyed must leave nothing behind).
func (sb *Sandbox) stopAgents(ctx context.Context) error {
	var errs []error
	for _, n := range sb.agentNodes() {
		errs = append(errs, sb.StopAgent(ctx, n))
	}
	return errors.Join(errs...)
}
