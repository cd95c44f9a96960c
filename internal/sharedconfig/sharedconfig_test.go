package sharedconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/galeon-db/galeon/internal/config"
)

func TestRoundTripSealsSecrets(t *testing.T) {
	k := NewKey([]byte("0123456789abcdef0123456789abcdef"))
	rt := config.Runtime{
		Users:      []config.User{{Name: "app", Password: "s3cret-app", BackendPassword: "s3cret-backend", DefaultHostgroup: "writer"}},
		QueryRules: []config.QueryRule{{Match: "^SELECT", Destination: "reader"}},
		Weights:    map[string]config.Weights{"node1": {Writer: 100, Reader: 0}},
		Drained:    []string{"node2"}, Failback: "never", WriterIsAlsoReader: "always",
	}
	val, err := Encode(rt, "monitor", "s3cret-monitor", k, "proxy1")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cret-app", "s3cret-backend", "s3cret-monitor"} {
		if strings.Contains(string(val), secret) {
			t.Errorf("%q stored in clear text: %s", secret, val)
		}
	}
	d, err := Decode("/k", val, k)
	if err != nil {
		t.Fatal(err)
	}
	u := d.Runtime.Users[0]
	if u.Password != "s3cret-app" || u.BackendPassword != "s3cret-backend" || d.MonitorPassword != "s3cret-monitor" || u.DefaultHostgroup != "writer" {
		t.Errorf("decoded %+v, monitor %q", u, d.MonitorPassword)
	}
	if d.Runtime.Weights["node1"] != (config.Weights{Writer: 100}) || d.Runtime.Drained[0] != "node2" || d.Runtime.WriterIsAlsoReader != "always" {
		t.Errorf("decoded runtime %+v", d.Runtime)
	}
}

func TestOtherKeyOrBadValueIsRejectedByName(t *testing.T) {
	k1 := NewKey([]byte("0123456789abcdef0123456789abcdef"))
	k2 := NewKey([]byte("fedcba9876543210fedcba9876543210"))
	val, _ := Encode(config.Runtime{Users: []config.User{{Name: "app", Password: "x"}}, Failback: "never", WriterIsAlsoReader: "never"}, "", "", k1, "p")
	if _, err := Decode("/galeon/c/config/runtime", val, k2); err == nil || !strings.Contains(err.Error(), "secret_key_file") {
		t.Errorf("another key: %v, want an error naming discovery.secret_key_file", err)
	}
	for _, bad := range []string{`{`, `{"format":2}`, `{"format":1,"key_id":"` + k1.ID + `","galera":{"failback":"sometimes","writer_is_also_reader":"never"}}`} {
		if _, err := Decode("/galeon/c/config/runtime", []byte(bad), k1); err == nil || !strings.HasPrefix(err.Error(), "/galeon/c/config/runtime") {
			t.Errorf("%s: %v, want an error naming the key", bad, err)
		}
	}
}

func TestKeyFileIsCreatedPrivateAndReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "galeon-secret.key")
	k1, created, err := LoadOrCreateKey(path)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	k2, created, err := LoadOrCreateKey(path)
	if err != nil || created || k2.ID != k1.ID {
		t.Errorf("reload: created %v, id %s vs %s, %v", created, k2.ID, k1.ID, err)
	}
	_ = os.WriteFile(path, []byte("short"), 0o600)
	if _, _, err := LoadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), "discovery.secret_key_file") {
		t.Errorf("bad key file: %v", err)
	}
}
