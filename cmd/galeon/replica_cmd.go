package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/sandbox"
)

const replicaUsage = `usage: galeon replica ACTION [--name SANDBOX | --discovery etcd://H:P,... --cluster NAME]
       galeon replica list
       galeon replica add              (sandbox)
       galeon replica promote NAME [--force] [--catch-up 30s]
       galeon replica unfence

  list   each asynchronous replica as its agent reports it: the node it replicates
         from, how far behind (transactions of the cluster's GTID domain, and
         Seconds_Behind_Master), how often it was moved, and its agent's last word
  add    add an asynchronous replica to a sandbox made with --replicas: a new
         MariaDB server (no wsrep, read-only) and its agent, which points it at the
         writer by GTID and moves it to every new writer once that writer has logged
         everything the replica applied

  promote  make replica NAME a writable primary of its own in the cluster's place
         (disaster recovery): the cluster is fenced — the controller names no writer,
         so no proxy that still sees it writes there (writes answer 9001 naming the
         replica) — and the replica's agent stops replicating, forgets its source and
         takes writes, once it has the cluster's last position (or --catch-up has
         passed: then it says how many transactions it lacks). Refused while the
         cluster runs unless --force (a planned move to the DR site: writes stop
         first, and the replica takes them once it has everything: nothing lost)
  unfence  lift the fence: the controller may name a writer in the old cluster again
         (whatever the promoted replica took since is not in the cluster)

Elsewhere, run galeon agent --replica NAME --address H:P --user U --source-user R beside
a MariaDB server that holds the cluster's data up to its gtid_slave_pos (restored from
galeon cluster backup, gtid_slave_pos set to the backup's GTID): the agent does the rest.
`

func runReplica(ctx context.Context, args []string) error {
	if len(args) == 0 || !slices.Contains([]string{"list", "add", "promote", "unfence"}, args[0]) {
		fmt.Fprint(os.Stderr, replicaUsage)
		return errors.New("an action is required: list, add, promote or unfence")
	}
	action := args[0]
	fs := flag.NewFlagSet("replica "+action, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, replicaUsage) }
	name := fs.String("name", sandbox.DefaultName, "sandbox")
	df := addDiscoveryFlags(fs)
	force := fs.Bool("force", false, "promote: while the cluster runs (a planned move: its writes stop first)")
	catchUp := fs.Duration("catch-up", 30*time.Second, "promote: how long the replica may take to apply the cluster's last position")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	viaDiscovery := false
	fs.Visit(func(f *flag.Flag) { viaDiscovery = viaDiscovery || f.Name == "discovery" || f.Name == "cluster" })
	start := time.Now()
	var sb *sandbox.Sandbox
	var store *discovery.Store
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
	switch action {
	case "promote":
		if len(pos) != 1 {
			return errors.New("promote takes the replica's name: galeon replica promote NAME")
		}
		res, err := lifecycle.Promote{Store: store, Replica: pos[0], By: "galeon replica promote (" + whoAmI() + ")", Force: *force,
			CatchUp: *catchUp, Progress: cliControl(start).Progress}.Run(ctx)
		if err != nil {
			return err
		}
		if len(res.Members) > 0 {
			fmt.Printf("the DR cluster %s is a writable primary of its own, at gtid_slave_pos %s (%s): its agent makes its nodes (%s) writable, one that does not answer now once it does, and its proxies then name a writer\n",
				res.Replica, orDash(res.SlavePos), res.Took.Round(time.Millisecond), strings.Join(res.Members, ", "))
		} else {
			fmt.Printf("%s (%s) is a writable primary of its own, at gtid_slave_pos %s (%s)\n", res.Replica, res.Address, orDash(res.SlavePos), res.Took.Round(time.Millisecond))
		}
		if res.Lost > 0 {
			fmt.Printf("not replicated: %d of the cluster's transactions (against the furthest position its agents or its writer reported)\n", res.Lost)
		} else {
			fmt.Printf("nothing the cluster's agents published is missing (the cluster's last position %s)\n", orDash(res.ClusterPos))
		}
		if res.Fenced {
			fmt.Println("the cluster is fenced in every proxy: writes through them answer 9001 naming the replica; point your clients at it")
		} else {
			fmt.Println("the fence is recorded, but not every proxy confirmed it in time (none runs, or some are cut off from the control plane): galeon status shows each proxy's writer; a proxy that saw the fence keeps refusing writes even if it loses the control plane later, one that never saw it does not know")
		}
		if len(res.ReadOnly) > 0 {
			fmt.Printf("read-only until unfenced (clients connected straight to them cannot write either; a node that comes back is made read-only by its agent): %s\n", strings.Join(res.ReadOnly, ", "))
		}
		for _, why := range res.NotReadOnly {
			fmt.Println(why)
		}
		return nil
	case "unfence":
		pr, still, err := lifecycle.Unfence(ctx, store)
		if err != nil {
			return err
		}
		if len(still) > 0 {
			fmt.Printf("still read-only (their agents did not lift it in time; SET GLOBAL read_only = OFF there): %s\n", strings.Join(still, ", "))
		}
		fmt.Printf("the fence is lifted: the controller may name a writer in the cluster again. %s stays a primary of its own: what it took since %s is not in the cluster\n", pr.Replica, pr.At.Format(time.RFC3339))
		return nil
	}
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
