package proxy

import "testing"

func TestCausalSetting(t *testing.T) {
	for frag, want := range map[string]bool{
		"@@session.wsrep_sync_wait = 0":   false,
		"@@session.wsrep_sync_wait = 1":   true,
		"@@session.wsrep_sync_wait = 3":   true,
		"@@session.wsrep_sync_wait = 6":   false,
		"@@session.wsrep_sync_wait = '7'": true,
		"@@session.wsrep_sync_wait = ON":  false,
	} {
		if got := causalSetting(frag); got != want {
			t.Errorf("causalSetting(%q) = %v, want %v", frag, got, want)
		}
	}
}
