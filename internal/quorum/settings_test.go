package quorum

import (
	"slices"
	"testing"
)

func TestSettings(t *testing.T) {
	l, err := ParseLayout("dc1:2,dc2:1+garbd")
	if err != nil {
		t.Fatal(err)
	}
	s := Settings(l, 0)
	if len(s) != 3 {
		t.Fatalf("settings for %d members, want the 3 data nodes: %+v", len(s), s)
	}
	for i, ns := range s {
		for _, want := range []string{"wsrep_gtid_domain_id = 100", "server_id = 1", "log_slave_updates = ON", "auto_increment_increment = 3"} {
			if !slices.Contains(ns.Options, want) {
				t.Errorf("%s lacks %q: %v", ns.Member, want, ns.Options)
			}
		}
		if own := []string{"gtid_domain_id = 101", "gtid_domain_id = 102", "gtid_domain_id = 103"}[i]; !slices.Contains(ns.Options, own) {
			t.Errorf("%s lacks its own domain %q: %v", ns.Member, own, ns.Options)
		}
	}
	if s := Settings(l, 5); !slices.Contains(s[0].Options, "auto_increment_increment = 5") {
		t.Errorf("room for 5 nodes: %v", s[0].Options)
	}
}
