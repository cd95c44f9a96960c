package ha_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lan is a private layer-2 network made for a test: a bridge on the host
// and one network namespace per "machine", each with an eth0 on the
// bridge. Cleanup stops every process still in the namespaces (by PID)
// and removes the namespaces and the bridge.
type lan struct {
	prefix string // "10.231.N."
	bridge string
	hosts  []string // namespace names
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func newLAN(t *testing.T, machines int) *lan {
	t.Helper()
	id := strconv.Itoa(rand.IntN(9000) + 1000)
	l := &lan{prefix: fmt.Sprintf("10.231.%d.", rand.IntN(200)+20), bridge: "glha" + id}
	t.Cleanup(l.remove)
	ip(t, "link", "add", l.bridge, "type", "bridge")
	ip(t, "addr", "add", l.prefix+"1/24", "dev", l.bridge)
	ip(t, "link", "set", l.bridge, "up")
	for i := 1; i <= machines; i++ {
		ns := fmt.Sprintf("glha%s-%d", id, i)
		veth := fmt.Sprintf("glha%sv%d", id, i)
		ip(t, "netns", "add", ns)
		l.hosts = append(l.hosts, ns)
		ip(t, "link", "add", veth, "type", "veth", "peer", "name", veth+"p")
		ip(t, "link", "set", veth+"p", "netns", ns)
		ip(t, "-n", ns, "link", "set", veth+"p", "name", "eth0")
		ip(t, "link", "set", veth, "master", l.bridge, "up")
		ip(t, "-n", ns, "addr", "add", l.addr(i)+"/24", "dev", "eth0")
		ip(t, "-n", ns, "link", "set", "eth0", "up")
		ip(t, "-n", ns, "link", "set", "lo", "up")
	}
	return l
}

// addr is machine i's address (1-based).
func (l *lan) addr(i int) string { return l.prefix + strconv.Itoa(10+i) }

// killAll kills (SIGKILL) every process in machine i's namespace: the
// machine dies.
func (l *lan) killAll(i int) {
	out, _ := exec.Command("ip", "netns", "pids", l.hosts[i-1]).Output()
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func (l *lan) remove() {
	for i := range l.hosts {
		l.killAll(i + 1)
	}
	time.Sleep(100 * time.Millisecond)
	for _, ns := range l.hosts {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
	_ = exec.Command("ip", "link", "del", l.bridge).Run()
}

// hasAddr says whether machine i holds address a.
func (l *lan) hasAddr(i int, a string) bool {
	out, _ := exec.Command("ip", "-n", l.hosts[i-1], "-4", "addr", "show", "dev", "eth0").Output()
	return strings.Contains(string(out), " "+a+"/")
}

// relay forwards host:port (on the bridge) to 127.0.0.1:port, so that
// machines reach the sandbox's loopback-only nodes; it stops with the
// test.
func relay(t *testing.T, host string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

func netDial(addr string) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, 200*time.Millisecond)
}
