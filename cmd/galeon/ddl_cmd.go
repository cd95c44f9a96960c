package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/schemachange"
)

// ddlFlags are galeon cluster ddl's own flags.
type ddlFlags struct {
	schema, method, nodeUser *string
	dryRun, resume, abandon  *bool
}

func (f *ddlFlags) add(fs *flag.FlagSet) {
	f.schema = fs.String("schema", "", "ddl: the database of a statement that names none")
	f.method = fs.String("method", "auto", "ddl: auto, toi or rsu")
	f.dryRun = fs.Bool("dry-run", false, "ddl: print the decision, change nothing")
	f.resume = fs.Bool("resume", false, "ddl: go on with the recorded schema change")
	f.abandon = fs.Bool("abandon", false, "ddl: forget the recorded schema change (after putting the cluster right by hand)")
	f.nodeUser = fs.String("node-user", "", "ddl with --discovery: the account galeon uses on every node (DDL, SET GLOBAL); its password from $GALEON_NODE_PASSWORD")
}

// runDDL is galeon cluster ddl.
func runDDL(ctx context.Context, sb *sandbox.Sandbox, store *discovery.Store, pos []string, f ddlFlags, who string, progress func(node, msg string)) error {
	var open, replicaDB func(string) (*sql.DB, error)
	switch {
	case sb != nil:
		open, replicaDB = sb.LongAdminDB, lifecycle.AddrDB(sb.Credentials.AdminUser, sb.Credentials.AdminPassword)
	case *f.nodeUser == "":
		return errors.New("galeon cluster ddl reaches every node's server with an account that may run DDL and SET GLOBAL: give --node-user, its password in $GALEON_NODE_PASSWORD")
	default:
		open = lifecycle.DirectNodeDB(store, *f.nodeUser, os.Getenv("GALEON_NODE_PASSWORD"))
		replicaDB = lifecycle.AddrDB(*f.nodeUser, os.Getenv("GALEON_NODE_PASSWORD")) // the cluster's accounts replicate to its replicas
	}
	nodeDB, closeAll := lifecycle.CachedNodeDB(open)
	defer closeAll()
	sc := lifecycle.SchemaChange{Store: store, By: who, Progress: progress, DB: nodeDB, ReplicaDB: replicaDB}
	start := time.Now()
	switch {
	case *f.abandon:
		op, err := sc.Abandon(ctx)
		if err != nil {
			return err
		}
		if op == nil {
			fmt.Println("no operation is recorded")
			return nil
		}
		fmt.Printf("forgot %s %s (%s); changed so far: %v\n", op.Kind, op.ID, op.Statement, op.Done)
		if op.Current != "" {
			fmt.Printf("it stopped at %s (%s), which may still be drained: `galeon proxy drain %s --undo` gives it traffic again\n", op.Current, op.Step, op.Current)
		}
		return nil
	case *f.resume:
		res, err := sc.Resume(ctx)
		if err != nil {
			return err
		}
		printDDLResult(res)
		return nil
	}
	if len(pos) != 1 {
		return errors.New(`usage: galeon cluster ddl [--schema DB] [--method auto|toi|rsu] [--dry-run] "STATEMENT" (one statement, quoted)`)
	}
	method, err := schemachange.ParseMethod(*f.method)
	if err != nil {
		return err
	}
	p, err := sc.Prepare(ctx, pos[0], *f.schema, method)
	if err != nil {
		return err
	}
	printDDLPlan(p)
	if *f.dryRun || p.Plan.Refused {
		if p.Plan.Refused {
			return errors.New("refused, nothing was run (why: above)")
		}
		return nil
	}
	res, err := sc.Run(ctx, p)
	if err != nil {
		return err
	}
	printDDLResult(res)
	fmt.Printf("schema change done in %s\n", time.Since(start).Round(10*time.Millisecond))
	return nil
}

func printDDLPlan(p lifecycle.Prepared) {
	fmt.Printf("statement: %s\n", p.Statement())
	probe := "not probed"
	switch {
	case p.Probe.Instant:
		probe = "instant (metadata only)"
	case p.Probe.Ran:
		probe = "not instant: " + p.Probe.Why
	case p.Probe.Why != "":
		probe = p.Probe.Why
	}
	fmt.Printf("probe on an empty copy (on %s, not replicated): %s\n", p.Writer, probe)
	if p.Plan.Refused {
		fmt.Println("decision: refused")
	} else {
		fmt.Printf("decision: %s\n", strings.ToUpper(string(p.Plan.Method)))
	}
	fmt.Printf("why: %s\n", p.Plan.Why)
	for _, u := range p.Plan.Unsafe {
		fmt.Printf("  not rollable: %s\n", u)
	}
}

func printDDLResult(res lifecycle.Result) {
	nodes := make([]string, 0, len(res.Seconds))
	for n := range res.Seconds {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		fmt.Printf("  %-8s %.1fs\n", n, res.Seconds[n])
		if res.Method == schemachange.TOI {
			// TOI holds every node's commits while the statement runs.
			fmt.Printf("  write stall (TOI): up to %.2fs on every node\n", res.Seconds[n])
		}
	}
}

// runBackup is galeon cluster backup: beside a sandbox's nodes on this
// machine, or through the agents elsewhere (the copy is then on the
// node's machine).
func runBackup(ctx context.Context, sb *sandbox.Sandbox, store *discovery.Store, dir, nodeUser, who string, progress func(node, msg string)) error {
	start := time.Now()
	path, info, err := takeBackup(ctx, sb, store, dir, nodeUser, who, progress)
	if err != nil {
		return err
	}
	fmt.Printf("backup of %s in %s: %.1f MiB, Galera position %s:%d", info.Node, path, float64(info.Bytes)/(1<<20), info.UUID, info.Seqno)
	if info.GTID != "" {
		fmt.Printf(", GTID %s", info.GTID)
	}
	fmt.Printf("\ncopy %.1fs, prepare %.1fs, in all %s\n", info.CopySeconds, info.PrepareSeconds, time.Since(start).Round(100*time.Millisecond))
	if sb != nil {
		fmt.Printf("start a cluster from it: galeon cluster restore --from-backup %s --name NEW --base-port P\n", path)
	} else {
		fmt.Printf("it is on %s's machine. To start a cluster from it: copy it to the new first node's empty data directory\n"+
			"(mariabackup --copy-back --target-dir=%s), write grastate.dat with the position above and\n"+
			"safe_to_bootstrap: 1, and bootstrap that node; or copy it here: galeon cluster restore --from-backup DIR --name NEW\n", info.Node, path)
	}
	return nil
}

// takeBackup is the backup itself: its directory and what it holds.
func takeBackup(ctx context.Context, sb *sandbox.Sandbox, store *discovery.Store, dir, nodeUser, who string, progress func(node, msg string)) (string, lifecycle.BackupInfo, error) {
	b := lifecycle.Backup{Store: store, By: who, Progress: progress}
	var open func(string) (*sql.DB, error)
	if sb != nil {
		if dir == "" {
			dir = "/var/tmp/galeon-backups/" + sb.Name
		}
		open = sb.LongAdminDB
		b.Copier = lifecycle.LocalCopier{Source: func(node string) (lifecycle.BackupSource, error) {
			args, data, err := sb.BackupArgs(node)
			return lifecycle.BackupSource{Args: args, DataDir: data}, err
		}}
	} else {
		if nodeUser == "" {
			return "", lifecycle.BackupInfo{}, errors.New("galeon cluster backup desynchronises the node it copies (SET GLOBAL wsrep_desync): give --node-user, an account that may, its password in $GALEON_NODE_PASSWORD")
		}
		if dir == "" {
			dir = "/var/tmp/galeon-backups"
		}
		if !filepath.IsAbs(dir) {
			return "", lifecycle.BackupInfo{}, fmt.Errorf("--dir %s: give an absolute path: it is a directory on the chosen node's machine, where its agent runs mariabackup", dir)
		}
		open = lifecycle.DirectNodeDB(store, nodeUser, os.Getenv("GALEON_NODE_PASSWORD"))
		b.Copier = lifecycle.AgentCopier{Store: store, By: who}
	}
	nodeDB, closeAll := lifecycle.CachedNodeDB(open)
	defer closeAll()
	b.DB = nodeDB
	return b.Run(ctx, dir)
}
