package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/sandbox"
)

// parse parses a sandbox command line that must be accepted.
func parse(t *testing.T, args ...string) *sandboxCall {
	t.Helper()
	c, err := parseSandbox(args)
	if err != nil {
		t.Fatalf("sandbox %s: %v", strings.Join(args, " "), err)
	}
	return c
}

// parseErr parses a sandbox command line that must be rejected with an
// error holding every one of want.
func parseErr(t *testing.T, args []string, want ...string) {
	t.Helper()
	c, err := parseSandbox(args)
	if err == nil {
		t.Fatalf("sandbox %s accepted (%+v), want an error", strings.Join(args, " "), c)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("sandbox %s: error %q does not contain %q", strings.Join(args, " "), err, w)
		}
	}
}

func TestSandboxUpFlags(t *testing.T) {
	c := parse(t, "up")
	o := c.opts.(*upFlags)
	if c.name != sandbox.DefaultName || c.dir != sandbox.DirFor(sandbox.DefaultName) || o.nodes != sandbox.DefaultNodes ||
		o.basePort != sandbox.DefaultBasePort || o.sstMethod != "rsync" || o.discovery != "" || o.dc != "" || o.wan {
		t.Errorf("up defaults: name %q dir %q %+v", c.name, c.dir, o)
	}

	c = parse(t, "up", "--name", "wan", "--dc", "dc1:2,dc2:2,dc3:garbd", "--discovery", "none", "--wan", "--wan-rtt", "30ms",
		"--one-segment", "--provider-option", "gcache.size=64M", "--provider-option", "evs.send_window=512",
		"--server-option", "max_connections=500", "--sst-method", "mariabackup", "--base-port", "24100")
	o = c.opts.(*upFlags)
	if c.name != "wan" || c.dir != "/var/tmp/galeon/wan" || o.dc != "dc1:2,dc2:2,dc3:garbd" || o.discovery != "none" ||
		!o.wan || o.wanRTT != 30*time.Millisecond || !o.oneSegment || o.sstMethod != "mariabackup" || o.basePort != 24100 {
		t.Errorf("up --dc ...: name %q dir %q %+v", c.name, c.dir, o)
	}
	if len(o.provider) != 2 || o.provider["gcache.size"] != "64M" || o.provider["evs.send_window"] != "512" || o.server["max_connections"] != "500" {
		t.Errorf("up options: provider %v server %v", o.provider, o.server)
	}
	if c := parse(t, "up", "--dir", "/tmp/x", "--layout", "sites.txt"); c.dir != "/tmp/x" || c.opts.(*upFlags).layout != "sites.txt" {
		t.Errorf("up --dir --layout: dir %q %+v", c.dir, c.opts)
	}
	parseErr(t, []string{"up", "--provider-option", "novalue"}, "up", "want KEY=VALUE")
	parseErr(t, []string{"up", "--nodes", "three"}, "up", "-nodes")
}

// TestSandboxNodeArgument: a node action takes its NODE before or after
// the flags, exactly one.
func TestSandboxNodeArgument(t *testing.T) {
	for _, args := range [][]string{
		{"kill", "node3", "--name", "cli"},
		{"kill", "--name", "cli", "node3"},
		{"kill", "--name=cli", "node3"},
	} {
		c := parse(t, args...)
		if c.action.name != "kill" || c.arg() != "node3" || c.name != "cli" || c.dir != "/var/tmp/galeon/cli" {
			t.Errorf("%v: action %s args %v name %q dir %q", args, c.action.name, c.args, c.name, c.dir)
		}
	}
	parseErr(t, []string{"kill", "--name", "cli"}, "kill needs exactly one NODE argument (e.g. node2)")
	parseErr(t, []string{"start-node", "node1", "node2"}, "start-node needs exactly one NODE argument")
	// Actions on the whole sandbox take no argument: `destroy demo` would
	// otherwise destroy the sandbox called galeon.
	parseErr(t, []string{"destroy", "demo"}, "destroy takes no argument", `"demo"`, "--name")
}

func TestSandboxPartitionAndLatencyFlags(t *testing.T) {
	for _, args := range [][]string{
		{"partition", "dc2", "--from", "dc1,dc3", "--name", "wan"},
		{"partition", "--from", "dc1,dc3", "dc2", "--name", "wan"},
	} {
		c := parse(t, args...)
		if c.arg() != "dc2" || c.opts.(*partitionFlags).from != "dc1,dc3" || c.name != "wan" {
			t.Errorf("%v: args %v %+v name %q", args, c.args, c.opts, c.name)
		}
	}
	if c := parse(t, "partition", "dc2"); c.opts.(*partitionFlags).from != "" {
		t.Errorf("partition without --from: %+v", c.opts)
	}
	parseErr(t, []string{"partition", "--from", "dc1"}, "partition needs exactly one SITE argument (e.g. dc2)")

	o := parse(t, "latency", "--rtt", "30ms").opts.(*latencyFlags)
	if !o.rtt.set || o.rtt.d != 30*time.Millisecond || o.delay.set || o.site != "" {
		t.Errorf("latency --rtt 30ms: %+v", o)
	}
	// A zero delay is given, not absent: it removes a spike.
	o = parse(t, "latency", "--site", "dc2", "--delay", "0").opts.(*latencyFlags)
	if o.rtt.set || !o.delay.set || o.delay.d != 0 || o.site != "dc2" {
		t.Errorf("latency --site dc2 --delay 0: %+v", o)
	}
	parseErr(t, []string{"latency", "--rtt", "-5ms"}, "negative")
	// Which combinations latency accepts is checked before any sandbox is opened.
	for _, args := range [][]string{{"latency"}, {"latency", "--rtt", "1s", "--delay", "1s"}, {"latency", "--site", "dc1"}, {"latency", "--delay", "1s"}} {
		c := parse(t, append(args, "--dir", t.TempDir())...)
		if err := c.run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "give --rtt D") {
			t.Errorf("%v: %v, want the latency usage", args, err)
		}
	}
}

func TestSandboxProxyConfigFlags(t *testing.T) {
	c := parse(t, "proxy-config", "--name", "wan", "--site", "dc2", "--listen", "172.30.1.12:6033", "--stale-reads")
	o := c.opts.(*proxyConfigFlags)
	if o.site != "dc2" || o.listen != "172.30.1.12:6033" || o.adminListen != "127.0.0.1:6032" || o.httpListen != "127.0.0.1:6080" || !o.staleReads {
		t.Errorf("proxy-config: %+v", o)
	}
	if o := parse(t, "status", "--json").opts.(*statusFlags); !o.json {
		t.Errorf("status --json: %+v", o)
	}
}

// TestSandboxUnknownFlag: each action accepts only its own flags; the
// error names the action and lists the flags it takes.
func TestSandboxUnknownFlag(t *testing.T) {
	parseErr(t, []string{"kill", "node3", "--from", "dc1"}, "kill does not take --from", "its flags: --dir --name", "galeon sandbox kill --help")
	parseErr(t, []string{"status", "--nodes", "5"}, "status does not take --nodes", "--json")
	parseErr(t, []string{"up", "--json"}, "up does not take --json", "--dc", "--wan-rtt", "--provider-option")
	parseErr(t, []string{"proxy-config", "--rtt", "1s"}, "proxy-config does not take --rtt", "--stale-reads")
	// The delay process takes no --name: the sandbox starts it with --queue and --conf only.
	parseErr(t, []string{"netdelay", "--name", "x"}, "netdelay does not take --name", "--conf --queue")
	c := parse(t, "netdelay", "--queue", "7", "--conf", "/tmp/d")
	if o := c.opts.(*netdelayFlags); o.queue != 7 || o.conf != "/tmp/d" {
		t.Errorf("netdelay: %+v", o)
	}
	// The process exits non-zero: runSandbox fails before opening anything.
	if err := runSandbox(context.Background(), []string{"kill", "node3", "--from", "dc1"}); err == nil {
		t.Error("runSandbox accepted an unknown flag")
	}
	if _, err := parseSandbox([]string{"frobnicate"}); !errors.Is(err, errUnknownSandboxAction) || !strings.Contains(err.Error(), `unknown action "frobnicate"`) {
		t.Errorf("unknown action: %v", err)
	}
	if c, err := parseSandbox([]string{"kill", "--help"}); !errors.Is(err, flag.ErrHelp) || c.action.name != "kill" {
		t.Errorf("kill --help: %v", err)
	}
}

// TestSandboxCommandLinesInUse: the command lines the README, the
// Makefile, bench/run.sh, the tests and the sandbox itself run are
// accepted.
func TestSandboxCommandLinesInUse(t *testing.T) {
	for _, line := range []string{
		"up --nodes 3 --name demo --base-port 4400",
		"up --name bench --nodes 3 --base-port 7400 --provider-option gcs.fc_limit=128 --server-option max_connections=1000 --server-option max_allowed_packet=64M",
		"up --name wan --dc dc1:2,dc2:2,dc3:garbd --discovery none",
		"up --name x --layout sites.txt --wan --wan-rtt 30ms --one-segment --discovery etcd://127.0.0.1:2379",
		"up --nodes 0 --name x",
		"up --sst-method carrier-pigeon --name x",
		"status --name demo",
		"status --json --name demo",
		"kill node3 --name demo",
		"kill --name does-not-exist node1",
		"restart node3 --name demo",
		"add --name demo",
		"remove node4 --name demo",
		"stop --name demo",
		"start --name demo",
		"destroy --name demo",
		"env --name demo",
		"heal --name wan",
		"partition dc2 --name wan",
		"latency --rtt 30ms --name wan",
		"latency --site dc2 --delay 2s --name wan",
		"proxy-config --name demo",
		"proxy-config --dir /tmp/sb --listen 127.0.0.1:1 --admin-listen 127.0.0.1:2 --http-listen 127.0.0.1:3",
		"proxy-config --name wan --site dc2 --listen 172.30.1.12:6033 --admin-listen 127.0.0.1:6032 --http-listen 127.0.0.1:6080 --stale-reads",
		// An agent's node commands (test/control: galeon sandbox %s --dir DIR {node}).
		"running --dir /tmp/sb node1",
		"start-node --dir /tmp/sb node1",
		"stop-node --dir /tmp/sb node1",
		"bootstrap-node --dir /tmp/sb node1",
		"position --dir /tmp/sb node1",
		"promote --dir /tmp/sb node1",
		"restart --dir /tmp/sb node1",
		"pause node2 --name demo",
		"resume node2 --name demo",
		// Started by Sandbox.SetDelay in a site's namespace.
		"netdelay --queue 3 --conf /tmp/sb/delay-dc1",
	} {
		parse(t, strings.Fields(line)...)
	}
}

// TestSandboxUsage: the usage lists every action but the internal one,
// each action's help every flag it takes, and no line is too wide.
func TestSandboxUsage(t *testing.T) {
	var all bytes.Buffer
	printSandboxUsage(&all)
	checkWidth(t, "sandbox --help", all.String())
	for _, want := range []string{"\n  up [--base-port P]", "[--provider-option K=V ...]", "\n  kill NODE ", "\n  partition SITE [--from SITES]",
		"\n  heal                restore every link between sites\n", "--name NAME", "--dir DIR"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("sandbox --help has no %q:\n%s", want, all.String())
		}
	}
	if strings.Contains(all.String(), "netdelay") {
		t.Errorf("sandbox --help shows the internal netdelay:\n%s", all.String())
	}
	for _, a := range sandboxActions() {
		if !a.internal && !strings.Contains(all.String(), "\n  "+a.name+" ") {
			t.Errorf("sandbox --help has no %s", a.name)
		}
		var one bytes.Buffer
		printActionUsage(&one, &a)
		checkWidth(t, a.name+" --help", one.String())
		fs := flag.NewFlagSet(a.name, flag.ContinueOnError)
		a.setup(fs)
		if !a.internal {
			var name, dir string
			commonSandboxFlags(fs, &name, &dir)
		}
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(one.String(), "\n  --"+f.Name+" ") && !strings.Contains(one.String(), "\n  --"+f.Name+"\n") {
				t.Errorf("sandbox %s --help does not show --%s:\n%s", a.name, f.Name, one.String())
			}
		})
	}
}

func checkWidth(t *testing.T, what, text string) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if n := len([]rune(l)); n > usageWidth {
			t.Errorf("%s: a line of %d columns: %q", what, n, l)
		}
	}
}

// TestConnectLineUsesTheListenAddress: a node of a multi-site sandbox
// listens on its site's address, and the line to reach it says so.
func TestConnectLineUsesTheListenAddress(t *testing.T) {
	site := sandbox.Node{Name: "dc1-1", Port: 9401, Host: "172.30.94.11"}
	if got := connectLine(site, "app", "pw"); !strings.Contains(got, "mariadb -h172.30.94.11 -P9401 -uapp") {
		t.Errorf("site node: %q", got)
	}
	loop := sandbox.Node{Name: "node1", Port: 4401}
	if got := connectLine(loop, "app", "pw"); !strings.Contains(got, "mariadb -h127.0.0.1 -P4401 ") {
		t.Errorf("loopback node: %q", got)
	}
}
