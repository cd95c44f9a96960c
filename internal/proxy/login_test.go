package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/topology"
)

// While the cluster has lost quorum a login is accepted (its schema is
// checked by the first statement that reaches a node) and statements get
// the nodes' own 1047.
func TestLoginAndStatementsWithoutPrimary(t *testing.T) {
	nonPrimary := topology.Server{Name: "node1", Reason: "non-Primary (wsrep_cluster_status=non-Primary)"}
	stale := topology.Server{Name: "node1", Stale: true, Reason: "non-Primary (wsrep_cluster_status=non-Primary)"}
	unreachable := topology.Server{Name: "node2", Reason: "unreachable: 2 missed checks (i/o timeout)"}
	online := topology.Server{Name: "node3", Online: true, Primary: true}
	recovering := topology.Server{Name: "node3", Primary: true, Reason: "recovering: 1 of 2 good checks"}
	for _, tc := range []struct {
		name                string
		servers             []topology.Server
		checkable, noQuorum bool
	}{
		{"a node online", []topology.Server{nonPrimary, unreachable, online}, true, false},
		{"a node in the Primary component, not yet serving", []topology.Server{nonPrimary, recovering}, true, false},
		{"quorum lost: one node non-Primary, two paused", []topology.Server{nonPrimary, unreachable, unreachable}, false, true},
		{"quorum lost, stale node", []topology.Server{stale, unreachable}, false, true},
		{"every node unreachable", []topology.Server{unreachable, unreachable}, false, false},
		{"no node at all", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := schemaCheckable(tc.servers); got != tc.checkable {
				t.Errorf("schemaCheckable = %v, want %v", got, tc.checkable)
			}
			if got := noPrimary(tc.servers); got != tc.noQuorum {
				t.Errorf("noPrimary = %v, want %v", got, tc.noQuorum)
			}
		})
	}

	e := asSQLError(&errNoBackend{hostgroup: routeWriter, why: "node1 offline (non-Primary (wsrep_cluster_status=non-Primary))", wait: 2 * time.Second, noPrimary: true})
	if e.Code != mysqlproto.ErUnknownComError || e.State != "08S01" ||
		!strings.HasPrefix(e.Message, "WSREP has not yet prepared node for application use") || !strings.Contains(e.Message, "no node is in a Primary component") {
		t.Errorf("without quorum: %d (%s) %q, want the node's own 1047 (08S01) explaining it", e.Code, e.State, e.Message)
	}
	if strings.Contains(e.Message, "out of this proxy's reach") {
		t.Errorf("every node answers, yet the message suspects a cut: %q", e.Message)
	}
	// Some nodes do not answer: this proxy cannot tell a lost quorum from
	// its own site's cut, and must not advise forcing a recovery.
	e = asSQLError(&errNoBackend{hostgroup: routeWriter, why: "dc2-1 offline (non-Primary (wsrep_cluster_status=non-Primary))", wait: 2 * time.Second,
		noPrimary: true, unreached: []string{"dc1-1", "dc1-2"}})
	if e.Code != mysqlproto.ErUnknownComError || !strings.Contains(e.Message, "no node is in a Primary component") ||
		!strings.Contains(e.Message, "dc1-1, dc1-2 do not answer here") || !strings.Contains(e.Message, "do not force a recovery") {
		t.Errorf("a cut-off proxy: %d %q, want 1047 saying a Primary component may run out of reach, and not to force a recovery", e.Code, e.Message)
	}
	e = asSQLError(&errNoBackend{hostgroup: routeWriter, why: "node2 offline (unreachable)", wait: 2 * time.Second})
	if e.Code != mysqlproto.ErGaleonNoBackend {
		t.Errorf("every node unreachable: %d, want 9001", e.Code)
	}
}
