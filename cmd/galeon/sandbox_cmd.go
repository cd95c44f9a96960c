package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/netdelay"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/topology"
	"github.com/galeon-db/galeon/internal/wsrepview"
)

const sandboxUsage = `usage: galeon sandbox ACTION [flags]

actions:
  up [--nodes N] [--base-port P] [--sst-method rsync|mariabackup]
     [--provider-option K=V ...] [--server-option K=V ...] [--discovery etcd://H:P|none]
                      create and start a sandbox; waits until all nodes are Synced;
                      one galeon agent per node registers it in etcd (default: the
                      embedded etcd of the sandbox's proxy, 127.0.0.1:base+500)
  up --dc dc1:2,dc2:2,dc3:garbd
                      a multi-site sandbox: each site in its own network namespace
                      and gmcast.segment, garbd for SITE:garbd (see: galeon plan)
  up --layout FILE    the same from a layout file (galeon plan --layout; weight lines set pc.weight)
     [--wan] [--wan-rtt 30ms] [--one-segment]
                      --wan: galera.WANProfile timeouts and windows; --wan-rtt: that
                      round trip between every two sites (NFQUEUE delay in each site);
                      --one-segment: no segments (every site in segment 0)
  latency --rtt 30ms | --site SITE --delay 2s
                      change the delay between sites while the cluster runs
  partition SITE [--from SITE,...]
                      cut SITE's links to the other sites (or to those named)
  heal                restore every link between sites
  status [--json]     process and Galera state of every node
  stop                clean shutdown of every node
  start               start a stopped sandbox (bootstraps from the most advanced node)
  destroy             kill every node and remove the sandbox directory
  add                 add one node (joins by state transfer)
  remove NODE         shut NODE down cleanly and delete it
  kill NODE           SIGKILL NODE (crash)
  pause NODE          SIGSTOP NODE (hung server)
  resume NODE         SIGCONT NODE
  restart NODE        stop NODE (cleanly, resuming it if paused) and start it again
  running NODE        exit status 0 while NODE's server runs, 1 otherwise
  start-node NODE     start a stopped NODE so that it joins the cluster
  stop-node NODE      stop NODE cleanly (it stays in the sandbox)
  bootstrap-node NODE start a stopped NODE as a new Primary component (safe_to_bootstrap set)
  position NODE       print a stopped NODE's position, UUID:SEQNO (--wsrep-recover after a crash)
  promote NODE        pc.bootstrap=YES on a running NODE without quorum
                      (with restart, these are the node commands an agent can be
                      given: galeon agent --running-cmd ... --start-cmd ...)
  env                 print shell variables for the sandbox's DSNs and credentials
  proxy-config [--listen A] [--admin-listen A] [--http-listen A] [--site S] [--stale-reads]
                      print a galeon proxy configuration for the sandbox; with
                      --site, a proxy at home in that site, to run in its
                      namespace as on an application host there:
                      ip netns exec galeon-NAME-S galeon proxy --config F

common flags: --name NAME (default galeon), --dir DIR (default /var/tmp/galeon/NAME)
`

func runSandbox(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(os.Stderr, sandboxUsage)
		return errors.New("an action is required")
	}
	action := args[0]
	switch action {
	case "up", "status", "stop", "start", "destroy", "add", "env", "proxy-config", "remove", "kill", "pause", "resume", "restart",
		"running", "start-node", "stop-node", "bootstrap-node", "position", "promote", "partition", "heal", "latency", "netdelay":
	default:
		fmt.Fprint(os.Stderr, sandboxUsage)
		return fmt.Errorf("unknown action %q", action)
	}
	fs := flag.NewFlagSet("sandbox "+action, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, sandboxUsage) }
	name := fs.String("name", sandbox.DefaultName, "sandbox name")
	dir := fs.String("dir", "", "sandbox directory (default /var/tmp/galeon/NAME)")
	nodes := fs.Int("nodes", sandbox.DefaultNodes, "number of nodes (up)")
	basePort := fs.Int("base-port", sandbox.DefaultBasePort, "base port: node i listens on P+i, Galera on P+100+i, IST P+200+i, SST P+300+i (up)")
	sst := fs.String("sst-method", "rsync", "state transfer method: rsync or mariabackup (up)")
	asJSON := fs.Bool("json", false, "JSON output (status)")
	listen := fs.String("listen", "127.0.0.1:6033", "proxy MySQL address (proxy-config)")
	adminListen := fs.String("admin-listen", "127.0.0.1:6032", "proxy admin SQL address (proxy-config)")
	httpListen := fs.String("http-listen", "127.0.0.1:6080", "proxy admin HTTP address (proxy-config)")
	provider, server := keyValues{}, keyValues{}
	fs.Var(provider, "provider-option", "wsrep_provider_options entry KEY=VALUE, repeatable (up)")
	fs.Var(server, "server-option", "[mariadbd] option KEY=VALUE, repeatable (up)")
	dc := fs.String("dc", "", "sites: dc1:2,dc2:2,dc3:garbd (up; replaces --nodes)")
	layoutFile := fs.String("layout", "", "sites from a layout file, as galeon plan --layout reads it (up; replaces --dc)")
	from := fs.String("from", "", "sites to cut SITE from, comma-separated (partition; default all others)")
	wan := fs.Bool("wan", false, "apply the WAN profile to the nodes' provider options (up)")
	wanRTT := fs.Duration("wan-rtt", 0, "round trip between every two sites (up)")
	oneSegment := fs.Bool("one-segment", false, "every site in gmcast.segment 0, as without segments (up)")
	rtt := fs.Duration("rtt", -1, "round trip between every two sites (latency)")
	siteFlag := fs.String("site", "", "the site whose outgoing packets are delayed (latency); the proxy's home site, or auto (proxy-config)")
	staleReads := fs.Bool("stale-reads", false, "let the proxy read from nodes outside the Primary component when nothing else serves (proxy-config)")
	delay := fs.Duration("delay", -1, "one-way delay of the packets leaving --site (latency)")
	queue := fs.Int("queue", 0, "NFQUEUE number (netdelay, run by the sandbox)")
	conf := fs.String("conf", "", "file holding the delay (netdelay, run by the sandbox)")
	disc := fs.String("discovery", "", "etcd where the agents register the nodes; \"none\" for no agents (up; default etcd://127.0.0.1:BASE+500)")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = sandbox.DirFor(*name)
	}
	if action == "netdelay" {
		// The delay process of one site, started by the sandbox inside
		// the site's namespace; it runs until killed.
		if *queue <= 0 || *queue > 65535 || *conf == "" {
			return errors.New("netdelay needs --queue and --conf (it is started by the sandbox)")
		}
		return netdelay.Run(ctx, uint16(*queue), netdelay.FileDelay(*conf), func() {
			_ = os.WriteFile(*conf+".ready", []byte("bound\n"), 0o644)
		})
	}
	start := time.Now()
	ctl := cliControl(start)
	nodeArg := func() (string, error) {
		if len(pos) != 1 {
			return "", fmt.Errorf("%s needs exactly one NODE argument (e.g. node2)", action)
		}
		return pos[0], nil
	}
	if action == "up" {
		if *nodes < 1 || *nodes > sandbox.MaxNodes {
			return fmt.Errorf("--nodes %d: a sandbox has 1 to %d nodes", *nodes, sandbox.MaxNodes)
		}
		if *layoutFile != "" {
			if *dc != "" {
				return errors.New("give the sites as --dc or --layout, not both")
			}
			text, err := os.ReadFile(*layoutFile)
			if err != nil {
				return fmt.Errorf("--layout: %w", err)
			}
			*dc = string(text)
		}
		switch *disc {
		case "":
			*disc = sandbox.DiscoveryEndpoint(*basePort)
		case "none":
			*disc = ""
		}
		sb, err := sandbox.Up(ctx, sandbox.Options{Name: *name, Nodes: *nodes, BasePort: *basePort, Dir: *dir,
			SSTMethod: *sst, ProviderOptions: provider, ServerOptions: server, Discovery: *disc, Sites: *dc,
			WAN: *wan, WANRTT: *wanRTT, OneSegment: *oneSegment, Control: ctl})
		if err != nil {
			return err
		}
		fmt.Printf("\nsandbox %q is up: %d nodes Synced in one Primary component (%.1fs)\n", sb.Name, len(sb.Nodes), time.Since(start).Seconds())
		printConnectInfo(sb)
		return nil
	}
	sb, err := sandbox.Open(*dir, ctl)
	if err != nil {
		return err
	}
	var store *discovery.Store
	if sb.Discovery != "" && (action == "add" || action == "start" || action == "restart" || action == "remove") {
		// Joiners get their donors from the control plane: never the
		// writer while another node can serve, IST-capable nodes first;
		// nodes come and go through it (lifecycle.Membership).
		if store, err = openControlStore(ctx, sb.Discovery, sb.Name); err == nil {
			defer store.Close()
			useControlDonors(ctx, sb, store, ctl.Progress)
		} else {
			ctl.Progress("-", "control plane not reachable, Galera chooses donors and nothing is drained: "+err.Error())
		}
	}
	switch action {
	case "status":
		return printSandboxStatus(ctx, sb, *asJSON)
	case "stop":
		return sb.Stop(ctx)
	case "start":
		if err := sb.Start(ctx); err != nil {
			return err
		}
		fmt.Printf("sandbox %q is running: %d nodes Synced (%.1fs)\n", sb.Name, len(sb.Nodes), time.Since(start).Seconds())
		return nil
	case "destroy":
		if err := sb.Destroy(ctx); err != nil {
			return err
		}
		fmt.Printf("sandbox %q destroyed (%s removed)\n", sb.Name, sb.Dir)
		return nil
	case "add":
		n, err := addNode(ctx, sb, store, ctl.Progress)
		if err != nil {
			return err
		}
		fmt.Printf("%s added on %s; cluster size %d\n", n.Name, n.Addr(), len(sb.Nodes))
		return nil
	case "env":
		printEnv(sb)
		return nil
	case "proxy-config":
		if *siteFlag != "" && *siteFlag != topology.AutoSite {
			if _, ok := sb.SiteOf(*siteFlag); !ok {
				return fmt.Errorf("--site %s: sandbox %q has no such site", *siteFlag, sb.Name)
			}
		}
		fmt.Print(sb.ProxyConfig(sandbox.ProxyOptions{Listen: *listen, AdminListen: *adminListen, HTTPListen: *httpListen,
			Site: *siteFlag, StaleReads: *staleReads}))
		return nil
	case "latency":
		switch {
		case *rtt >= 0 && *siteFlag == "" && *delay < 0:
			if err := sb.SetDelay(ctx, "", *rtt/2); err != nil {
				return err
			}
			fmt.Printf("round trip between sites: %s\n", *rtt)
		case *siteFlag != "" && *delay >= 0 && *rtt < 0:
			if err := sb.SetDelay(ctx, *siteFlag, *delay); err != nil {
				return err
			}
			fmt.Printf("packets leaving %s for other sites: %s later\n", *siteFlag, *delay)
		default:
			return errors.New("latency: give --rtt D (between every two sites) or --site SITE --delay D (one way, out of SITE)")
		}
		return nil
	case "heal":
		if err := sb.Heal(ctx); err != nil {
			return err
		}
		fmt.Println("every link between sites restored")
		return nil
	case "partition":
		if len(pos) != 1 {
			return errors.New("partition needs exactly one SITE argument (e.g. dc2)")
		}
		var others []string
		if *from != "" {
			others = strings.Split(*from, ",")
		}
		if err := sb.Partition(ctx, pos[0], others...); err != nil {
			return err
		}
		if len(others) == 0 {
			others = []string{"every other site"}
		}
		fmt.Printf("%s cut from %s; galeon sandbox heal --name %s restores it\n", pos[0], strings.Join(others, ", "), sb.Name)
		return nil
	}
	node, err := nodeArg()
	if err != nil {
		return err
	}
	switch action {
	case "remove":
		return removeNode(ctx, sb, store, node, ctl.Progress)
	case "kill":
		return sb.Kill(node)
	case "pause":
		return sb.Pause(node)
	case "resume":
		return sb.Resume(node)
	case "running":
		if !sb.Running(node) {
			return errSilentFailure
		}
		return nil
	case "start-node":
		return sb.StartNode(donorsFromEnv(ctx), node)
	case "stop-node":
		return sb.StopNode(ctx, node)
	case "bootstrap-node":
		return sb.BootstrapNode(ctx, node)
	case "position":
		g, err := sb.Position(ctx, node)
		if err != nil {
			return err
		}
		fmt.Printf("%s:%d\n", g.UUID, g.Seqno)
		return nil
	case "promote":
		return sb.PromoteNode(ctx, node)
	default: // "restart"; actions were validated above
		return sb.Restart(donorsFromEnv(ctx), node)
	}
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

func printConnectInfo(sb *sandbox.Sandbox) {
	c := sb.Credentials
	fmt.Println("\nnodes:")
	for _, n := range sb.Nodes {
		fmt.Printf("  %-7s %s   mariadb -h127.0.0.1 -P%d -u%s -p'%s' app\n", n.Name, n.Addr(), n.Port, c.AppUser, c.AppPassword)
	}
	fmt.Printf("\ncredentials (generated; stored in %s/sandbox.json, mode 0600):\n", sb.Dir)
	fmt.Printf("  admin    %s / %s\n  app      %s / %s\n  monitor  %s / %s\n",
		c.AdminUser, c.AdminPassword, c.AppUser, c.AppPassword, c.MonitorUser, c.MonitorPassword)
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
	fmt.Printf("%-9s %-5s %-20s %-7s %-8s %-15s %-8s %-5s %s\n", "node", "site", "address", "pid", "process", "state", "cluster", "size", "agent")
	for _, n := range st {
		pid := "-"
		if n.PID != 0 {
			pid = fmt.Sprint(n.PID)
		}
		line := fmt.Sprintf("%-9s %-5s %-20s %-7s %-8s %-15s %-8s %-5s %s", n.Name, n.Site, n.Addr(), pid, n.Process, n.State, n.ClusterStatus, n.ClusterSize, sb.AgentStatus(n.Node))
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
	return fmt.Sprintf("link %s-%s: %s; sent %s→%s %s, %s→%s %s", l.A, l.B, rtt, l.A, l.B, wsrepview.Human(float64(l.BytesA))+"B", l.B, l.A, wsrepview.Human(float64(l.BytesB))+"B")
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
