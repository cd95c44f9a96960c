// Package nodeexec lets an agent run its node's server when the node is
// not a sandbox's: through shell commands, by default those of systemd and
// Debian's MariaDB packages. With it the controller's lifecycle actions —
// recover a crashed node's position, bootstrap the most advanced node,
// start the others, promote a survivor without quorum — work on any
// machine, not only in the sandbox.
package nodeexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/galeon-db/galeon/internal/galera"
)

// Commands are the shell commands (run with /bin/sh -c; "{node}" stands
// for the node's name) that start and inspect one node's server.
type Commands struct {
	// RunningCmd exits 0 while the server runs.
	RunningCmd string
	// StartCmd starts the server so that it joins the cluster. When the
	// control plane chose donors for the join, StartCmd and RestartCmd
	// run with GALEON_SST_DONORS=node3,node2 (best first) in their
	// environment, to pass on as wsrep_sst_donor.
	StartCmd string
	// BootstrapCmd starts the server as a new Primary component (the
	// node is first marked safe_to_bootstrap in Grastate).
	BootstrapCmd string
	// RecoverCmd prints the position InnoDB recovered after a crash, as
	// UUID:SEQNO anywhere in its output (galera_recovery prints
	// --wsrep_start_position=UUID:SEQNO, mariadbd --wsrep-recover logs
	// "Recovered position: UUID:SEQNO").
	RecoverCmd string
	// PromoteCmd makes the running server, without quorum, a Primary
	// component of its own (pc.bootstrap=YES).
	PromoteCmd string
	// RestartCmd restarts the server cleanly; StopCmd stops it.
	RestartCmd, StopCmd string
	// ReadOnlyCmd sets the running server's read_only to {value} (ON or
	// OFF), for the fence of a replica's promotion; optional.
	ReadOnlyCmd string
	// Grastate is the node's grastate.dat.
	Grastate string
}

// Systemd returns the commands for a node run by systemd under unit, as
// Debian's mariadb-server and galera-4 packages install it:
// galera_new_cluster bootstraps, galera_recovery recovers the position,
// and root reaches the server over its socket.
func Systemd(unit, grastate string) Commands {
	return Commands{
		// Not is-active: a Type=notify unit stays "activating" for a
		// whole SST and "deactivating" during a long shutdown, with
		// mariadbd running all along.
		RunningCmd:   `case "$(systemctl show -p ActiveState --value ` + unit + `)" in inactive|failed|"") exit 1;; esac`,
		StartCmd:     "systemctl start " + unit,
		BootstrapCmd: "galera_new_cluster " + unit,
		RecoverCmd:   "galera_recovery",
		PromoteCmd:   `mariadb -e "SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'"`,
		RestartCmd:   "systemctl restart " + unit,
		StopCmd:      "systemctl stop " + unit,
		// A global read lock is taken: a long write on the node must not
		// keep it waiting (and new writes behind it) for long.
		ReadOnlyCmd: `mariadb -e "SET SESSION lock_wait_timeout = 5; SET GLOBAL read_only = {value}"`,
		Grastate:    grastate,
	}
}

// Validate names the first command that is missing.
func (c Commands) Validate() error {
	for _, x := range []struct{ name, cmd string }{{"running", c.RunningCmd}, {"start", c.StartCmd},
		{"bootstrap", c.BootstrapCmd}, {"recover", c.RecoverCmd}, {"promote", c.PromoteCmd}, {"restart", c.RestartCmd}, {"stop", c.StopCmd}, {"grastate", c.Grastate}} {
		if strings.TrimSpace(x.cmd) == "" {
			return fmt.Errorf("node commands: %s is empty", x.name)
		}
	}
	return nil
}

// Running reports whether the node's server runs (a command that does
// not answer within 5 s says no).
func (c Commands) Running(node string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.run(ctx, c.RunningCmd, node) == nil
}

// Position is a stopped node's last committed position: grastate.dat after
// a clean stop, else what Recover finds in InnoDB.
func (c Commands) Position(ctx context.Context, node string) (galera.Grastate, error) {
	if c.Running(node) {
		return galera.Grastate{}, fmt.Errorf("%s is running: its position is what it reports", node)
	}
	g, err := galera.ReadGrastate(c.Grastate)
	if err == nil && g.Seqno >= 0 && g.UUID != "" {
		return g, nil
	}
	out, err := c.output(ctx, c.RecoverCmd, node)
	if err != nil {
		return galera.Grastate{}, err
	}
	m := recovered.FindAllStringSubmatch(out, -1)
	if m == nil {
		return galera.Grastate{}, fmt.Errorf("recover: no UUID:SEQNO in the output of %q: %s", c.RecoverCmd, tail(out))
	}
	last := m[len(m)-1]
	seqno, _ := strconv.ParseInt(last[2], 10, 64)
	g.UUID, g.Seqno = last[1], seqno
	return g, nil
}

var recovered = regexp.MustCompile(`([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):(-?[0-9]+)`)

// BootstrapNode marks the node safe to bootstrap and starts it as a new
// Primary component.
func (c Commands) BootstrapNode(ctx context.Context, node string) error {
	if c.Running(node) {
		return fmt.Errorf("%s is already running", node)
	}
	if err := galera.SetSafeToBootstrap(c.Grastate); err != nil {
		return fmt.Errorf("mark %s safe to bootstrap: %w", node, err)
	}
	return c.run(ctx, c.BootstrapCmd, node)
}

// StartNode starts the node's server; it joins the cluster.
func (c Commands) StartNode(ctx context.Context, node string) error {
	return c.run(ctx, c.StartCmd, node)
}

// PromoteNode makes the running node a Primary component of its own.
func (c Commands) PromoteNode(ctx context.Context, node string) error {
	return c.run(ctx, c.PromoteCmd, node)
}

// RestartNode restarts the node's server cleanly.
func (c Commands) RestartNode(ctx context.Context, node string) error {
	return c.run(ctx, c.RestartCmd, node)
}

// StopNode stops the node's server cleanly.
func (c Commands) StopNode(ctx context.Context, node string) error {
	return c.run(ctx, c.StopCmd, node)
}

// CanSetReadOnly says whether ReadOnlyCmd is given.
func (c Commands) CanSetReadOnly() bool { return c.ReadOnlyCmd != "" }

// SetReadOnly sets the node's read_only with ReadOnlyCmd.
func (c Commands) SetReadOnly(ctx context.Context, node string, on bool) error {
	if c.ReadOnlyCmd == "" {
		return errors.New("no --read-only-cmd is given to set read_only")
	}
	value := "OFF"
	if on {
		value = "ON"
	}
	return c.run(ctx, strings.ReplaceAll(c.ReadOnlyCmd, "{value}", value), node)
}

func (c Commands) run(ctx context.Context, cmd, node string) error {
	_, err := c.output(ctx, cmd, node)
	return err
}

func (c Commands) output(ctx context.Context, cmd, node string) (string, error) {
	line := strings.ReplaceAll(cmd, "{node}", node)
	x := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	// Output goes to a file, not a pipe: a command may leave a server
	// running in the background with its output still open, and a pipe
	// would keep this call waiting for that server to exit.
	f, err := os.CreateTemp("", "galeon-nodeexec-*.out")
	if err != nil {
		return "", fmt.Errorf("%q: %w", line, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	x.Stdout, x.Stderr = f, f
	if donors := galera.DonorsFrom(ctx); len(donors) > 0 {
		// The control plane's donors for this join, for commands that
		// pass them on (galeon sandbox start-node does; with systemd,
		// e.g. `systemctl set-environment MYSQLD_OPTS=--wsrep_sst_donor=$GALEON_SST_DONORS`).
		x.Env = append(os.Environ(), "GALEON_SST_DONORS="+strings.Join(donors, ","))
	}
	// When ctx ends, the whole process group goes, not only the shell (a
	// mariadbd --wsrep-recover that hangs, say).
	x.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	x.Cancel = func() error { return syscall.Kill(-x.Process.Pid, syscall.SIGKILL) }
	err = x.Run()
	var out bytes.Buffer
	if _, serr := f.Seek(0, io.SeekStart); serr == nil {
		_, _ = io.Copy(&out, io.LimitReader(f, 1<<20))
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), fmt.Errorf("%q: %v: %s", line, ee, tail(out.String()))
	case err != nil:
		return out.String(), fmt.Errorf("%q: %w", line, err)
	}
	return out.String(), nil
}

// tail is the last lines of a command's output, for error messages.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

// BackupArgs are mariabackup's arguments for the node, run beside it: it
// reads the server's own configuration (/etc/mysql: data directory,
// socket), and logs in as root over the socket (unix_socket, as Debian's
// packages set root up); the data directory is the server's @@datadir.
func (c Commands) BackupArgs(string) ([]string, string, error) {
	return []string{"--user=root"}, "", nil
}
