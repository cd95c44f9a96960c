package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/netns"
	"github.com/galeon-db/galeon/internal/quorum"
)

// A multi-site sandbox (Options.Sites, `galeon sandbox up --dc
// dc1:2,dc2:2,dc3:garbd`) puts each site in its own network namespace
// (package netns): nodes of a site listen on the site's address, each
// site is its own gmcast.segment, and a site may hold an arbitrator
// (Debian's garbd). Partition and Heal cut and restore the links between
// sites with iptables inside the namespaces, so what Galera does when a
// data centre is lost can be watched, and compared with `galeon plan`.

// Arbitrator is a garbd process of a multi-site sandbox: it votes in
// quorum and relays between sites, and holds no data.
type Arbitrator struct {
	Name    string `json:"name"`
	Site    string `json:"site"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Segment int    `json:"segment"`
	Weight  *int   `json:"weight,omitempty"` // pc.weight, if not Galera's 1
}

// offsetArbitrator places arbitrator i's group port at base+190+i, above
// the nodes' galera ports (a multi-site sandbox has at most 9 nodes per
// site and 9 sites).
const offsetArbitrator = offsetGalera + 90

// host is the address the node listens on: its site's, or loopback.
func (n Node) host() string {
	if n.Host != "" {
		return n.Host
	}
	return "127.0.0.1"
}

// addr is the arbitrator's group address.
func (a Arbitrator) addr() string { return a.Host + ":" + strconv.Itoa(a.Port) }

// planSites lays out the nodes and arbitrators of spec (quorum's --dc
// notation, or a layout file's text) for a new sandbox, and its network;
// oneSegment puts every member in segment 0.
func (s *State) planSites(spec string, oneSegment bool) error {
	l, err := quorum.ParseLayoutText(spec)
	if err != nil {
		return fmt.Errorf("--dc: %w", err)
	}
	if oneSegment {
		for i := range l.Members {
			l.Members[i].Segment = 0
		}
	}
	if len(l.Sites) > 9 {
		return fmt.Errorf("--dc: at most 9 sites")
	}
	net := netns.Plan(s.Name, netns.SubnetFor(s.BasePort), l.Sites)
	s.Net = &net
	s.Nodes = nil
	idx, arb := 0, 0
	for _, m := range l.Members {
		site, _ := net.Site(m.Site)
		if m.Arbitrator {
			arb++
			s.Arbitrators = append(s.Arbitrators, Arbitrator{Name: m.Name, Site: m.Site, Host: site.IP,
				Port: s.BasePort + offsetArbitrator + arb, Segment: m.Segment, Weight: weightOption(m.Weight)})
			continue
		}
		idx++
		n := newNode(s.BasePort, idx)
		n.Name, n.Site, n.Host, n.Segment, n.Weight = m.Name, m.Site, site.IP, m.Segment, weightOption(m.Weight)
		s.Nodes = append(s.Nodes, n)
	}
	return nil
}

// weightOption is the pc.weight to write for a layout's weight: none
// for Galera's default of 1.
func weightOption(w int) *int {
	if w == 1 {
		return nil
	}
	return &w
}

// SiteOf returns the namespace of a node's site (ok false: no site).
func (s *State) SiteOf(site string) (netns.Site, bool) {
	if s.Net == nil || site == "" {
		return netns.Site{}, false
	}
	ns, err := s.Net.Site(site)
	return ns, err == nil
}

// startCmd starts a node's or arbitrator's process, in its site's
// namespace if it has one.
func (s *State) startCmd(site string, cmd *exec.Cmd) error {
	if ns, ok := s.SiteOf(site); ok {
		return ns.Start(cmd)
	}
	return cmd.Start()
}

// ensureNet creates the sites' network if it is missing (a new sandbox,
// or one started again after a reboot).
func (sb *Sandbox) ensureNet(ctx context.Context) error {
	if sb.Net == nil {
		return nil
	}
	if sb.Net.Up() {
		return nil
	}
	return sb.Net.Create(ctx)
}

func (s *State) arbDir(a Arbitrator) string { return filepath.Join(s.Dir, a.Name) }
func (s *State) arbPid(a Arbitrator) string { return filepath.Join(s.arbDir(a), "garbd.pid") }
func (s *State) arbLog(a Arbitrator) string { return filepath.Join(s.arbDir(a), "garbd.log") }

// arbPidOf returns the PID of a running garbd, checked against its log
// path on the command line so a stale pid file never names another
// process.
func (s *State) arbPidOf(a Arbitrator) int { return runningPID(s.arbPid(a), s.arbLog(a)) }

// startArbitrators starts every garbd that is not running and waits until
// the cluster counts it.
func (sb *Sandbox) startArbitrators(ctx context.Context) error {
	started := false
	for _, a := range sb.Arbitrators {
		if sb.arbPidOf(a) != 0 {
			continue
		}
		if err := sb.waitEvicted(ctx, a.Name, ""); err != nil {
			return fmt.Errorf("%s not started: %w", a.Name, err)
		}
		if err := sb.startArbitrator(a); err != nil {
			return err
		}
		started = true
	}
	if !started {
		return nil
	}
	return sb.WaitMembers(ctx)
}

// arbitrator returns the arbitrator called name.
func (s *State) arbitrator(name string) (Arbitrator, bool) {
	for _, a := range s.Arbitrators {
		if a.Name == name {
			return a, true
		}
	}
	return Arbitrator{}, false
}

// StartArbitrator starts a stopped garbd and waits until the running
// data nodes count it in their component: `galeon sandbox start-node
// dc3-garbd`.
func (sb *Sandbox) StartArbitrator(ctx context.Context, name string) error {
	a, ok := sb.arbitrator(name)
	if !ok {
		return fmt.Errorf("sandbox %q has no arbitrator %q", sb.Name, name)
	}
	if sb.arbPidOf(a) != 0 {
		return fmt.Errorf("%s is already running", a.Name)
	}
	if len(sb.running()) == 0 {
		return fmt.Errorf("%s not started: no data node runs, and an arbitrator alone has no component to join; start the sandbox: galeon sandbox start --name %s", a.Name, sb.Name)
	}
	if err := sb.ensureNet(ctx); err != nil {
		return fmt.Errorf("create the sites' network: %w", err)
	}
	// A garbd killed a moment ago is a member until Galera evicts it.
	if err := sb.waitEvicted(ctx, a.Name, ""); err != nil {
		return fmt.Errorf("%s not started (it stays stopped): %w", a.Name, err)
	}
	if err := sb.startArbitrator(a); err != nil {
		return err
	}
	if err := sb.WaitMembers(ctx); err != nil {
		return fmt.Errorf("%s started (pid %d) but %w; its log: %s", a.Name, sb.arbPidOf(a), err, sb.arbLog(a))
	}
	sb.ctl.Progress(a.Name, "counted in the Primary component")
	return nil
}

func (sb *Sandbox) startArbitrator(a Arbitrator) error {
	uid, gid, err := mysqlIDs()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(sb.arbDir(a), 0o755); err != nil {
		return err
	}
	if err := chownMysql(sb.arbDir(a)); err != nil {
		return err
	}
	provider := merged(defaultProviderOptions(), sb.ProviderOptions)
	for _, k := range []string{"gcache.size", "pc.recovery"} {
		delete(provider, k) // data-node options garbd refuses or ignores
	}
	provider["gmcast.listen_addr"] = "tcp://" + a.addr()
	provider["gmcast.segment"] = strconv.Itoa(a.Segment)
	if a.Weight != nil {
		provider["pc.weight"] = strconv.Itoa(*a.Weight)
	}
	opts := make([]string, 0, len(provider))
	for _, k := range sortedKeys(provider) {
		opts = append(opts, k+"="+provider[k])
	}
	cmd := exec.Command("garbd", "--name", a.Name, "--group", sb.Name, "--address", sb.clusterAddress(),
		"--options", strings.Join(opts, "; "), "--log", sb.arbLog(a))
	cmd.Dir = sb.arbDir(a)
	attr := &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	if sb.ctl.KillWithParent {
		attr.Pdeathsig = syscall.SIGKILL
	}
	cmd.SysProcAttr = attr
	sb.ctl.Progress(a.Name, "starting the arbitrator (garbd) in "+a.Site)
	if err := sb.startCmd(a.Site, cmd); err != nil {
		return fmt.Errorf("start %s: %w", a.Name, err)
	}
	pid := trackChild(cmd)
	return os.WriteFile(sb.arbPid(a), []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

// stopArbitrators stops every garbd (SIGTERM, then SIGKILL after 10 s).
func (sb *Sandbox) stopArbitrators(ctx context.Context) error {
	var errs []error
	for _, a := range sb.Arbitrators {
		if err := sb.stopArbitrator(ctx, a); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// stopArbitrator stops a garbd cleanly (SIGTERM: it leaves the group),
// resuming it first if paused; SIGKILL after 10 s.
func (sb *Sandbox) stopArbitrator(ctx context.Context, a Arbitrator) error {
	pid := sb.arbPidOf(a)
	if pid == 0 {
		return nil
	}
	sb.ctl.Progress(a.Name, "stopping")
	_ = syscall.Kill(pid, syscall.SIGCONT)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var err error
	if waitExit(wctx, pid, sb.arbLog(a)) != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		kctx, kcancel := context.WithTimeout(context.Background(), 5*time.Second)
		if waitExit(kctx, pid, sb.arbLog(a)) != nil {
			err = fmt.Errorf("%s (pid %d) did not exit", a.Name, pid)
		}
		kcancel()
	}
	_ = os.Remove(sb.arbPid(a))
	if err == nil {
		sb.ctl.Progress(a.Name, "stopped")
	}
	return err
}

// signalArbitrator sends sig to a running garbd.
func (sb *Sandbox) signalArbitrator(a Arbitrator, sig syscall.Signal) error {
	pid := sb.arbPidOf(a)
	if pid == 0 {
		return fmt.Errorf("%s is not running", a.Name)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("signal %s (pid %d): %w", a.Name, pid, err)
	}
	return nil
}

// KillArbitrator kills a garbd, as a crash would.
func (sb *Sandbox) KillArbitrator(name string) error {
	a, ok := sb.arbitrator(name)
	if !ok {
		return fmt.Errorf("sandbox %q has no arbitrator %q", sb.Name, name)
	}
	pid := sb.arbPidOf(a)
	if pid == 0 {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return waitExit(ctx, pid, sb.arbLog(a))
}

// Partition cuts site from the sites in from (all other sites if none),
// as a WAN link failure would: the site's nodes keep running, lose sight
// of the others, and Galera decides which side keeps quorum.
func (sb *Sandbox) Partition(ctx context.Context, site string, from ...string) error {
	if sb.Net == nil {
		return fmt.Errorf("sandbox %q has no sites: create one with --dc", sb.Name)
	}
	if len(from) == 0 {
		return sb.Net.Isolate(ctx, site)
	}
	return sb.Net.Cut(ctx, site, from...)
}

// Heal restores every link between sites.
func (sb *Sandbox) Heal(ctx context.Context) error {
	if sb.Net == nil {
		return fmt.Errorf("sandbox %q has no sites: create one with --dc", sb.Name)
	}
	return sb.Net.Heal(ctx)
}

// Latency between sites. Each site's outgoing packets to other sites go
// through a delay process (galeon sandbox netdelay, package netdelay) in
// the site's namespace; the delay is read from a file, so it can change
// while the cluster runs (a latency spike). One-way delays add up: 15 ms
// out of each site is a 30 ms round trip between any two.

func (s *State) delayConf(site string) string { return filepath.Join(s.Dir, "netdelay-"+site+".conf") }
func (s *State) delayPid(site string) string  { return filepath.Join(s.Dir, "netdelay-"+site+".pid") }

// SetDelay sets the one-way delay of packets leaving site for the other
// sites ("" for every site), starting the site's delay process if needed.
func (sb *Sandbox) SetDelay(ctx context.Context, site string, d time.Duration) error {
	if sb.Net == nil {
		return fmt.Errorf("sandbox %q has no sites: create one with --dc", sb.Name)
	}
	if d < 0 || d > time.Minute {
		return fmt.Errorf("delay %s: use 0 to 1m", d)
	}
	if site != "" {
		if _, err := sb.Net.Site(site); err != nil {
			return err
		}
	}
	for i, s := range sb.Net.Sites {
		if site != "" && s.Name != site {
			continue
		}
		if err := os.WriteFile(sb.delayConf(s.Name), []byte(d.String()+"\n"), 0o644); err != nil {
			return err
		}
		if err := sb.Net.Delay(ctx, s.Name); err != nil {
			return err
		}
		if err := sb.startDelay(s, i+1); err != nil {
			return err
		}
	}
	return nil
}

// delayPidOf returns the PID of site's delay process if it runs.
func (s *State) delayPidOf(site string) int { return runningPID(s.delayPid(site), s.delayConf(site)) }

// runningPID reads a pid file and returns the PID if that process runs
// and its command line holds marker (a stale file never names another
// process), else 0.
func runningPID(path, marker string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !stillRunning(pid, marker) {
		return 0
	}
	return pid
}

func (sb *Sandbox) startDelay(s netns.Site, index int) error {
	if sb.delayPidOf(s.Name) != 0 {
		return nil
	}
	if sb.ctl.AgentBinary == "" {
		return errors.New("latency between sites needs the galeon binary to run its delay process (Control.AgentBinary)")
	}
	out, err := os.OpenFile(filepath.Join(sb.Dir, "netdelay-"+s.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(sb.ctl.AgentBinary, "sandbox", "netdelay", "--queue", strconv.Itoa(int(netns.Queue(index))), "--conf", sb.delayConf(s.Name))
	cmd.Stdout, cmd.Stderr = out, out
	attr := &syscall.SysProcAttr{Setsid: true}
	if sb.ctl.KillWithParent {
		attr.Pdeathsig = syscall.SIGKILL
	}
	cmd.SysProcAttr = attr
	ready := sb.delayConf(s.Name) + ".ready"
	_ = os.Remove(ready)
	if err := s.Start(cmd); err != nil {
		return fmt.Errorf("start the delay of %s: %w", s.Name, err)
	}
	pid := trackChild(cmd)
	if err := os.WriteFile(sb.delayPid(s.Name), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return err
	}
	// Until the process holds the queue, packets pass undelayed
	// (--queue-bypass): the delay is in place only once it says so.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		if _, err := os.Stat(ready); err == nil {
			return nil
		}
		if !stillRunning(pid, sb.delayConf(s.Name)) {
			return fmt.Errorf("the delay process of %s exited: %s", s.Name, exitReport(pid))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the delay process of %s did not bind its queue within 15 s", s.Name)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stopDelays stops every site's delay process (packets then flow
// undelayed: the queue rules bypass).
func (sb *Sandbox) stopDelays() {
	if sb.Net == nil {
		return
	}
	for _, s := range sb.Net.Sites {
		if pid := sb.delayPidOf(s.Name); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = waitExit(ctx, pid, sb.delayConf(s.Name))
			cancel()
		}
	}
}

// providerOptions are a new sandbox's provider options: the WAN profile
// if asked for, under the caller's own.
func providerOptions(opts Options) map[string]string {
	if !opts.WAN {
		return opts.ProviderOptions
	}
	return merged(galera.WANProfile(), opts.ProviderOptions)
}

// applyWANRTT starts the delays between sites the sandbox was made with.
func (sb *Sandbox) applyWANRTT(ctx context.Context) error {
	rtt, _ := time.ParseDuration(sb.WANRTT)
	if sb.Net == nil || rtt <= 0 {
		return nil
	}
	return sb.SetDelay(ctx, "", rtt/2)
}

// Link is what a multi-site sandbox's link between two sites carries:
// its measured round trip, the delay each side adds, and the bytes each
// side has sent the other (cut packets not counted).
type Link struct {
	A, B string
	// RTT is a TCP connect from A to a member of B, as the members
	// themselves cross the link (0 with Err set if it failed: a cut).
	RTT    time.Duration `json:"rtt"`
	Err    string        `json:"error,omitempty"`
	BytesA uint64        `json:"bytes_a_to_b"`
	BytesB uint64        `json:"bytes_b_to_a"`
}

// Links measures every link between two sites (the round trips in
// parallel, each bounded by timeout).
func (sb *Sandbox) Links(ctx context.Context, timeout time.Duration) ([]Link, error) {
	if sb.Net == nil {
		return nil, fmt.Errorf("sandbox %q has no sites: create one with --dc", sb.Name)
	}
	sent := map[[2]string]uint64{}
	for _, f := range sb.Net.Traffic(ctx) {
		sent[[2]string{f.From, f.To}] = f.Bytes
	}
	// A member of each site to dial: a data node's MySQL port, or an
	// arbitrator's group port.
	target := map[string]string{}
	for _, a := range sb.Arbitrators {
		target[a.Site] = a.addr()
	}
	for _, n := range sb.Nodes {
		target[n.Site] = n.Addr()
	}
	var links []Link
	for i, a := range sb.Net.Sites {
		for _, b := range sb.Net.Sites[i+1:] {
			links = append(links, Link{A: a.Name, B: b.Name, BytesA: sent[[2]string{a.Name, b.Name}], BytesB: sent[[2]string{b.Name, a.Name}]})
		}
	}
	var wg sync.WaitGroup
	for i := range links {
		wg.Add(1)
		go func(l *Link) {
			defer wg.Done()
			site, _ := sb.Net.Site(l.A)
			dctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			rtt, err := site.DialRTT(dctx, target[l.B])
			if err != nil {
				l.Err = err.Error()
				return
			}
			l.RTT = rtt
		}(&links[i])
	}
	wg.Wait()
	return links, nil
}
