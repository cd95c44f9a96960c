package config

import (
	"strings"
	"testing"
	"time"
)

const valid = `
[proxy]
listen = "127.0.0.1:6033"
no_backend_timeout = "500ms"
max_packet_size = "16MiB"
[[users]]
name = "app"
password = "secret"
[[servers]]
name = "n1"
address = "127.0.0.1:3306"
writer_weight = 10
[[servers]]
name = "n2"
address = "127.0.0.1:3307"
reader_weight = 5
[[query_rules]]
match = "^SELECT .* FOR UPDATE"
destination = "writer"
`

func TestParseValid(t *testing.T) {
	c, err := Parse(valid, "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Proxy.NoBackendWait.D() != 500*time.Millisecond || c.Proxy.MaxPacketSize != 16<<20 {
		t.Errorf("durations/sizes not decoded: %v %v", c.Proxy.NoBackendWait.D(), c.Proxy.MaxPacketSize)
	}
	if c.Admin.Listen != "127.0.0.1:6032" || c.Pool.MaxConnections != 200 {
		t.Errorf("defaults not applied: %+v %+v", c.Admin, c.Pool)
	}
}

// Every problem names its key, and all problems are reported at once.
func TestParseErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name, edit, want string
	}{
		{"unknown key", "[proxy]\nlisten = \"127.0.0.1:6033\"\nlisen = 1\n", "proxy.lisen: unknown key"},
		{"bad duration", "[proxy]\nno_backend_timeout = \"soon\"\n", `"soon" is not a duration`},
		{"bad size", "[proxy]\nmax_packet_size = \"huge\"\n", `"huge" is not a size`},
		{"syntax", "[proxy\n", "expected '.' or ']'"},
	}
	for _, c := range cases[:1] {
		_, err := Parse(c.edit+"[[users]]\nname=\"a\"\n[[servers]]\nname=\"n\"\naddress=\"127.0.0.1:1\"\nwriter_weight=1\n", "t.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	for _, c := range cases[1:] {
		_, err := Parse(c.edit, "t.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	bad := `
[proxy]
listen = "nonsense"
[pool]
max_connections = 0
[[users]]
name = "app"
password = "*ABC"
default_hostgroup = "everywhere"
[[users]]
name = "app"
[[servers]]
name = "n1"
address = "127.0.0.1:99999"
writer_weight = 0
reader_weight = -1
[[servers]]
name = "n1"
address = "127.0.0.1:3306"
[[query_rules]]
match = "([unclosed"
destination = "nowhere"
`
	_, err := Parse(bad, "bad.toml")
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{
		"proxy.listen:", "pool.max_connections: must be at least 1",
		"users[0].password: a hash must be", "users[0].default_hostgroup:", "users[1].name: \"app\" is used twice",
		"servers[0].address: port \"99999\"", "servers[0].reader_weight: must be 0 or more", "servers[1].name: \"n1\" is used twice",
		"servers: no server has writer_weight > 0", "query_rules[0].match: invalid regular expression", "query_rules[0].destination:",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

func TestSitesAreValidated(t *testing.T) {
	c := Defaults()
	c.Proxy.Site = "dc 1"
	c.Servers = []Server{{Name: "n1", Address: "127.0.0.1:3306", WriterWeight: 1, Site: "dc/2"}}
	probs := strings.Join(c.Validate(), "\n")
	for _, want := range []string{`proxy.site: "dc 1": use letters`, `servers[0].site: "dc/2": use letters`} {
		if !strings.Contains(probs, want) {
			t.Errorf("problems lack %q:\n%s", want, probs)
		}
	}
}

func TestCommitOutcomeValues(t *testing.T) {
	for v, ok := range map[string]bool{"on": true, "commits": true, "off": true, "maybe": false, "": false} {
		cfg := Defaults()
		cfg.Galera.CommitOutcome = v
		problems := strings.Join(cfg.Validate(), "; ")
		if got := !strings.Contains(problems, "galera.commit_outcome"); got != ok {
			t.Errorf("commit_outcome %q: accepted %v, want %v (%s)", v, got, ok, problems)
		}
	}
}
