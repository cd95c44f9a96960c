package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/sandbox"
)

const replicaUsage = `usage: galeon replica ACTION [--name SANDBOX | --discovery etcd://H:P,... --cluster NAME]
       galeon replica list
       galeon replica add              (sandbox)

  list   each asynchronous replica as its agent reports it: the node it replicates
         from, how far behind (transactions of the cluster's GTID domain, and
         Seconds_Behind_Master), how often it was moved, and its agent's last word
  add    add an asynchronous replica to a sandbox made with --replicas: a new
         MariaDB server (no wsrep, read-only) and its agent, which points it at the
         writer by GTID and moves it to every new writer once that writer has logged
         everything the replica applied

Elsewhere, run galeon agent --replica NAME --address H:P --user U --source-user R beside
a MariaDB server that holds the cluster's data up to its gtid_slave_pos (restored from
galeon cluster backup, gtid_slave_pos set to the backup's GTID): the agent does the rest.
`

func runReplica(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "add") {
		fmt.Fprint(os.Stderr, replicaUsage)
		return errors.New("an action is required: list or add")
	}
	action := args[0]
	fs := flag.NewFlagSet("replica "+action, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, replicaUsage) }
	name := fs.String("name", sandbox.DefaultName, "sandbox")
	df := addDiscoveryFlags(fs)
	if _, err := parseInterleaved(fs, args[1:]); err != nil {
		return err
	}
	viaDiscovery := false
	fs.Visit(func(f *flag.Flag) { viaDiscovery = viaDiscovery || f.Name == "discovery" || f.Name == "cluster" })
	start := time.Now()
	var sb *sandbox.Sandbox
	var store *discovery.Store
	var err error
	if viaDiscovery {
		if action == "add" {
			return errors.New("add makes a replica in a sandbox (--name); elsewhere start galeon agent --replica beside your server (galeon replica -h)")
		}
		if store, err = df.open(ctx, 3*time.Second); err != nil {
			return err
		}
	} else {
		if sb, err = sandbox.Open(sandbox.DirFor(*name), cliControl(start)); err != nil {
			return err
		}
		if sb.Discovery == "" {
			return fmt.Errorf("sandbox %q has no control plane: a replica's agent follows the writer through it", sb.Name)
		}
		if store, err = openControlStore(ctx, sb.Discovery, sb.Name); err != nil {
			return err
		}
	}
	defer store.Close()
	if action == "add" {
		r, err := sb.AddReplica(ctx)
		if err != nil {
			return err
		}
		if err := sb.StartAgent(r); err != nil {
			return err
		}
		fmt.Printf("%s added on %s; its agent points it at the writer: galeon replica list --name %s\n", r.Name, r.Addr(), sb.Name)
		return nil
	}
	rs, err := store.Replicas(ctx)
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		fmt.Println("no replica is registered (galeon agent --replica registers one)")
		return nil
	}
	var d *discovery.WriterDecision
	if u, err := store.ReadDecision(ctx); err == nil && u.Present {
		d = &u.Decision
	}
	for _, r := range rs {
		fmt.Print(replicaLine(r, d))
		if r.Why != "" {
			fmt.Printf("        %s: %s\n", r.State, r.Why)
		}
	}
	return nil
}
