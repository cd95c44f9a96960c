package config

import (
	"strings"
	"testing"
)

func TestEmbeddedMember(t *testing.T) {
	three := []string{"p1=http://10.0.0.1:2380", "p2=http://10.0.0.2:2380", "p3=http://10.0.0.3:2380"}
	cases := []struct {
		name string
		d    Discovery
		want EmbeddedMember
		errs []string // substrings, one per expected problem
	}{
		{name: "single member: today's default", d: Discovery{},
			want: EmbeddedMember{Name: "galeon", ClientListen: "127.0.0.1:2379", PeerListen: "127.0.0.1:2380", ClientURL: "http://127.0.0.1:2379", PeerURL: "http://127.0.0.1:2380"}},
		{name: "peers", d: Discovery{MemberName: "p2", Peers: three, ClientListen: "10.0.0.2:2379"},
			want: EmbeddedMember{Name: "p2", ClientListen: "10.0.0.2:2379", PeerListen: "10.0.0.2:2380", ClientURL: "http://10.0.0.2:2379", PeerURL: "http://10.0.0.2:2380",
				Peers: []Peer{{"p1", "http://10.0.0.1:2380"}, {"p2", "http://10.0.0.2:2380"}, {"p3", "http://10.0.0.3:2380"}}}},
		{name: "peers, listening everywhere", d: Discovery{MemberName: "p1", Peers: three, ClientListen: "0.0.0.0:2379", PeerListen: "0.0.0.0:2380", ClientURL: "http://10.0.0.1:2379"},
			want: EmbeddedMember{Name: "p1", ClientListen: "0.0.0.0:2379", PeerListen: "0.0.0.0:2380", ClientURL: "http://10.0.0.1:2379", PeerURL: "http://10.0.0.1:2380",
				Peers: []Peer{{"p1", "http://10.0.0.1:2380"}, {"p2", "http://10.0.0.2:2380"}, {"p3", "http://10.0.0.3:2380"}}}},
		{name: "join", d: Discovery{MemberName: "p4", Join: "etcd://10.0.0.1:2379,etcd://10.0.0.2:2379", ClientListen: "10.0.0.4:2379", PeerListen: "10.0.0.4:2380"},
			want: EmbeddedMember{Name: "p4", ClientListen: "10.0.0.4:2379", PeerListen: "10.0.0.4:2380", ClientURL: "http://10.0.0.4:2379", PeerURL: "http://10.0.0.4:2380",
				Join: []string{"http://10.0.0.1:2379", "http://10.0.0.2:2379"}}},
		{name: "member name missing", d: Discovery{Peers: three}, errs: []string{"discovery.member_name: required"}},
		{name: "member not in peers", d: Discovery{MemberName: "p9", Peers: three}, errs: []string{`discovery.member_name: "p9" is not in discovery.peers`}},
		{name: "two peers", d: Discovery{MemberName: "p1", Peers: three[:2]}, errs: []string{"discovery.peers: 2 members: use 3 or 5"}},
		{name: "malformed peer", d: Discovery{MemberName: "p1", Peers: []string{"p1=http://10.0.0.1:2380", "p2", "p3=https://10.0.0.3:2380"}},
			errs: []string{`discovery.peers: "p2" is not NAME=`, `discovery.peers: "p3=https://10.0.0.3:2380": "https://10.0.0.3:2380": the embedded etcd speaks plain http://`}},
		{name: "duplicate peer URL", d: Discovery{MemberName: "p1", Peers: []string{"p1=http://10.0.0.1:2380", "p2=http://10.0.0.1:2380", "p3=http://10.0.0.3:2380"}},
			errs: []string{"every member needs its own name"}},
		{name: "wildcard client listen without client_url", d: Discovery{MemberName: "p1", Peers: three, ClientListen: "0.0.0.0:2379"},
			errs: []string{"discovery.client_url: required when client_listen"}},
		{name: "join: wildcard peer listen without peer_url", d: Discovery{MemberName: "p4", Join: "etcd://10.0.0.1:2379", ClientListen: "10.0.0.4:2379", PeerListen: ":2380"},
			errs: []string{"discovery.peer_url: required when peer_listen"}},
		{name: "join over TLS", d: Discovery{MemberName: "p4", Join: "etcds://10.0.0.1:2379", ClientListen: "10.0.0.4:2379"}, errs: []string{"discovery.join: the embedded etcd speaks no TLS"}},
		{name: "peer_url contradicts peers", d: Discovery{MemberName: "p1", Peers: three, PeerURL: "http://10.0.0.9:2380"}, errs: []string{"discovery.peer_url: \"http://10.0.0.9:2380\" differs"}},
		{name: "a single member that others may join", d: Discovery{MemberName: "p1", ClientListen: "0.0.0.0:2379", ClientURL: "http://10.0.0.1:2379", PeerListen: "10.0.0.1:2380"},
			want: EmbeddedMember{Name: "p1", ClientListen: "0.0.0.0:2379", PeerListen: "10.0.0.1:2380", ClientURL: "http://10.0.0.1:2379", PeerURL: "http://10.0.0.1:2380"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, errs := c.d.EmbeddedMember()
			if len(errs) != len(c.errs) {
				t.Fatalf("problems %q, want %d like %q", errs, len(c.errs), c.errs)
			}
			for i, e := range c.errs {
				if !strings.Contains(errs[i], e) {
					t.Errorf("problem %q, want it to contain %q", errs[i], e)
				}
			}
			if len(c.errs) > 0 {
				return
			}
			if got.Name != c.want.Name || got.ClientListen != c.want.ClientListen || got.PeerListen != c.want.PeerListen ||
				got.ClientURL != c.want.ClientURL || got.PeerURL != c.want.PeerURL || got.InitialCluster() != c.want.InitialCluster() ||
				strings.Join(got.Join, ",") != strings.Join(c.want.Join, ",") {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestClusterKeysNeedEmbedded(t *testing.T) {
	d := Discovery{Endpoints: "etcd://10.0.0.1:2379", Cluster: "galeon", Peers: []string{"p1=http://10.0.0.1:2380"}}
	p := d.ValidateStore()
	if len(p) != 1 || !strings.Contains(p[0], "discovery.peers: only with endpoints = \"embedded\"") {
		t.Fatalf("problems %q", p)
	}
	cfg, err := Parse(`
[proxy]
listen = "127.0.0.1:6033"
[discovery]
member_name = "p1"
peers = ["p1=http://10.0.0.1:2380", "p2=http://10.0.0.2:2380", "p3=http://10.0.0.3:2380"]
client_listen = "10.0.0.1:2379"
`, "galeon.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, probs := cfg.Discovery.EmbeddedMember()
	if len(probs) > 0 || m.PeerListen != "10.0.0.1:2380" || len(m.Peers) != 3 {
		t.Fatalf("%+v %q", m, probs)
	}
}
