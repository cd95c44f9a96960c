package sandbox

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGraStateAndBootstrapChoice(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("g1", "# GALERA saved state\nversion: 2.1\nuuid:    6b0e1c7a-1111-11ef-8000-000000000001\nseqno:   42\nsafe_to_bootstrap: 0\n")
	g, err := readGraState(p)
	if err != nil || g.Seqno != 42 || g.SafeToBootstrap || !strings.HasPrefix(g.UUID, "6b0e1c7a") {
		t.Fatalf("readGraState = %+v, %v", g, err)
	}
	if err := setSafeToBootstrap(p); err != nil {
		t.Fatal(err)
	}
	if g, _ := readGraState(p); !g.SafeToBootstrap || g.Seqno != 42 {
		t.Fatalf("after setSafeToBootstrap: %+v", g)
	}
	nodes := []Node{{Name: "node1"}, {Name: "node2"}, {Name: "node3"}}
	cases := []struct {
		states map[string]GraState
		want   string
	}{
		{map[string]GraState{"node1": {Seqno: 10}, "node2": {Seqno: 12}, "node3": {Seqno: 11}}, "node2"},
		{map[string]GraState{"node1": {Seqno: 12}, "node2": {Seqno: 12, SafeToBootstrap: true}, "node3": {Seqno: 12}}, "node2"},
		{map[string]GraState{"node1": {Seqno: 12}, "node2": {Seqno: 12}, "node3": {Seqno: 12}}, "node1"},
		{map[string]GraState{"node1": {Seqno: -1}, "node2": {Seqno: 5}, "node3": {Seqno: -1}}, "node2"},
	}
	for i, c := range cases {
		if got := chooseBootstrap(nodes, c.states).Name; got != c.want {
			t.Errorf("case %d: bootstrap %s, want %s", i, got, c.want)
		}
	}
}

func TestMyCnfKeepsNodesApart(t *testing.T) {
	s := &State{Name: "demo", Dir: "/var/tmp/galeon/demo", BasePort: 4400, SSTMethod: "rsync",
		ProviderOptions: map[string]string{"evs.suspect_timeout": "PT2S"}, ServerOptions: map[string]string{"max_connections": "50"}}
	s.Nodes = []Node{newNode(4400, 1), newNode(4400, 2)}
	cnf := s.myCnf(s.Nodes[1])
	for _, want := range []string{
		"port = 4402", "wsrep_node_address = 127.0.0.1:4502", "ist.recv_addr=127.0.0.1:4602", "wsrep_sst_receive_address = 127.0.0.1:4702",
		"gmcast.listen_addr=tcp://127.0.0.1:4502", "wsrep_cluster_address = gcomm://127.0.0.1:4501,127.0.0.1:4502",
		"evs.suspect_timeout=PT2S", "evs.inactive_timeout=PT6S", "max_connections = 50", "datadir = /var/tmp/galeon/demo/node2/data",
		// A series of ids of its own that a view change does not renumber.
		"wsrep_auto_increment_control = OFF", "auto_increment_increment = 2", "auto_increment_offset = 2",
	} {
		if !strings.Contains(cnf, want) {
			t.Errorf("my.cnf of node2 lacks %q:\n%s", want, cnf)
		}
	}
	// Removing the highest-numbered node does not narrow the series.
	s.IDSlots = 2
	s.Nodes = s.Nodes[:1]
	if cnf := s.myCnf(s.Nodes[0]); !strings.Contains(cnf, "auto_increment_increment = 2\n") {
		t.Errorf("the increment narrowed after a removal:\n%s", cnf)
	}
	s.Nodes = []Node{newNode(4400, 1), newNode(4400, 2)}
	// The operator's own options win.
	s.ServerOptions["auto_increment_increment"] = "1"
	if cnf := s.myCnf(s.Nodes[1]); !strings.Contains(cnf, "auto_increment_increment = 1\n") {
		t.Errorf("the operator's auto_increment_increment was not kept:\n%s", cnf)
	}
}

func TestPhasesAreOrdered(t *testing.T) {
	r1, _ := phase("WSREP: Prepared SST request: rsync|127.0.0.1:4703/rsync_sst")
	r2, _ := phase("WSREP: SST received: 6b0e:42")
	r3, p3 := phase("WSREP: Synchronized with group, ready for connections")
	if !(r1 < r2 && r2 < r3) || p3 != "synced" {
		t.Errorf("phase ranks %d %d %d (%s)", r1, r2, r3, p3)
	}
	if r, _ := phase("some unrelated line"); r != -1 {
		t.Errorf("unrelated line ranked %d", r)
	}
}

func TestTLSMaterialVerifies(t *testing.T) {
	caPEM, certPEM, keyPEM, err := newTLSMaterial(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("certificate and key do not match: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA PEM does not parse")
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("server certificate does not verify for %s: %v", name, err)
		}
	}
	s := &State{Name: "demo", Dir: "/var/tmp/galeon/demo", BasePort: 4400, SSTMethod: "rsync", TLS: true}
	s.Nodes = []Node{newNode(4400, 1)}
	cnf := s.myCnf(s.Nodes[0])
	for _, want := range []string{"ssl_ca = /var/tmp/galeon/demo/tls/ca.pem", "ssl_cert = /var/tmp/galeon/demo/tls/server.pem",
		"ssl_key = /var/tmp/galeon/demo/tls/server-key.pem", "[sst]\nssl-mode = DISABLED"} {
		if !strings.Contains(cnf, want) {
			t.Errorf("my.cnf with TLS lacks %q:\n%s", want, cnf)
		}
	}
}

// TestSiteLayout checks what a multi-site sandbox is made of before any
// process starts: nodes named and placed by site, one segment per site,
// garbd on its own port, every address on the site's network.
func TestSiteLayout(t *testing.T) {
	s := &State{Name: "wan", Dir: "/var/tmp/galeon/wan", BasePort: 4400, SSTMethod: "rsync"}
	if err := s.planSites("dc1:2,dc2:1+garbd", false); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range s.Nodes {
		got = append(got, fmt.Sprintf("%s@%s seg%d %s", n.Name, n.Site, n.Segment, n.Addr()))
	}
	for _, a := range s.Arbitrators {
		got = append(got, fmt.Sprintf("%s@%s seg%d %s", a.Name, a.Site, a.Segment, a.addr()))
	}
	want := "dc1-1@dc1 seg0 172.30.64.11:4401 | dc1-2@dc1 seg0 172.30.64.11:4402 | dc2-1@dc2 seg1 172.30.64.12:4403 | dc2-garbd@dc2 seg1 172.30.64.12:4591"
	if strings.Join(got, " | ") != want {
		t.Errorf("layout:\n got %s\nwant %s", strings.Join(got, " | "), want)
	}
	cnf := s.myCnf(s.Nodes[2])
	for _, w := range []string{"gmcast.segment=1", "gmcast.listen_addr=tcp://172.30.64.12:4503", "bind-address = 172.30.64.12",
		"wsrep_cluster_address = gcomm://172.30.64.11:4501,172.30.64.11:4502,172.30.64.12:4503,172.30.64.12:4591",
		"wsrep_node_address = 172.30.64.12:4503", "wsrep_sst_receive_address = 172.30.64.12:4703"} {
		if !strings.Contains(cnf, w) {
			t.Errorf("dc2-1's my.cnf lacks %q:\n%s", w, cnf)
		}
	}
	if s.Net.Sites[1].NS != "galeon-wan-dc2" || s.Net.Bridge != "glb64" || s.Net.Sites[1].Veth != "glv64s2" {
		t.Errorf("network: %+v", s.Net)
	}
	if err := (&State{Name: "x", BasePort: 4400}).planSites("dc1:2,dc1:1", false); err == nil || !strings.Contains(err.Error(), "--dc: site dc1 is listed twice") {
		t.Errorf("duplicate site: %v", err)
	}
}

func TestDRClusterCnf(t *testing.T) {
	p := &State{Name: "p", Dir: "/tmp/p", BasePort: 4400, ReplicationSource: true}
	s := &State{Name: "dr", Dir: "/tmp/dr", BasePort: 5400}
	for i := 1; i <= 3; i++ {
		s.Nodes = append(s.Nodes, newNode(s.BasePort, i))
	}
	sb := &Sandbox{State: *s}
	sb.makeDROf(&Sandbox{State: *p})
	cnf := sb.myCnf(sb.Nodes[1])
	for _, want := range []string{"server_id = 2\n", "wsrep_gtid_domain_id = 200\n", "gtid_domain_id = 202\n", "skip_slave_start = ON\n", "read_only = ON\n", "log_slave_updates = ON\n"} {
		if !strings.Contains(cnf, want) {
			t.Errorf("a DR cluster node's my.cnf lacks %q:\n%s", want, cnf)
		}
	}
	sb.DRPromoted = true
	if cnf := sb.myCnf(sb.Nodes[1]); strings.Contains(cnf, "read_only") {
		t.Errorf("a promoted DR cluster node is still read-only:\n%s", cnf)
	}
	if cnf := p.myCnf(newNode(p.BasePort, 1)); !strings.Contains(cnf, "server_id = 1\n") || !strings.Contains(cnf, "wsrep_gtid_domain_id = 100\n") || strings.Contains(cnf, "skip_slave_start") {
		t.Errorf("the primary's my.cnf:\n%s", cnf)
	}
}
