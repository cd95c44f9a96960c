package sandbox

import (
	"strings"
	"testing"

	"github.com/galeon-db/galeon/internal/config"
)

// TestProxyConfigForSites: a multi-site sandbox's proxies, host and
// sites alike, share one control plane on the sites' bridge, with the
// writer's site and the hold-down set; with an etcd only the host
// reaches, a site's proxy gets the static list and a comment saying it
// decides alone.
func TestProxyConfigForSites(t *testing.T) {
	s := &State{Name: "wan", Dir: "/var/tmp/galeon/wan", BasePort: 4400, SSTMethod: "rsync"}
	if err := s.planSites("dc1:2,dc2:1,dc3:garbd", false); err != nil {
		t.Fatal(err)
	}
	s.Discovery = SiteDiscoveryEndpoint(s.BasePort)
	if s.Discovery != "etcd://172.30.64.1:4900" {
		t.Fatalf("SiteDiscoveryEndpoint = %s, want the bridge's address", s.Discovery)
	}
	s.Credentials = Credentials{AppUser: "app", AppPassword: "a", MonitorUser: "monitor", MonitorPassword: "m"}
	sb := &Sandbox{State: *s}
	parse := func(text string) config.Config {
		t.Helper()
		c, err := config.Parse(text, "/etc/galeon/galeon.toml")
		if err != nil {
			t.Fatalf("%v:\n%s", err, text)
		}
		return *c
	}
	host := parse(sb.ProxyConfig(ProxyOptions{Listen: "127.0.0.1:6033"}))
	if d := host.Discovery; d.Endpoints != "embedded" || d.ClientListen != "172.30.64.1:4900" || d.SecretKeyFile != "/var/tmp/galeon/wan/galeon-secret.key" {
		t.Errorf("host proxy: discovery %+v, want the embedded etcd on the bridge and the sandbox's key", d)
	}
	dc2 := parse(sb.ProxyConfig(ProxyOptions{Listen: "172.30.64.12:6033", Site: "dc2"}))
	if d := dc2.Discovery; d.Endpoints != s.Discovery || d.SecretKeyFile != host.Discovery.SecretKeyFile {
		t.Errorf("dc2 proxy: discovery %+v, want the host's etcd and key", d)
	}
	if len(dc2.Servers) != 0 {
		t.Errorf("dc2 proxy lists %d servers: its nodes must come from the agents", len(dc2.Servers))
	}
	for name, c := range map[string]config.Config{"host": host, "dc2": dc2} {
		if c.Galera.WriterSite != "dc1" || c.Galera.SiteHoldDown.D() != config.DefaultSiteHoldDown {
			t.Errorf("%s proxy: writer_site %q, site_hold_down %s; want dc1 (where the writer starts) and %s", name, c.Galera.WriterSite, c.Galera.SiteHoldDown.D(), config.DefaultSiteHoldDown)
		}
	}

	sb.Discovery = "etcd://127.0.0.1:2379"
	text := sb.ProxyConfig(ProxyOptions{Listen: "172.30.64.12:6033", Site: "dc2"})
	if c := parse(text); c.Discovery.Endpoints != "" || len(c.Servers) != 3 || !strings.Contains(text, "decides the writer alone") {
		t.Errorf("a site proxy with a loopback etcd: discovery %q, %d servers, want the static list and a warning:\n%s", c.Discovery.Endpoints, len(c.Servers), text)
	}
}
