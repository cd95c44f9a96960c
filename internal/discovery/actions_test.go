package discovery

import (
	"strings"
	"testing"
)

func TestActionValidate(t *testing.T) {
	for _, c := range []struct {
		what string
		a    Action
		err  string
	}{
		{"a restart", Action{ID: "1", Kind: ActionRestart, Node: "node1"}, ""},
		{"no id", Action{Kind: ActionRestart, Node: "node1"}, "without id"},
		{"unknown kind", Action{ID: "1", Kind: "format", Node: "node1"}, "unknown kind"},
		{"a bad node name", Action{ID: "1", Kind: ActionStop, Node: "../x"}, "node"},
		{"a backup copy", Action{ID: "1", Kind: ActionBackupCopy, Node: "node2", Dir: "/var/tmp/b/x.partial"}, ""},
		{"a copy into a relative directory", Action{ID: "1", Kind: ActionBackupCopy, Node: "node2", Dir: "b/x.partial"}, "clean absolute"},
		{"a copy into an unclean path", Action{ID: "1", Kind: ActionBackupCopy, Node: "node2", Dir: "/var/tmp/../../etc/x.partial"}, "clean absolute"},
		{"a copy into the data directory", Action{ID: "1", Kind: ActionBackupCopy, Node: "node2", Dir: "/var/lib/mysql"}, "ending in .partial"},
		{"a discard of /", Action{ID: "1", Kind: ActionBackupDiscard, Node: "node2", Dir: "/"}, "ending in .partial"},
		{"a discard of a bare suffix", Action{ID: "1", Kind: ActionBackupDiscard, Node: "node2", Dir: "/.partial"}, "ending in .partial"},
		{"a discard", Action{ID: "1", Kind: ActionBackupDiscard, Node: "node2", Dir: "/b/x.partial"}, ""},
		{"a finish", Action{ID: "1", Kind: ActionBackupFinish, Node: "node2", Dir: "/b/x.partial", Final: "/b/x"}, ""},
		{"a finish without its final name", Action{ID: "1", Kind: ActionBackupFinish, Node: "node2", Dir: "/b/x.partial"}, "ending in .partial"},
		{"a finish renaming elsewhere", Action{ID: "1", Kind: ActionBackupFinish, Node: "node2", Dir: "/b/x.partial", Final: "/etc"}, "ending in .partial"},
	} {
		err := c.a.Validate()
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.what, err, c.err)
		}
	}
}
