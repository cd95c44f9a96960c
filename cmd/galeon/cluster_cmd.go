package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/archive"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/sandbox"
)

const clusterUsage = `usage: galeon cluster ACTION [--name SANDBOX | --discovery etcd://H:P,... --cluster NAME] [flags]
       galeon cluster rolling-restart [--config KEY=VALUE ...]
       galeon cluster stop|start
       galeon cluster recover [--force NODE]
       galeon cluster add
       galeon cluster remove NODE
       galeon cluster ddl [--schema DB] [--method auto|toi|rsu] [--dry-run] [--node-user U] "STATEMENT"
       galeon cluster ddl --resume | --abandon
       galeon cluster backup [--dir DIR] [--node-user U]
       galeon cluster restore --from-backup DIR --name NEW [--base-port P] [--nodes N]
                              [--archive DIR [--until 'UTC TIME' | --until-gtid GTID]]

  rolling-restart   restart every node, one at a time, at no cost to clients: each node is
                    drained through every proxy, restarted, and takes traffic again once
                    Synced; the writer goes last, after a switchover through the controller.
                    --config sets [mariadbd] options the nodes use from their restart (sandbox).
                    Stops at the first node that does not come back, saying why.
  stop              stop every node cleanly, the writer last; the controller does not bring
                    the cluster back until start (the agents keep reporting positions)
  start             the controller bootstraps the most advanced node and the others join;
                    returns once every node is Synced
  add               start a new node: it joins by state transfer from donors the control
                    plane chooses (never the writer while another can serve, IST first) and
                    returns once it is Synced and every proxy routes to it (sandbox)
  remove            take a node out: the writer moves off it first, every proxy drains it
                    and its in-flight work finishes, then it leaves the group cleanly
  ddl               run one ALTER TABLE, CREATE INDEX or DROP INDEX so that clients notice
                    as little as possible. galeon probes it on an empty copy of the table
                    (on the writer, not replicated) and chooses: TOI when MariaDB makes it
                    as a metadata change only (ALGORITHM=INSTANT); else, when rows
                    replicate between the old and new table both ways (an index, a
                    nullable or defaulted column at the end, a rebuild), RSU rolled one
                    node at a time, each drained through every proxy, readers first, the
                    writer last after a switchover; else it refuses and says why
                    (--method toi forces TOI and its cluster-wide write stall). --dry-run
                    prints the decision only. The operation is recorded in etcd, one at a
                    time: --resume goes on after an interruption, --abandon forgets it
                    (a sandbox's nodes are reached with its admin account; others', at
                    the addresses their agents registered, as --node-user with the
                    password in $GALEON_NODE_PASSWORD)
  backup            a full physical backup (mariabackup) at no cost to clients: from a Synced
                    node that is not the writer (the most advanced), drained through every
                    proxy and desynchronised while it copies (flow control never stalls the
                    writer), then resynchronised and given traffic again; the copy is
                    prepared, checked, and described in galeon-backup.json (node, Galera
                    position uuid:seqno, GTID, size, times). --dir (default
                    /var/tmp/galeon-backups/NAME) gets one directory per backup.
                    galeon sandbox up --from-backup DIR starts a new cluster from it (sandbox).
                    With --discovery, the node's agent runs mariabackup on its machine, into
                    --dir there (default /var/tmp/galeon-backups); galeon desyncs the node
                    as --node-user, its password in $GALEON_NODE_PASSWORD
  restore           start a new cluster from a backup: the first node gets its files and
                    Galera position and bootstraps, the others join by state transfer
                    (the same as galeon sandbox up --from-backup DIR; a sandbox for now).
                    With --archive (a binary log archive: galeon agent --replica R
                    --archive DIR; a sandbox's is DIR/archive of the sandbox), the
                    archive's transactions after the backup's GTID are replayed into it:
                    all of them, those before --until (UTC, whole seconds: transactions
                    of that second are left out), or up to --until-gtid (inclusive).
                    A point-in-time recovery: restore to just before a bad DELETE.
  recover           show what the controller says about recovering the cluster and each
                    node's position. With --force NODE: recover from NODE although the
                    controller cannot prove it is the most advanced (a node lost for good,
                    its agent gone); NODE is bootstrapped, or promoted in place if it runs
                    without quorum. Transactions only the other nodes had are lost.

A sandbox's nodes are run through the sandbox (--name, the default). With --discovery and
--cluster instead, nodes anywhere are run through their agents, which must manage them
(galeon agent --manage systemd, or --restart-cmd/--stop-cmd/...).
`

// runCluster manages a running cluster through its control plane: a
// sandbox's (its nodes run through the sandbox), or any cluster's, found
// through its etcd (its nodes run through their agents).
func runCluster(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "restore" {
		return runRestore(ctx, args[1:])
	}
	if len(args) == 0 || !slices.Contains([]string{"rolling-restart", "stop", "start", "recover", "add", "remove", "ddl", "backup"}, args[0]) {
		fmt.Fprint(os.Stderr, clusterUsage)
		return errors.New("an action is required: rolling-restart, stop, start, recover, add, remove, ddl or backup")
	}
	action := args[0]
	fs := flag.NewFlagSet("cluster "+action, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, clusterUsage) }
	name := fs.String("name", sandbox.DefaultName, "sandbox whose nodes to manage")
	df := addDiscoveryFlags(fs)
	options := keyValues{}
	fs.Var(options, "config", "[mariadbd] option KEY=VALUE to apply with the restart, repeatable (sandbox)")
	force := fs.String("force", "", "recover: the node to recover the cluster from")
	var ddl ddlFlags
	ddl.add(fs)
	backupDir := fs.String("dir", "", "backup: the directory that gets one directory per backup (default /var/tmp/galeon-backups/NAME)")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	viaAgents := false
	fs.Visit(func(f *flag.Flag) { viaAgents = viaAgents || f.Name == "discovery" || f.Name == "cluster" })
	start := time.Now()
	ctl := cliControl(start)
	progress := ctl.Progress
	var sb *sandbox.Sandbox
	var store *discovery.Store
	if viaAgents {
		var err error
		if store, err = df.open(ctx, 3*time.Second); err != nil {
			return err
		}
	} else {
		if sb, err = sandbox.Open(sandbox.DirFor(*name), ctl); err != nil {
			return err
		}
		if sb.Discovery == "" {
			return fmt.Errorf("sandbox %q has no control plane (created with --discovery none): galeon cluster works through it (use galeon sandbox for this one)", sb.Name)
		}
		if store, err = openControlStore(ctx, sb.Discovery, sb.Name); err != nil {
			return err
		}
	}
	defer store.Close()
	who := "galeon cluster " + action + " (" + whoAmI() + ")"
	// A sandbox's nodes are run through the sandbox, others' through
	// their agents.
	var restart, stop func(ctx context.Context, node string) error
	if sb != nil {
		restart, stop = sb.Restart, sb.StopNode
	} else {
		restart, stop = lifecycle.ThroughAgents(store, discovery.ActionRestart, who, 10*time.Minute),
			lifecycle.ThroughAgents(store, discovery.ActionStop, who, 5*time.Minute)
	}
	switch action {
	case "ddl":
		return runDDL(ctx, sb, store, pos, ddl, who, progress)
	case "backup":
		return runBackup(ctx, sb, store, *backupDir, *ddl.nodeUser, who, progress)
	case "stop":
		if err := lifecycle.StopCluster(ctx, store, stop, who, progress); err != nil {
			return err
		}
		fmt.Println("cluster stopped; the agents report each node's position; `galeon cluster start` brings it back")
		return nil
	case "start":
		if err := lifecycle.StartCluster(ctx, store, 5*time.Minute, progress); err != nil {
			return err
		}
		fmt.Printf("cluster up: every node Synced (%s)\n", time.Since(start).Round(time.Second))
		return nil
	case "recover":
		if *force == "" {
			return showRecovery(ctx, store)
		}
		if err := lifecycle.ForceRecovery(ctx, store, *force, "galeon cluster recover --force "+*force+" ("+whoAmI()+")", 5*time.Minute, progress); err != nil {
			return err
		}
		fmt.Printf("cluster recovered from %s: every node Synced (%s)\n", *force, time.Since(start).Round(time.Second))
		return nil
	case "add":
		if sb == nil {
			return errors.New("add provisions a sandbox node; elsewhere, start mariadb on the new machine with `galeon agent` beside it: it registers, and every proxy routes to it once Synced")
		}
		useControlDonors(ctx, sb, store, progress)
		n, err := addNode(ctx, sb, store, progress)
		if err != nil {
			return err
		}
		fmt.Printf("%s added on %s and routed by every proxy; cluster size %d (%s)\n", n.Name, n.Addr(), len(sb.Nodes), time.Since(start).Round(100*time.Millisecond))
		return nil
	case "remove":
		if len(pos) != 1 {
			return errors.New("usage: galeon cluster remove NODE")
		}
		if sb != nil {
			err = removeNode(ctx, sb, store, pos[0], progress)
		} else {
			err = lifecycle.Membership{Store: store, Progress: progress}.Remove(ctx, pos[0], stop)
		}
		if err != nil {
			return err
		}
		fmt.Printf("%s removed (%s)\n", pos[0], time.Since(start).Round(100*time.Millisecond))
		return nil
	}
	if sb != nil {
		if err := sb.SetServerOptions(options); err != nil {
			return err
		}
		useControlDonors(ctx, sb, store, progress)
	} else if len(options) > 0 {
		return errors.New("--config changes a sandbox's my.cnf; elsewhere change the nodes' configuration with your own tools, then rolling-restart")
	}
	if err := (lifecycle.Rolling{Store: store, Restart: restart, Progress: progress}).Run(ctx); err != nil {
		return err
	}
	fmt.Printf("rolling restart done in %s\n", time.Since(start).Round(time.Second))
	return nil
}

// showRecovery prints the controller's latest word on recovery and what
// each node's agent reports about its position.
func showRecovery(ctx context.Context, store *discovery.Store) error {
	nodes, err := store.Nodes(ctx)
	if err != nil {
		return err
	}
	st, err := store.ReadRecoveryStatus(ctx)
	if err != nil {
		return err
	}
	if st == nil {
		fmt.Println("controller: no recovery so far")
	} else {
		blocked := ""
		if st.Blocked {
			blocked = " [needs an operator]"
		}
		fmt.Printf("controller %s at %s%s:\n  %s\n", st.Controller, st.At.Local().Format(time.DateTime), blocked, st.Status)
	}
	fmt.Printf("%-8s %-9s %-12s %-38s %s\n", "node", "running", "status", "cluster uuid", "seqno")
	for _, n := range nodes {
		running, status, uuid, seqno := "unknown", n.ClusterStatus, n.StateUUID, fmt.Sprint(n.LastCommitted)
		switch {
		case n.Up:
			running = "yes"
		case n.Stopped:
			running, status, uuid, seqno = "no", "stopped", "", "unknown"
			if p := n.Position; p != nil {
				uuid, seqno = p.UUID, fmt.Sprint(p.Seqno)
				if p.SafeToBootstrap {
					seqno += " (safe_to_bootstrap)"
				}
			}
		}
		fmt.Printf("%-8s %-9s %-12s %-38s %s\n", n.Name, running, status, uuid, seqno)
	}
	return nil
}

// whoAmI names the operator for the record: user@host.
func whoAmI() string {
	host, _ := os.Hostname()
	if u, err := user.Current(); err == nil {
		return u.Username + "@" + host
	}
	return host
}

// useControlDonors has sb's joiners take their donors from the control
// plane (lifecycle.SandboxDonors).
func useControlDonors(ctx context.Context, sb *sandbox.Sandbox, store *discovery.Store, progress func(node, msg string)) {
	donors := lifecycle.SandboxDonors(ctx, store, func(msg string) { progress("-", msg) })
	sb.SetDonors(func(n sandbox.Node, seqno int64) []string { return donors(n.Name, seqno) })
}

// addNode adds a node to sb: through the control plane (store) when there
// is one, so it returns once every proxy routes to the node; else
// directly.
func addNode(ctx context.Context, sb *sandbox.Sandbox, store *discovery.Store, progress func(node, msg string)) (sandbox.Node, error) {
	var n sandbox.Node
	provision := func(ctx context.Context) (string, error) {
		var err error
		n, err = sb.Add(ctx)
		return n.Name, err
	}
	if store == nil {
		_, err := provision(ctx)
		return n, err
	}
	_, err := lifecycle.Membership{Store: store, Progress: progress}.Add(ctx, provision)
	return n, err
}

// removeNode removes node from sb: through the control plane when there
// is one (the writer moves off it, every proxy drains it first); else
// directly.
func removeNode(ctx context.Context, sb *sandbox.Sandbox, store *discovery.Store, node string, progress func(node, msg string)) error {
	if store == nil {
		return sb.Remove(ctx, node)
	}
	return lifecycle.Membership{Store: store, Progress: progress}.Remove(ctx, node, sb.Remove)
}

// runRestore starts a new cluster from a backup: today a sandbox's, as
// sandbox up --from-backup makes it (--name NEW, --base-port P, --nodes
// N); with --archive, it then replays the archive's transactions after the
// backup's position, up to --until or --until-gtid.
func runRestore(ctx context.Context, args []string) error {
	var archiveDir, until, untilGTID, name, from, sbDir string
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		target := map[string]*string{"archive": &archiveDir, "until": &until, "until-gtid": &untilGTID}[key]
		if strings.HasPrefix(a, "-") && target != nil {
			if !hasVal {
				if i+1 >= len(args) {
					return fmt.Errorf("%s needs a value", a)
				}
				i++
				val = args[i]
			}
			*target = val
			continue
		}
		// sandbox up reads these too; the replay needs them.
		if seen := map[string]*string{"name": &name, "from-backup": &from, "dir": &sbDir}[key]; strings.HasPrefix(a, "-") && seen != nil {
			if !hasVal && i+1 < len(args) {
				val = args[i+1]
			}
			*seen = val
		}
		rest = append(rest, a)
	}
	if archiveDir == "" && (until != "" || untilGTID != "") {
		return errors.New("--until and --until-gtid replay a binary log archive: give it with --archive DIR")
	}
	u, err := archive.ParseUntil(until, untilGTID)
	if err != nil {
		return err
	}
	var info lifecycle.BackupInfo
	var domain uint32
	if archiveDir != "" {
		if from == "" {
			return errors.New("--archive replays onto a backup: give it with --from-backup DIR")
		}
		if info, err = lifecycle.ReadBackupInfo(from); err != nil {
			// A copy made by hand: its own files say where it stands.
			if info, err = lifecycle.PositionOf(from); err != nil {
				return fmt.Errorf("the backup's position, where the replay starts: %w", err)
			}
		}
		if info.GTID == "" {
			return fmt.Errorf("the backup %s records no GTID position (its nodes kept no binary log): the archive cannot be replayed onto it", from)
		}
		if domain, err = archive.ClusterDomain(info.GTID, untilGTID, info.Domain); err != nil {
			return err
		}
		if _, err := os.Stat(archiveDir); err != nil {
			return fmt.Errorf("the archive: %w", err)
		}
	}
	if err := runSandbox(ctx, append([]string{"up"}, rest...)); err != nil {
		return err
	}
	if archiveDir == "" {
		return nil
	}
	if name == "" {
		name = sandbox.DefaultName
	}
	if sbDir == "" {
		sbDir = sandbox.DirFor(name)
	}
	// The cluster just made, where sandbox up put it.
	sb, err := sandbox.Open(sbDir, cliControl(time.Now()))
	if err != nil {
		return err
	}
	c := sb.Credentials
	start := time.Now()
	fmt.Printf("replaying %s after the backup's position %s ...\n", archiveDir, info.GTID)
	done, err := archive.Replay(ctx, archiveDir, info.GTID, domain, u, archive.Target{Address: sb.Nodes[0].Addr(), User: c.AdminUser, Password: c.AdminPassword})
	if err != nil {
		return fmt.Errorf("replaying the archive into %s: %w", sb.Nodes[0].Name, err)
	}
	if done.Transactions == 0 {
		if u == (archive.Until{}) {
			fmt.Printf("the archive holds no transaction after the backup's position %s (nothing to replay)\n", info.GTID)
		} else {
			fmt.Printf("no archived transaction after the backup's position %s comes before the point asked (nothing to replay)\n", info.GTID)
		}
		return nil
	}
	fmt.Printf("replayed %d transactions, %s .. %s (the last at %s UTC), in %s\n", done.Transactions, done.First, done.Last,
		done.LastAt.Format("2006-01-02 15:04:05"), time.Since(start).Round(time.Millisecond))
	if done.Note != "" {
		fmt.Println("note: " + done.Note)
	}
	return nil
}
