package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/netdelay"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/topology"
	"github.com/galeon-db/galeon/internal/wsrepview"
)

func runSandbox(ctx context.Context, args []string) error {
	if len(args) == 0 {
		printSandboxUsage(os.Stderr)
		return errors.New("an action is required")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if a := findSandboxAction(strings.Join(args[1:], " ")); args[0] == "help" && a != nil {
			printActionUsage(os.Stderr, a)
		} else {
			printSandboxUsage(os.Stderr)
		}
		return errSilentFailure
	}
	c, err := parseSandbox(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printActionUsage(os.Stderr, c.action)
		return errSilentFailure
	case errors.Is(err, errUnknownSandboxAction):
		printSandboxUsage(os.Stderr)
		return err
	case err != nil:
		return err
	}
	c.start = time.Now()
	c.ctl = cliControl(c.start)
	return c.run(ctx, c)
}

// sandboxActions is every `galeon sandbox ACTION`, in the order the usage
// lists them.
func sandboxActions() []sandboxAction {
	return []sandboxAction{
		withFlags("up", "", `create and start a sandbox; waits until all nodes are Synced;
			one galeon agent per node registers it in etcd (--discovery). With --dc or --layout,
			a multi-site sandbox: each site in its own network namespace and gmcast.segment,
			garbd for SITE:garbd (see: galeon plan)`, (*upFlags).define, runUp),
		withFlags("latency", "", `change the delay between sites while the cluster runs:
			--rtt D between every two sites, or --site SITE --delay D (one way, out of SITE)`,
			(*latencyFlags).define, runLatency),
		withFlags("partition", "SITE", "cut SITE's links to the other sites (or to those named by --from)",
			func(o *partitionFlags, fs *flag.FlagSet) {
				fs.StringVar(&o.from, "from", "", "the `SITES` to cut SITE from, comma-separated (default every other site)")
			}, runPartition),
		onSandbox("heal", "restore every link between sites", func(ctx context.Context, _ *sandboxCall, sb *sandbox.Sandbox) error {
			if err := sb.Heal(ctx); err != nil {
				return err
			}
			fmt.Println("every link between sites restored")
			return nil
		}),
		withFlags("status", "", "process and Galera state of every node", func(o *statusFlags, fs *flag.FlagSet) {
			fs.BoolVar(&o.json, "json", false, "JSON output")
		}, func(ctx context.Context, c *sandboxCall, o *statusFlags) error {
			sb, err := c.open()
			if err != nil {
				return err
			}
			return printSandboxStatus(ctx, sb, o.json)
		}),
		onSandbox("stop", "clean shutdown of every node", func(ctx context.Context, _ *sandboxCall, sb *sandbox.Sandbox) error {
			return sb.Stop(ctx)
		}),
		onSandbox("start", "start a stopped sandbox (bootstraps from the most advanced node)", runStart),
		onSandbox("destroy", "kill every node and remove the sandbox directory", func(ctx context.Context, _ *sandboxCall, sb *sandbox.Sandbox) error {
			if err := sb.Destroy(ctx); err != nil {
				return err
			}
			fmt.Printf("sandbox %q destroyed (%s removed)\n", sb.Name, sb.Dir)
			return nil
		}),
		onSandbox("add", "add one node (joins by state transfer)", func(ctx context.Context, c *sandboxCall, sb *sandbox.Sandbox) error {
			store := c.controlDonors(ctx, sb)
			if store != nil {
				defer store.Close()
			}
			n, err := addNode(ctx, sb, store, c.ctl.Progress)
			if err != nil {
				return err
			}
			fmt.Printf("%s added on %s; cluster size %d\n", n.Name, n.Addr(), len(sb.Nodes))
			return nil
		}),
		onNode("remove", "shut NODE down cleanly and delete it", func(ctx context.Context, c *sandboxCall, sb *sandbox.Sandbox, node string) error {
			store := c.controlDonors(ctx, sb)
			if store != nil {
				defer store.Close()
			}
			return removeNode(ctx, sb, store, node, c.ctl.Progress)
		}),
		onNode("kill", "SIGKILL NODE (crash); NODE may be an arbitrator (dc3-garbd)", func(_ context.Context, _ *sandboxCall, sb *sandbox.Sandbox, node string) error {
			return sb.Kill(node)
		}),
		onNode("pause", "SIGSTOP NODE (hung server; an arbitrator too)", func(_ context.Context, _ *sandboxCall, sb *sandbox.Sandbox, node string) error {
			return sb.Pause(node)
		}),
		onNode("resume", "SIGCONT NODE (an arbitrator too)", func(_ context.Context, _ *sandboxCall, sb *sandbox.Sandbox, node string) error {
			return sb.Resume(node)
		}),
		onNode("restart", "stop NODE or an arbitrator (cleanly, resuming it if paused) and start it again; it waits until the running members (arbitrators included) no longer list its previous run", func(ctx context.Context, c *sandboxCall, sb *sandbox.Sandbox, node string) error {
			if store := c.controlDonors(ctx, sb); store != nil {
				defer store.Close()
			}
			return sb.Restart(donorsFromEnv(ctx), node)
		}),
		onNode("running", "exit status 0 while NODE's server (or arbitrator) runs, 1 otherwise", func(_ context.Context, _ *sandboxCall, sb *sandbox.Sandbox, node string) error {
			if !sb.Running(node) {
				return errSilentFailure
			}
			return nil
		}),
		onNode("start-node", "start a stopped NODE (or arbitrator) so that it joins the cluster", func(ctx context.Context, _ *sandboxCall, sb *sandbox.Sandbox, node string) error {
			return sb.StartNode(donorsFromEnv(ctx), node)
		}),
		onNode("stop-node", "stop NODE or an arbitrator cleanly (it stays in the sandbox)", func(ctx context.Context, _ *sandboxCall, sb *sandbox.Sandbox, node string) error {
			return sb.StopNode(ctx, node)
		}),
		onNode("bootstrap-node", "start a stopped NODE as a new Primary component (safe_to_bootstrap set)", func(ctx context.Context, _ *sandboxCall, sb *sandbox.Sandbox, node string) error {
			return sb.BootstrapNode(ctx, node)
		}),
		onNode("position", "print a stopped NODE's position, UUID:SEQNO (--wsrep-recover after a crash)", func(ctx context.Context, _ *sandboxCall, sb *sandbox.Sandbox, node string) error {
			g, err := sb.Position(ctx, node)
			if err != nil {
				return err
			}
			fmt.Printf("%s:%d\n", g.UUID, g.Seqno)
			return nil
		}),
		onNode("promote", `pc.bootstrap=YES on a running NODE without quorum (with restart,
			running, start-node, stop-node, bootstrap-node and position, these are the node
			commands an agent can be given: galeon agent --running-cmd ... --start-cmd ...)`,
			func(ctx context.Context, _ *sandboxCall, sb *sandbox.Sandbox, node string) error {
				return sb.PromoteNode(ctx, node)
			}),
		onSandbox("env", "print shell variables for the sandbox's DSNs and credentials", func(_ context.Context, _ *sandboxCall, sb *sandbox.Sandbox) error {
			printEnv(sb)
			return nil
		}),
		withFlags("proxy-config", "", `print a galeon proxy configuration for the sandbox; with --site,
			a proxy at home in that site, to run in its namespace as on an application host there:
			ip netns exec galeon-NAME-SITE galeon proxy --config F`, (*proxyConfigFlags).define, runProxyConfig),
		netdelayAction(),
	}
}

// controlDonors has sb's joiners get their donors from its control plane
// when it has one: never the writer while another node can serve,
// IST-capable nodes first; nodes come and go through it
// (lifecycle.Membership). It returns the control plane, nil if there is
// none or it cannot be reached; the caller closes it.
func (c *sandboxCall) controlDonors(ctx context.Context, sb *sandbox.Sandbox) *discovery.Store {
	if sb.Discovery == "" {
		return nil
	}
	store, err := openControlStore(ctx, sb.Discovery, sb.Name)
	if err != nil {
		c.ctl.Progress("-", "control plane not reachable, Galera chooses donors and nothing is drained: "+err.Error())
		return nil
	}
	useControlDonors(ctx, sb, store, c.ctl.Progress)
	return store
}

// upFlags are the flags of sandbox up.
type upFlags struct {
	nodes, basePort  int
	sstMethod        string
	provider, server keyValues
	dc, layout       string
	wan, oneSegment  bool
	tls              bool
	wanRTT           time.Duration
	discovery        string
	fromBackup       string
	replicas         int
	drOf             string
}

func (o *upFlags) define(fs *flag.FlagSet) {
	fs.IntVar(&o.nodes, "nodes", sandbox.DefaultNodes, "number of nodes `N`")
	fs.IntVar(&o.basePort, "base-port", sandbox.DefaultBasePort, "base port `P`: node i listens on P+i, Galera on P+100+i, IST P+200+i, SST P+300+i")
	fs.StringVar(&o.sstMethod, "sst-method", "rsync", "state transfer method `rsync|mariabackup`")
	o.provider, o.server = keyValues{}, keyValues{}
	fs.Var(o.provider, "provider-option", "wsrep_provider_options entry `K=V`, repeatable")
	fs.Var(o.server, "server-option", "[mariadbd] option `K=V`, repeatable")
	fs.StringVar(&o.dc, "dc", "", "the `SITES` and their members, comma-separated: SITE:N data nodes, SITE:garbd, SITE:N+garbd, as dc1:2,dc2:2,dc3:garbd (instead of --nodes)")
	fs.StringVar(&o.layout, "layout", "", "the sites from a layout `FILE`, as galeon plan --layout reads it; weight lines set pc.weight (instead of --dc)")
	fs.BoolVar(&o.wan, "wan", false, "apply the WAN profile (galera.WANProfile timeouts and windows) to the nodes' provider options")
	fs.DurationVar(&o.wanRTT, "wan-rtt", 0, "round trip `D` between every two sites (an NFQUEUE delay in each site)")
	fs.BoolVar(&o.oneSegment, "one-segment", false, "every site in gmcast.segment 0, as without segments")
	fs.StringVar(&o.fromBackup, "from-backup", "", "start the cluster from a prepared backup `DIR` (galeon cluster backup): the first node gets its files and Galera position, the others join by state transfer; the sandbox's accounts get new passwords")
	fs.IntVar(&o.replicas, "replicas", 0, "add `N` asynchronous replicas (replica1…, on P+600+k) that follow the writer: the nodes then keep binary logs with the cluster's GTIDs (wsrep_gtid_mode); each replica's agent moves it to every new writer")
	fs.StringVar(&o.drOf, "dr-of", "", "make this sandbox a DR cluster of the sandbox `PRIMARY` (made with --replicas): it starts from a backup of PRIMARY (--from-backup, or one taken now), in a GTID domain of its own, read-only for clients, and its agent keeps one of its nodes replicating from PRIMARY's writer (another node if that one fails) until galeon replica promote NAME --name PRIMARY makes it the primary")
	fs.BoolVar(&o.tls, "tls", false, "every node serves TLS to clients, with a CA and a certificate (for 127.0.0.1 and localhost) made for the sandbox in DIR/NAME/tls")
	fs.StringVar(&o.discovery, "discovery", "", "the agents register the nodes in the etcd at `etcd://H:P|none`; none: no agents (default: the embedded etcd of the sandbox's proxy, etcd://127.0.0.1:P+500; with sites, on the sites' bridge, etcd://172.30.K.1:P+500, which proxies inside the sites reach)")
}

func runUp(ctx context.Context, c *sandboxCall, o *upFlags) error {
	if o.nodes < 1 || o.nodes > sandbox.MaxNodes {
		return fmt.Errorf("--nodes %d: a sandbox has 1 to %d nodes", o.nodes, sandbox.MaxNodes)
	}
	sites := o.dc
	if o.layout != "" {
		if sites != "" {
			return errors.New("give the sites as --dc or --layout, not both")
		}
		text, err := os.ReadFile(o.layout)
		if err != nil {
			return fmt.Errorf("--layout: %w", err)
		}
		sites = string(text)
	}
	disc := o.discovery
	switch disc {
	case "":
		disc = sandbox.DiscoveryEndpoint(o.basePort)
		if sites != "" {
			// On the sites' bridge: proxies inside the sites reach it.
			disc = sandbox.SiteDiscoveryEndpoint(o.basePort)
		}
	case "none":
		disc = ""
	}
	var slavePos string
	if o.drOf != "" {
		var err error
		if o.fromBackup, slavePos, err = drSeed(ctx, c, o); err != nil {
			return err
		}
	}
	sb, err := sandbox.Up(ctx, sandbox.Options{Name: c.name, Nodes: o.nodes, BasePort: o.basePort, Dir: c.dir,
		SSTMethod: o.sstMethod, ProviderOptions: o.provider, ServerOptions: o.server, Discovery: disc, Sites: sites,
		WAN: o.wan, WANRTT: o.wanRTT, OneSegment: o.oneSegment, TLS: o.tls, FromBackup: o.fromBackup, Replicas: o.replicas,
		DROf: o.drOf, DRSlavePos: slavePos, Control: c.ctl})
	if err != nil {
		return err
	}
	fmt.Printf("\nsandbox %q is up: %s in one Primary component (%.1fs)\n", sb.Name, membersText(sb), time.Since(c.start).Seconds())
	printConnectInfo(sb)
	return nil
}

// drSeed is the backup a DR cluster starts from (--from-backup, or one
// of the primary taken now through its control plane) and the GTID
// position it holds, where the DR cluster's replication starts.
func drSeed(ctx context.Context, c *sandboxCall, o *upFlags) (string, string, error) {
	dir := o.fromBackup
	if dir == "" {
		p, err := sandbox.Open(filepath.Join(filepath.Dir(c.dir), o.drOf), c.ctl)
		if err != nil {
			return "", "", fmt.Errorf("--dr-of %s: %w", o.drOf, err)
		}
		if p.Discovery == "" {
			return "", "", fmt.Errorf("--dr-of %s: it has no control plane to take a backup through (created with --discovery none): give --from-backup DIR", o.drOf)
		}
		store, err := openControlStore(ctx, p.Discovery, p.Name)
		if err != nil {
			return "", "", err
		}
		defer store.Close()
		if dir, _, err = takeBackup(ctx, p, store, "", "", "galeon sandbox up --dr-of ("+whoAmI()+")", c.ctl.Progress); err != nil {
			return "", "", fmt.Errorf("--dr-of %s: the backup to start from: %w", o.drOf, err)
		}
	}
	info, err := lifecycle.PositionOf(dir)
	if err != nil {
		return "", "", err
	}
	if info.GTID == "" {
		return "", "", fmt.Errorf("--from-backup %s holds no GTID position: a DR cluster needs a backup of a cluster that keeps binary logs (--replicas)", dir)
	}
	return dir, info.GTID, nil
}

func runStart(ctx context.Context, c *sandboxCall, sb *sandbox.Sandbox) error {
	if store := c.controlDonors(ctx, sb); store != nil {
		defer store.Close()
	}
	if err := sb.Start(ctx); err != nil {
		return err
	}
	fmt.Printf("sandbox %q is running: %s (%.1fs)\n", sb.Name, membersText(sb), time.Since(c.start).Seconds())
	return nil
}

// latencyFlags are the flags of sandbox latency.
type latencyFlags struct {
	rtt, delay optDuration
	site       string
}

func (o *latencyFlags) define(fs *flag.FlagSet) {
	fs.Var(&o.rtt, "rtt", "round trip `D` between every two sites")
	fs.StringVar(&o.site, "site", "", "the `SITE` whose outgoing packets --delay delays")
	fs.Var(&o.delay, "delay", "one-way delay `D` of the packets leaving --site for other sites")
}

func runLatency(ctx context.Context, c *sandboxCall, o *latencyFlags) error {
	site, d := o.site, o.delay.d
	switch {
	case o.rtt.set && o.site == "" && !o.delay.set:
		site, d = "", o.rtt.d/2
	case o.site != "" && o.delay.set && !o.rtt.set:
	default:
		return errors.New("latency: give --rtt D (between every two sites) or --site SITE --delay D (one way, out of SITE)")
	}
	sb, err := c.open()
	if err != nil {
		return err
	}
	if err := sb.SetDelay(ctx, site, d); err != nil {
		return err
	}
	if site == "" {
		fmt.Printf("round trip between sites: %s\n", o.rtt.d)
	} else {
		fmt.Printf("packets leaving %s for other sites: %s later\n", site, d)
	}
	return nil
}

// partitionFlags are the flags of sandbox partition.
type partitionFlags struct{ from string }

func runPartition(ctx context.Context, c *sandboxCall, o *partitionFlags) error {
	sb, err := c.open()
	if err != nil {
		return err
	}
	site := c.arg()
	var others []string
	if o.from != "" {
		others = strings.Split(o.from, ",")
	}
	if err := sb.Partition(ctx, site, others...); err != nil {
		return err
	}
	if len(others) == 0 {
		others = []string{"every other site"}
	}
	fmt.Printf("%s cut from %s; galeon sandbox heal --name %s restores it\n", site, strings.Join(others, ", "), sb.Name)
	return nil
}

// statusFlags are the flags of sandbox status.
type statusFlags struct{ json bool }

// proxyConfigFlags are the flags of sandbox proxy-config.
type proxyConfigFlags struct {
	listen, adminListen, httpListen, site string
	staleReads                            bool
}

func (o *proxyConfigFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&o.listen, "listen", "127.0.0.1:6033", "the proxy's MySQL address `HOST:PORT`")
	fs.StringVar(&o.adminListen, "admin-listen", "127.0.0.1:6032", "the proxy's admin SQL address `HOST:PORT`")
	fs.StringVar(&o.httpListen, "http-listen", "127.0.0.1:6080", "the proxy's admin HTTP address `HOST:PORT`")
	fs.StringVar(&o.site, "site", "", "the proxy's home `SITE`, or auto")
	fs.BoolVar(&o.staleReads, "stale-reads", false, "let the proxy read from nodes outside the Primary component when nothing else serves")
}

func runProxyConfig(_ context.Context, c *sandboxCall, o *proxyConfigFlags) error {
	sb, err := c.open()
	if err != nil {
		return err
	}
	if o.site != "" && o.site != topology.AutoSite {
		if _, ok := sb.SiteOf(o.site); !ok {
			return fmt.Errorf("--site %s: sandbox %q has no such site", o.site, sb.Name)
		}
	}
	fmt.Print(sb.ProxyConfig(sandbox.ProxyOptions{Listen: o.listen, AdminListen: o.adminListen, HTTPListen: o.httpListen,
		Site: o.site, StaleReads: o.staleReads}))
	return nil
}

// netdelayFlags are the flags of sandbox netdelay.
type netdelayFlags struct {
	queue int
	conf  string
}

// netdelayAction is the delay process of one site, started by the
// sandbox inside the site's namespace (Sandbox.SetDelay); it runs until
// killed.
func netdelayAction() sandboxAction {
	a := withFlags("netdelay", "", "delay the packets of one site's NFQUEUE (started by the sandbox)",
		func(o *netdelayFlags, fs *flag.FlagSet) {
			fs.IntVar(&o.queue, "queue", 0, "NFQUEUE number `N`")
			fs.StringVar(&o.conf, "conf", "", "`FILE` holding the delay")
		}, func(ctx context.Context, _ *sandboxCall, o *netdelayFlags) error {
			if o.queue <= 0 || o.queue > 65535 || o.conf == "" {
				return errors.New("netdelay needs --queue and --conf (it is started by the sandbox)")
			}
			return netdelay.Run(ctx, uint16(o.queue), netdelay.FileDelay(o.conf), func() {
				_ = os.WriteFile(o.conf+".ready", []byte("bound\n"), 0o644)
			})
		})
	a.internal = true
	return a
}

// donorsFromEnv adds to ctx the donors an agent passed in
// GALEON_SST_DONORS (see nodeexec): the control plane's choice for the
// node about to join.
func donorsFromEnv(ctx context.Context) context.Context {
	if d := os.Getenv("GALEON_SST_DONORS"); d != "" {
		return galera.WithDonors(ctx, strings.Split(d, ","))
	}
	return ctx
}

// membersText is "2 nodes Synced", with the arbitrators if any: "2
// nodes Synced and 1 arbitrator".
func membersText(sb *sandbox.Sandbox) string {
	s := fmt.Sprintf("%d nodes Synced", len(sb.Nodes))
	switch len(sb.Arbitrators) {
	case 0:
	case 1:
		s += " and 1 arbitrator"
	default:
		s += fmt.Sprintf(" and %d arbitrators", len(sb.Arbitrators))
	}
	if n := len(sb.Replicas); n > 0 {
		s += fmt.Sprintf(", %d asynchronous replica(s)", n)
	}
	return s
}

// connectLine is how to reach node with the mariadb client, at the
// address it listens on (its site's, in a multi-site sandbox).
func connectLine(n sandbox.Node, user, password string) string {
	host, port, _ := net.SplitHostPort(n.Addr())
	return fmt.Sprintf("  %-7s %s   mariadb -h%s -P%s -u%s -p'%s' app", n.Name, n.Addr(), host, port, user, password)
}

func printConnectInfo(sb *sandbox.Sandbox) {
	c := sb.Credentials
	fmt.Println("\nnodes:")
	for _, n := range sb.Nodes {
		fmt.Println(connectLine(n, c.AppUser, c.AppPassword))
	}
	for _, a := range sb.ArbitratorStatus() {
		fmt.Printf("  %-7s %s   arbitrator (garbd) in %s, segment %d: votes, holds no data, no SQL\n", a.Name, a.Addr(), a.Site, a.Segment)
	}
	for _, r := range sb.Replicas {
		fmt.Printf("%s   (asynchronous replica, read-only: follows the writer)\n", connectLine(r, c.AppUser, c.AppPassword))
	}
	fmt.Printf("\ncredentials (generated; stored in %s/sandbox.json, mode 0600):\n", sb.Dir)
	fmt.Printf("  admin    %s / %s\n  app      %s / %s\n  monitor  %s / %s\n",
		c.AdminUser, c.AdminPassword, c.AppUser, c.AppPassword, c.MonitorUser, c.MonitorPassword)
	if sb.TLS {
		ca, cert, key := sb.TLSFiles()
		fmt.Printf("\nTLS: the nodes serve %s (key %s), signed by the CA %s: mariadb --ssl-ca=%s ...; a proxy may serve the same pair (proxy.tls_cert, proxy.tls_key)\n",
			cert, key, ca, ca)
	}
	fmt.Printf("\nwatch it: galeon status --name %s\n", sb.Name)
}

func printEnv(sb *sandbox.Sandbox) {
	c := sb.Credentials
	addrs := make([]string, 0, len(sb.Nodes))
	for _, n := range sb.Nodes {
		addrs = append(addrs, n.Addr())
	}
	fmt.Printf("GALEON_SANDBOX_NODES=%s\nGALEON_APP_USER=%s\nGALEON_APP_PASSWORD=%s\nGALEON_ADMIN_USER=%s\nGALEON_ADMIN_PASSWORD=%s\nGALEON_MONITOR_USER=%s\nGALEON_MONITOR_PASSWORD=%s\n",
		strings.Join(addrs, ","), c.AppUser, c.AppPassword, c.AdminUser, c.AdminPassword, c.MonitorUser, c.MonitorPassword)
	if sb.TLS {
		ca, cert, key := sb.TLSFiles()
		fmt.Printf("GALEON_SANDBOX_TLS_CA=%s\nGALEON_SANDBOX_TLS_CERT=%s\nGALEON_SANDBOX_TLS_KEY=%s\n", ca, cert, key)
	}
}

func printSandboxStatus(ctx context.Context, sb *sandbox.Sandbox, asJSON bool) error {
	st := sb.Status(ctx)
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	fmt.Printf("sandbox %q in %s (sst %s)\n", sb.Name, sb.Dir, sb.SSTMethod)
	if sb.Discovery != "" {
		fmt.Printf("agents register the nodes in %s (cluster %q)\n", sb.Discovery, sb.Name)
	}
	if sb.Net != nil {
		cuts, err := sb.Net.Cuts(ctx)
		if err != nil {
			return err
		}
		if len(cuts) == 0 {
			cuts = []string{"none"}
		}
		fmt.Printf("sites in network namespaces on bridge %s (host %s); links cut: %s\n", sb.Net.Bridge, sb.Net.Host, strings.Join(cuts, ", "))
		links, err := sb.Links(ctx, time.Second)
		if err != nil {
			fmt.Printf("links between sites: %v\n", err)
		}
		for _, l := range links {
			fmt.Println(linkLine(l))
		}
	}
	fmt.Printf("%-9s %-5s %-20s %-7s %-8s %-15s %-11s %-5s %s\n", "node", "site", "address", "pid", "process", "state", "cluster", "size", "agent")
	for _, n := range st {
		pid := "-"
		if n.PID != 0 {
			pid = fmt.Sprint(n.PID)
		}
		agent := "-" // an arbitrator has none
		if n.Role != "arbitrator" {
			agent = sb.AgentStatus(n.Node)
		}
		line := fmt.Sprintf("%-9s %-5s %-20s %-7s %-8s %-15s %-11s %-5s %s", n.Name, n.Site, n.Addr(), pid, n.Process, n.State, n.ClusterStatus, n.ClusterSize, agent)
		if n.Error != "" {
			line += "  error: " + n.Error
		}
		fmt.Println(strings.TrimRight(line, " "))
	}
	return nil
}

// linkLine is one link between sites as status shows it.
func linkLine(l sandbox.Link) string {
	rtt := fmt.Sprintf("rtt %.1f ms", float64(l.RTT.Microseconds())/1000)
	if l.Err != "" {
		rtt = "unreachable (" + l.Err + ")"
	}
	return fmt.Sprintf("link %s-%s: %s; wire bytes sent %s→%s %s, %s→%s %s", l.A, l.B, rtt, l.A, l.B, wsrepview.Human(float64(l.BytesA))+"B", l.B, l.A, wsrepview.Human(float64(l.BytesB))+"B")
}

// cliControl is how the CLI runs a sandbox: progress lines timed from
// start, and node agents run from this very binary.
func cliControl(start time.Time) sandbox.Control {
	ctl := sandbox.Control{Progress: func(node, msg string) {
		fmt.Printf("[%6.1fs] %-7s %s\n", time.Since(start).Seconds(), node, msg)
	}}
	if self, err := os.Executable(); err == nil {
		ctl.AgentBinary = self
	}
	return ctl
}
