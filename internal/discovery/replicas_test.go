package discovery

import "testing"

func TestReplicaFactsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    ReplicaFacts
		ok   bool
	}{
		{"a replica", ReplicaFacts{Name: "r1", Address: "10.0.0.9:3306"}, true},
		{"a replica without an address", ReplicaFacts{Name: "r1"}, false},
		{"a DR cluster before any node replicated", ReplicaFacts{Name: "dr", Members: []string{"10.0.1.1:3306", "10.0.1.2:3306"}}, true},
		{"a DR cluster replicating through a node", ReplicaFacts{Name: "dr", Address: "10.0.1.1:3306", Members: []string{"10.0.1.1:3306"}}, true},
		{"a bad address", ReplicaFacts{Name: "r1", Address: "nohost"}, false},
	} {
		if err := tc.f.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
