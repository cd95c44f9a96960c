package proxyadmin

import (
	"strings"
	"testing"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/topology"
)

func TestCheckWriters(t *testing.T) {
	online := func(name string, w int) topology.Server {
		return topology.Server{Name: name, WriterWeight: w, ReaderWeight: 100, Online: true}
	}
	offline := func(name string, w int) topology.Server {
		return topology.Server{Name: name, WriterWeight: w, ReaderWeight: 100, Reason: "unreachable: connection refused"}
	}
	three := []topology.Server{online("node1", 100), online("node2", 100), online("node3", 100)}
	oneWriter := []topology.Server{online("node1", 1000), online("node2", 0), online("node3", 0)}
	ww := func(kv ...any) map[string]config.Weights {
		m := map[string]config.Weights{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = config.Weights{Writer: kv[i+1].(int), Reader: 100}
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		servers []topology.Server
		drained map[string]bool
		weights map[string]config.Weights
		drains  map[string]bool
		// want: "" accepted, else words the refusal must contain.
		want []string
	}{
		{name: "every writer weight to 0 (the issue's UPDATE servers SET writer_weight = 0)", servers: three,
			weights: ww("node1", 0, "node2", 0, "node3", 0),
			want:    []string{"no node would have writer_weight > 0", "9001", "Nothing was changed", "drain it instead", "leave writer_weight > 0 on at least one node", "WHERE name != 'node1'"}},
		{name: "the only writer weight to 0", servers: oneWriter, weights: ww("node1", 0),
			want: []string{"no node would have writer_weight > 0", "first give another node a writer weight", "WHERE name = 'node2'"}},
		{name: "one of three to 0: others take writes", servers: three, weights: ww("node1", 0)},
		{name: "two of three to 0", servers: three, weights: ww("node1", 0, "node2", 0)},
		{name: "move the weight in one statement", servers: oneWriter, weights: ww("node1", 0, "node2", 500)},
		{name: "reader weights only", servers: three, weights: map[string]config.Weights{"node1": {Writer: 100, Reader: 0}}},
		{name: "raise a weight while nothing can write", servers: []topology.Server{offline("node1", 0), offline("node2", 100)},
			weights: ww("node1", 100)},
		{name: "the weight left is on an offline node", servers: []topology.Server{online("node1", 100), offline("node2", 100), online("node3", 0)},
			weights: ww("node1", 0),
			want:    []string{"no node could take writes", "node2 is OFFLINE (unreachable: connection refused)", "take it from node1"}},
		{name: "the weight left is on a drained node", servers: three, drained: map[string]bool{"node3": true},
			weights: ww("node1", 0, "node2", 0),
			want:    []string{"no node could take writes", "node3 is drained"}},
		{name: "the weight left is on a node drained in the same statement", servers: three,
			weights: ww("node1", 0, "node2", 0), drains: map[string]bool{"node3": true},
			want: []string{"node3 is drained"}},
		{name: "the weight left is on a node undrained in the same statement", servers: []topology.Server{online("node1", 100), {Name: "node2", WriterWeight: 100, Draining: true, Reason: "operator drain"}},
			drained: map[string]bool{"node2": true}, weights: ww("node1", 0), drains: map[string]bool{"node2": false}},
		{name: "the weight left is on a read_only node", servers: []topology.Server{online("node1", 100), {Name: "node2", WriterWeight: 100, Online: true, ReadOnly: true}},
			weights: ww("node1", 0), want: []string{"node2 is read_only"}},
		{name: "nothing could write before: not this change's doing", servers: []topology.Server{offline("node1", 100), offline("node2", 100)},
			weights: ww("node1", 0)},
		{name: "drains alone are not weight changes", servers: oneWriter, drains: map[string]bool{"node1": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkWriters(tc.servers, tc.drained, tc.weights, tc.drains)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted, want refused")
			}
			if err.Code != 4025 || err.State != "23000" {
				t.Errorf("error %d (%s), want 4025 (23000)", err.Code, err.State)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Message, w) {
					t.Errorf("message lacks %q: %s", w, err.Message)
				}
			}
		})
	}
}
