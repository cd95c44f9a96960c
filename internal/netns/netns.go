// Package netns builds the network of a multi-site sandbox on one
// machine: one network namespace per site, joined to a bridge in the
// host's namespace by a veth pair, so that traffic between sites crosses
// interfaces that can be cut (iptables inside a site's namespace) the way
// a WAN link fails. The host reaches every site directly through the
// bridge, so tests, proxies and the CLI keep their view of every node
// while sites lose sight of each other.
//
// It drives Debian's iproute2 and iptables (nft backend), which work per
// namespace; nothing is left behind by Destroy, and Create clears what a
// crashed run of the same sandbox left.
//
// Addresses: the bridge is 172.30.K.1/24 and site i (1-based) is
// 172.30.K.(10+i), where K is chosen by the caller (the sandbox derives it
// from its base port, so two sandboxes use two subnets).
package netns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Site is one site's namespace and address.
type Site struct {
	Name string `json:"name"`
	NS   string `json:"netns"` // under /run/netns
	Veth string `json:"veth"`  // the host-side end, on the bridge
	IP   string `json:"ip"`
}

// Net is a sandbox's sites and the bridge between them.
type Net struct {
	Bridge string `json:"bridge"`
	Host   string `json:"host_ip"` // the bridge's address: where sites see the host
	Sites  []Site `json:"sites"`
}

// chain is the iptables chain in each site's namespace that holds its
// cuts; it is flushed to heal. wanChain sends the packets leaving the
// site for other sites to the site's delay queue (see package netdelay).
// acctChain counts the packets and bytes the site sends to each other
// site (one rule per site, no target): what crosses the WAN.
const (
	chain     = "GALEON-CUT"
	wanChain  = "GALEON-WAN"
	acctChain = "GALEON-ACCT"
)

// Queue is the NFQUEUE number of site i's delay (1-based).
func Queue(i int) uint16 { return uint16(100 + i) }

// Plan names the interfaces and addresses of sandbox name with subnet K.
// Interface names are at most 15 bytes, so they use K and the site
// index, not the names.
func Plan(name string, k int, sites []string) Net {
	n := Net{Bridge: fmt.Sprintf("glb%d", k), Host: fmt.Sprintf("172.30.%d.1", k)}
	for i, s := range sites {
		n.Sites = append(n.Sites, Site{
			Name: s, NS: "galeon-" + name + "-" + s,
			Veth: fmt.Sprintf("glv%ds%d", k, i+1), IP: fmt.Sprintf("172.30.%d.%d", k, 11+i),
		})
	}
	return n
}

// Create builds the bridge, the namespaces, the veth pairs and the cut
// chains. Leftovers of an earlier run with the same names are removed
// first.
func (n Net) Create(ctx context.Context) error {
	if err := n.CheckFree(ctx); err != nil {
		return err
	}
	_ = n.Destroy(ctx)
	steps := [][]string{
		{"ip", "link", "add", n.Bridge, "type", "bridge"},
		{"ip", "addr", "add", n.Host + "/24", "dev", n.Bridge},
		{"ip", "link", "set", n.Bridge, "up"},
	}
	for _, s := range n.Sites {
		in := []string{"ip", "netns", "exec", s.NS}
		steps = append(steps,
			[]string{"ip", "netns", "add", s.NS},
			[]string{"ip", "link", "add", s.Veth, "type", "veth", "peer", "name", "eth0", "netns", s.NS},
			[]string{"ip", "link", "set", s.Veth, "master", n.Bridge},
			[]string{"ip", "link", "set", s.Veth, "up"},
			append(in[:4:4], "ip", "link", "set", "lo", "up"),
			append(in[:4:4], "ip", "addr", "add", s.IP+"/24", "dev", "eth0"),
			append(in[:4:4], "ip", "link", "set", "eth0", "up"),
			append(in[:4:4], "iptables", "-N", chain),
			append(in[:4:4], "iptables", "-I", "INPUT", "-j", chain),
			append(in[:4:4], "iptables", "-I", "OUTPUT", "-j", chain),
			append(in[:4:4], "iptables", "-N", acctChain),
			append(in[:4:4], "iptables", "-A", "OUTPUT", "-j", acctChain),
			append(in[:4:4], "iptables", "-N", wanChain),
			append(in[:4:4], "iptables", "-A", "OUTPUT", "-j", wanChain),
		)
		for _, o := range n.Sites {
			if o.Name != s.Name {
				steps = append(steps, append(in[:4:4], "iptables", "-A", acctChain, "-d", o.IP))
			}
		}
	}
	for _, st := range steps {
		if err := run(ctx, st...); err != nil {
			_ = n.Destroy(context.Background())
			return err
		}
	}
	return nil
}

// CheckFree refuses a network whose bridge or subnet another sandbox (or
// anything else on the machine) uses: Create would otherwise tear down a
// running sandbox's bridge, or route a subnet the machine already has.
// Leftovers of this very sandbox (its namespaces exist) are not in the
// way: Create replaces them.
func (n Net) CheckFree(ctx context.Context) error {
	ours := false
	for _, s := range n.Sites {
		if _, err := os.Stat("/run/netns/" + s.NS); err == nil {
			ours = true
		}
	}
	if ports, _ := os.ReadDir("/sys/class/net/" + n.Bridge + "/brif"); len(ports) > 0 && !ours {
		return fmt.Errorf("bridge %s (subnet %s/24) is in use by another sandbox: give this one another --base-port", n.Bridge, n.subnet())
	}
	out, err := exec.CommandContext(ctx, "ip", "-o", "-4", "addr", "show", "to", n.subnet()+"/24").Output()
	if err != nil {
		return fmt.Errorf("ip addr show: %w", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.TrimSuffix(f[1], ":") != n.Bridge {
			return fmt.Errorf("subnet %s/24 overlaps an address of interface %s on this machine: give the sandbox another --base-port", n.subnet(), f[1])
		}
	}
	return nil
}

// subnet is the network address of the sandbox's /24.
func (n Net) subnet() string { return strings.TrimSuffix(n.Host, ".1") + ".0" }

// Destroy removes the namespaces (and with them the veth pairs and the
// iptables rules inside) and the bridge. Missing pieces are not errors.
func (n Net) Destroy(ctx context.Context) error {
	var errs []error
	for _, s := range n.Sites {
		if _, err := os.Stat("/run/netns/" + s.NS); err == nil {
			if err := run(ctx, "ip", "netns", "delete", s.NS); err != nil {
				errs = append(errs, err)
			}
		}
		// Deleting the namespace deletes the pair; the host's end may
		// linger a moment, or be left by a crashed run.
		errs = append(errs, deleteLink(ctx, s.Veth))
	}
	errs = append(errs, deleteLink(ctx, n.Bridge))
	return errors.Join(errs...)
}

// deleteLink deletes a network interface if it exists.
func deleteLink(ctx context.Context, name string) error {
	if !linkExists(name) {
		return nil
	}
	err := run(ctx, "ip", "link", "delete", name)
	if err != nil && strings.Contains(err.Error(), "Cannot find device") {
		return nil // gone in between
	}
	return err
}

func linkExists(name string) bool {
	_, err := os.Stat("/sys/class/net/" + name)
	return err == nil
}

// Up reports whether the network exists (the sandbox runs, or ran since
// the machine started).
func (n Net) Up() bool {
	_, err := os.Stat("/run/netns/" + n.Sites[0].NS)
	return err == nil
}

// Site returns the named site.
func (n Net) Site(name string) (Site, error) {
	var names []string
	for _, s := range n.Sites {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Site{}, fmt.Errorf("no site %q (sites: %s)", name, strings.Join(names, ", "))
}

// Cut stops all traffic between site a and each of the sites in others
// (in both directions, dropped silently as a failed WAN link does); the
// host still reaches every site.
func (n Net) Cut(ctx context.Context, a string, others ...string) error {
	sa, err := n.Site(a)
	if err != nil {
		return err
	}
	for _, o := range others {
		so, err := n.Site(o)
		if err != nil {
			return err
		}
		if so.Name == sa.Name {
			return fmt.Errorf("cannot cut site %s from itself", a)
		}
		for _, pair := range [][2]Site{{sa, so}, {so, sa}} {
			in := []string{"ip", "netns", "exec", pair[0].NS, "iptables"}
			if err := run(ctx, append(in, "-A", chain, "-s", pair[1].IP, "-j", "DROP")...); err != nil {
				return err
			}
			if err := run(ctx, append(in, "-A", chain, "-d", pair[1].IP, "-j", "DROP")...); err != nil {
				return err
			}
		}
	}
	return nil
}

// Isolate cuts site from every other site.
func (n Net) Isolate(ctx context.Context, site string) error {
	var others []string
	for _, s := range n.Sites {
		if s.Name != site {
			others = append(others, s.Name)
		}
	}
	return n.Cut(ctx, site, others...)
}

// Delay sends the packets site sends to the other sites through its
// delay queue (Queue of its index); --queue-bypass lets them through
// undelayed while no process holds the queue.
func (n Net) Delay(ctx context.Context, site string) error {
	for i, s := range n.Sites {
		if s.Name != site {
			continue
		}
		in := []string{"ip", "netns", "exec", s.NS, "iptables"}
		if err := run(ctx, append(in, "-F", wanChain)...); err != nil {
			return err
		}
		for _, o := range n.Sites {
			if o.Name == s.Name {
				continue
			}
			q := fmt.Sprint(Queue(i + 1))
			if err := run(ctx, append(in, "-A", wanChain, "-d", o.IP, "-j", "NFQUEUE", "--queue-num", q, "--queue-bypass")...); err != nil {
				return err
			}
		}
		return nil
	}
	_, err := n.Site(site)
	return err
}

// Heal removes every cut.
func (n Net) Heal(ctx context.Context) error {
	for _, s := range n.Sites {
		if err := run(ctx, "ip", "netns", "exec", s.NS, "iptables", "-F", chain); err != nil {
			return err
		}
	}
	return nil
}

// Cuts lists the current cuts as "a-b" site pairs, for status.
func (n Net) Cuts(ctx context.Context) ([]string, error) {
	var out []string
	for _, s := range n.Sites {
		b, err := exec.CommandContext(ctx, "ip", "netns", "exec", s.NS, "iptables", "-S", chain).Output()
		if err != nil {
			return nil, fmt.Errorf("iptables in %s: %w", s.NS, err)
		}
		for _, o := range n.Sites {
			if o.Name > s.Name && bytes.Contains(b, []byte("-d "+o.IP+"/32")) {
				out = append(out, s.Name+"-"+o.Name)
			}
		}
	}
	return out, nil
}

// Flow is what one site sent another since the network was created.
type Flow struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// Traffic reads every site's counters of what it sent to each other
// site (IP bytes, as the WAN carries them; cut packets are not counted).
// A site without counters is left out.
func (n Net) Traffic(ctx context.Context) []Flow {
	var out []Flow
	for _, s := range n.Sites {
		b, err := exec.CommandContext(ctx, "ip", "netns", "exec", s.NS, "iptables", "-S", acctChain, "-v").Output()
		if err != nil {
			// No counters here (a network made before they existed, or
			// the site's namespace is gone): nothing to report for it.
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			// -A GALEON-ACCT -d 172.30.20.12/32 -c PACKETS BYTES
			if len(f) < 7 || f[0] != "-A" || f[2] != "-d" || f[4] != "-c" {
				continue
			}
			for _, o := range n.Sites {
				if f[3] == o.IP+"/32" {
					fl := Flow{From: s.Name, To: o.Name}
					fmt.Sscan(f[5], &fl.Packets)
					fmt.Sscan(f[6], &fl.Bytes)
					out = append(out, fl)
				}
			}
		}
	}
	return out
}

// DialRTT measures a round trip from inside the site to addr: the time a
// TCP connect takes (SYN out, SYN-ACK back), which crosses whatever
// delay the links between sites carry. A refused connection (nothing
// listening) still measures the link.
func (s Site) DialRTT(ctx context.Context, addr string) (time.Duration, error) {
	var took time.Duration
	err := s.do(func() error {
		start := time.Now()
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		took = time.Since(start)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil // the refusal crossed the link too: a round trip
		}
		if err != nil {
			return err
		}
		return c.Close()
	})
	return took, err
}

// do runs f on a thread inside the site's namespace (sockets f opens
// belong to the site), then brings the thread back.
func (s Site) do(f func() error) error {
	target, err := os.Open("/run/netns/" + s.NS)
	if err != nil {
		return fmt.Errorf("site %s: %w (is the sandbox's network up?)", s.Name, err)
	}
	defer target.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", syscall.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer self.Close()
		if err := setns(target); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter %s: %w", s.NS, err)
			return
		}
		errc <- f()
		if err := setns(self); err != nil {
			// The thread cannot go back: keep it locked, so it ends
			// with this goroutine instead of serving other ones.
			return
		}
		runtime.UnlockOSThread()
	}()
	return <-errc
}

// Start starts cmd inside site's namespace. The process is forked from a
// thread that has entered the namespace for the purpose and left it
// again, so everything else about cmd (credentials, session, parent-death
// signal) works as for any child.
func (s Site) Start(cmd *exec.Cmd) error { return s.do(cmd.Start) }

func setns(f *os.File) error { return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET) }

// run runs a command and returns its output in the error.
func run(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// SubnetFor picks the subnet byte K for a sandbox from its base port.
func SubnetFor(basePort int) int { return (basePort/100)%200 + 20 }
