package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/quorum"
	"github.com/galeon-db/galeon/internal/sandbox"
)

// runPlan answers "which single failure stops writes, and what should I
// change?" for a multi-site layout, before anything is built.
func runPlan(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	dc := fs.String("dc", "", "sites and their members: dc1:2,dc2:2,dc3:garbd (SITE:N, SITE:garbd, SITE:N+garbd)")
	layoutFile := fs.String("layout", "", "a layout file: SITE:N lines, weight MEMBER=N lines, # comments")
	name := fs.String("name", "", "plan the layout of this (multi-site) sandbox instead of --dc, with its links measured")
	disc := fs.String("discovery", "", "plan the running cluster whose agents register in this etcd (etcd://host:port,...)")
	cluster := fs.String("cluster", "galeon", "cluster name in etcd (--discovery)")
	arbs := fs.String("arbitrator", "", "sites of the cluster's members that have no agent (garbd), comma-separated (--discovery)")
	sample := fs.Duration("sample", 5*time.Second, "how long to watch the commit rate (--discovery)")
	weights := fs.String("weight", "", "pc.weight of members: dc1-1=2,dc3-garbd=1 (default 1)")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	maxNodes := fs.Int("max-nodes", 0, "the most data nodes the cluster will ever have: the AUTO_INCREMENT increment of the settings (default: the layout's)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	var l quorum.Layout
	var rtts []quorum.RTT
	var running quorum.Running // what the nodes run, if known
	var err error
	horizon := func(*quorum.Report) {}
	switch {
	case *name != "" && *dc == "" && *disc == "" && *layoutFile == "":
		if l, rtts, running, err = sandboxLayout(ctx, *name); err != nil {
			return err
		}
	case *dc != "" && *name == "" && *disc == "" && *layoutFile == "":
		if l, err = quorum.ParseLayout(*dc); err != nil {
			return fmt.Errorf("--dc: %w", err)
		}
	case *layoutFile != "" && *name == "" && *disc == "" && *dc == "":
		text, err := os.ReadFile(*layoutFile)
		if err != nil {
			return fmt.Errorf("--layout: %w", err)
		}
		if l, err = quorum.ParseLayoutText(string(text)); err != nil {
			return fmt.Errorf("--layout %s: %w", *layoutFile, err)
		}
	case *disc != "" && *name == "" && *dc == "" && *layoutFile == "":
		if *sample <= 0 {
			return fmt.Errorf("--sample %s: give a positive duration (how long to watch the commit rate)", *sample)
		}
		store, err := openControlStore(ctx, *disc, *cluster)
		if err != nil {
			return fmt.Errorf("--discovery %s: %w", *disc, err)
		}
		defer store.Close()
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		facts, err := store.Nodes(rctx)
		cancel()
		if err != nil {
			return fmt.Errorf("--discovery %s: reading the registered nodes: %w", *disc, err)
		}
		var sites []string
		if *arbs != "" {
			sites = strings.Split(*arbs, ",")
		}
		if l, rtts, err = clusterLayout(facts, sites); err != nil {
			return fmt.Errorf("cluster %q: %w", *cluster, err)
		}
		// Two readings of the commit counters, some seconds apart, give
		// the commit rate and so how long each gcache covers.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(*sample):
		}
		rctx, cancel = context.WithTimeout(ctx, 3*time.Second)
		later, err := store.Nodes(rctx)
		cancel()
		if err == nil {
			horizon = func(r *quorum.Report) { r.Horizon(gcacheHorizon(facts, later)) }
		}
	default:
		return errors.New("give one layout: --dc dc1:2,dc2:2,dc3:garbd, --layout FILE, a sandbox as --name NAME, or a running cluster as --discovery etcd://HOST:PORT --cluster NAME")
	}
	if *weights != "" {
		for _, kv := range strings.Split(*weights, ",") {
			name, v, ok := strings.Cut(kv, "=")
			w, err := strconv.Atoi(v)
			if !ok || err != nil {
				return fmt.Errorf("--weight %q: want MEMBER=N", kv)
			}
			if err := l.SetWeight(name, w); err != nil {
				return fmt.Errorf("--weight: %w", err)
			}
		}
	}
	r := quorum.PlanFor(l, quorum.Options{DefaultHoldDown: config.Defaults().Galera.SiteHoldDown.D(), MaxNodes: *maxNodes})
	r.Measured(rtts, running)
	horizon(&r)
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printPlan(os.Stdout, r)
	return nil
}

// printPlan writes the plan as a table an operator reads top to bottom.
func printPlan(w io.Writer, r quorum.Report) {
	fmt.Fprintln(w, "layout:")
	for _, s := range r.Layout.Sites {
		var ms []string
		for _, m := range r.Layout.Members {
			if m.Site == s {
				d := m.Name
				if m.Weight != 1 {
					d += fmt.Sprintf(" (weight %d)", m.Weight)
				}
				ms = append(ms, d)
			}
		}
		seg := 0
		for _, m := range r.Layout.Members {
			if m.Site == s {
				seg = m.Segment
			}
		}
		fmt.Fprintf(w, "  %-8s segment %d: %s\n", s, seg, strings.Join(ms, ", "))
	}
	fmt.Fprintln(w, "\n(lose: its members are down; cut off: they keep running, every link to the site is cut)")
	fmt.Fprintf(w, "  %-27s %-8s %s\n", "failure", "writes", "primary component (others stop)")
	for _, o := range r.Outcomes {
		fmt.Fprintln(w, "  "+o.Row().String())
	}
	if len(r.Warnings)+len(r.Advice) > 0 {
		fmt.Fprintln(w)
	}
	for _, s := range r.Warnings {
		fmt.Fprintln(w, "warning: "+s)
	}
	for _, s := range r.Advice {
		fmt.Fprintln(w, "advice:  "+s)
	}
	if len(r.Settings) > 0 {
		fmt.Fprintln(w, "\nsettings ([mariadbd] of each data node): binary logs with one GTID numbering on every node, so that\n"+
			"asynchronous replicas and a DR cluster follow the writer (galeon replica, sandbox up --dr-of), and\n"+
			"AUTO_INCREMENT series of each node's own that a view change never renumbers (a transaction replayed\n"+
			"after the writer's loss keeps its ids; --max-nodes N leaves room for N nodes). For the cluster\n"+
			"replicated from; a DR cluster's nodes take a server_id and wsrep_gtid_domain_id of their own, and\n"+
			"read_only = ON and skip_slave_start = ON until promoted (docs/control-plane.md)")
		for _, ns := range r.Settings {
			fmt.Fprintf(w, "  %-8s %s\n", ns.Member, strings.Join(ns.Options, "; "))
		}
	}
}

// sandboxLayout reads a multi-site sandbox's members (its nodes and
// arbitrators with their sites and segments) and, if it runs, measures
// the round trip of each link between its sites and reads the
// evs.suspect_timeout its nodes run.
func sandboxLayout(ctx context.Context, name string) (quorum.Layout, []quorum.RTT, quorum.Running, error) {
	sb, err := sandbox.Open(sandbox.DirFor(name), sandbox.Control{})
	if err != nil {
		return quorum.Layout{}, nil, quorum.Running{}, err
	}
	var ms []quorum.Member
	for _, n := range sb.Nodes {
		ms = append(ms, quorum.Member{Name: n.Name, Site: n.Site, Segment: n.Segment})
	}
	for _, a := range sb.Arbitrators {
		ms = append(ms, quorum.Member{Name: a.Name, Site: a.Site, Segment: a.Segment, Arbitrator: true})
	}
	l, err := quorum.NewLayout(ms)
	if err != nil {
		return quorum.Layout{}, nil, quorum.Running{}, fmt.Errorf("sandbox %s: %w (plan needs a sandbox made with --dc)", name, err)
	}
	for _, n := range sb.Nodes {
		if n.Weight != nil {
			_ = l.SetWeight(n.Name, *n.Weight)
		}
	}
	for _, a := range sb.Arbitrators {
		if a.Weight != nil {
			_ = l.SetWeight(a.Name, *a.Weight)
		}
	}
	if sb.Net == nil || !sb.Net.Up() {
		return l, nil, quorum.Running{}, nil // not running: plan the layout alone
	}
	links, err := sb.Links(ctx, 2*time.Second)
	if err != nil {
		return l, nil, quorum.Running{}, nil // not running: plan the layout alone
	}
	var rtts []quorum.RTT
	for _, k := range links {
		rtts = append(rtts, quorum.RTT{From: k.A, To: k.B, RTT: k.RTT, Err: k.Err})
	}
	run := quorum.Running{SuspectTimeout: runningSuspect(ctx, sb)}
	if _, set := sb.ProviderOptions["evs.suspect_timeout"]; !set && run.SuspectTimeout != "" {
		// Neither --wan nor --provider-option set it: the sandbox's own
		// default, tuned for nodes on one machine.
		run.Why = "the sandbox's loopback tuning, not a cluster's default: see docs/sandbox.md"
	}
	return l, rtts, run, nil
}

// runningSuspect is the evs.suspect_timeout the first node that answers
// runs ("" if none does).
func runningSuspect(ctx context.Context, sb *sandbox.Sandbox) string {
	for _, n := range sb.Nodes {
		db, err := sb.DB(n.Name)
		if err != nil {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var k, opts string
		err = db.QueryRowContext(qctx, "SHOW VARIABLES LIKE 'wsrep_provider_options'").Scan(&k, &opts)
		cancel()
		if err != nil {
			continue
		}
		if v, ok := galera.ProviderOption(opts, "evs.suspect_timeout"); ok {
			return v
		}
	}
	return ""
}

// clusterLayout builds the layout of a running cluster from what its
// agents registered: each node's site (its segment's name when the agent
// was given no --site), segment and pc.weight, and the group latency
// each site's nodes measure. Members without an agent (arbitrators) are
// counted from the cluster size; arbitrators names their sites, one per
// such member.
func clusterLayout(facts []discovery.NodeFacts, arbitrators []string) (quorum.Layout, []quorum.RTT, error) {
	if len(facts) == 0 {
		return quorum.Layout{}, nil, errors.New("no node is registered: start a galeon agent beside each node")
	}
	size := 0
	var ms []quorum.Member
	latency := map[string]float64{}
	var order []string
	for _, f := range facts {
		site := f.Site
		if site == "" {
			site = fmt.Sprintf("segment%d", f.Segment)
		}
		ms = append(ms, quorum.Member{Name: f.Name, Site: site, Segment: f.Segment})
		size = max(size, f.ClusterSize)
		if _, ok := latency[site]; !ok {
			order = append(order, site)
		}
		latency[site] = max(latency[site], f.ReplLatency)
	}
	missing := size - len(facts)
	if missing < 0 {
		missing = 0 // a partition: no node sees every registered one; no member is unaccounted for
	}
	if missing != len(arbitrators) {
		if len(arbitrators) == 0 {
			return quorum.Layout{}, nil, fmt.Errorf("the cluster has %d members and %d registered nodes: name the site of each of the other %d (arbitrators?) with --arbitrator SITE[,SITE]", size, len(facts), missing)
		}
		return quorum.Layout{}, nil, fmt.Errorf("--arbitrator names %d members, but the cluster has %d members and %d registered nodes", len(arbitrators), size, len(facts))
	}
	for i, site := range arbitrators {
		seg := -1
		for _, m := range ms {
			if m.Site == site {
				seg = m.Segment
			}
		}
		if seg < 0 {
			seg = len(order) + i // a site of its own: its own segment, as advised
		}
		ms = append(ms, quorum.Member{Name: fmt.Sprintf("%s-garbd%d", site, i+1), Site: site, Segment: seg, Arbitrator: true})
	}
	l, err := quorum.NewLayout(ms)
	if err != nil {
		return quorum.Layout{}, nil, err
	}
	for _, f := range facts {
		if f.Weight != nil {
			if err := l.SetWeight(f.Name, *f.Weight); err != nil {
				return quorum.Layout{}, nil, err
			}
		}
	}
	var rtts []quorum.RTT
	for _, site := range order {
		if latency[site] > 0 {
			rtts = append(rtts, quorum.RTT{From: site, RTT: time.Duration(latency[site] * float64(time.Second))})
		}
	}
	return l, rtts, nil
}

// gcacheHorizon finds the node whose gcache covers the least time at the
// commit rate seen between two readings of the agents' facts: its
// write-sets held (last committed - cached down to) over commits per
// second. The rate is each node's committed seqno over the time between
// its two publications (agents publish when the facts change).
func gcacheHorizon(before, after []discovery.NodeFacts) (node string, horizon time.Duration, rate float64) {
	first := map[string]discovery.NodeFacts{}
	for _, f := range before {
		first[f.Name] = f
	}
	for _, f := range after {
		b, ok := first[f.Name]
		dt := f.UpdatedAt.Sub(b.UpdatedAt).Seconds()
		if ok && f.LastCommitted > b.LastCommitted && dt > 0 {
			rate = max(rate, float64(f.LastCommitted-b.LastCommitted)/dt)
		}
	}
	if rate == 0 {
		return "", 0, 0
	}
	for _, f := range after {
		if f.CachedDownto <= 0 || f.LastCommitted < f.CachedDownto {
			continue
		}
		h := time.Duration(float64(f.LastCommitted-f.CachedDownto) / rate * float64(time.Second))
		if node == "" || h < horizon {
			node, horizon = f.Name, h
		}
	}
	return node, horizon, rate
}
