package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ReplicaFacts is what a replica's agent publishes about an asynchronous
// MariaDB replica of the cluster: where it replicates from, how far
// behind it is, and what its agent last did.
type ReplicaFacts struct {
	Name string `json:"name"`
	// Address is the replica's own client address. Members are a DR
	// cluster's nodes (a Galera cluster as the replica): Address is then
	// the one that replicates, the others get its transactions through
	// Galera.
	Address string   `json:"address"`
	Members []string `json:"members,omitempty"`
	// Source is the node it replicates from (name and host:port; ""
	// before the first setup); Pinned, the node an operator named
	// instead of the writer.
	SourceNode string `json:"source_node,omitempty"`
	Source     string `json:"source,omitempty"`
	Pinned     string `json:"pinned,omitempty"`
	// Up: the agent reached the replica on its last check (Error says
	// why not).
	Up    bool   `json:"up"`
	Error string `json:"error,omitempty"`
	// IORunning and SQLRunning are its replication threads; IOError
	// and SQLError their last errors.
	IORunning  bool   `json:"io_running"`
	SQLRunning bool   `json:"sql_running"`
	IOError    string `json:"io_error,omitempty"`
	SQLError   string `json:"sql_error,omitempty"`
	// SlavePos is its gtid_slave_pos; Behind the transactions it lacks
	// in the cluster's domain against the writer's published position;
	// BehindSeconds is Seconds_Behind_Master (nil: NULL, not
	// replicating).
	SlavePos      string `json:"gtid_slave_pos,omitempty"`
	Behind        int64  `json:"behind_transactions"`
	BehindSeconds *int64 `json:"behind_seconds,omitempty"`
	// State is the agent's last decision (keep, repoint, start, wait)
	// and Why its reason; Repoints counts its moves, LastRepoint when the
	// last ended and RepointTook how long it took from the writer's
	// publication.
	State       string        `json:"state"`
	Why         string        `json:"why,omitempty"`
	Repoints    int           `json:"repoints"`
	LastRepoint time.Time     `json:"last_repoint,omitempty"`
	RepointTook time.Duration `json:"repoint_took_ns,omitempty"`
	// Promoted: the replica was made a writable primary of its own
	// (galeon replica promote); Lost is how many of the cluster's
	// transactions it lacked then, against the cluster's last published
	// position.
	Promoted bool  `json:"promoted,omitempty"`
	Lost     int64 `json:"lost_transactions,omitempty"`
	// Archive is the binary log archive the agent keeps from this
	// replica (galeon agent --archive), if any.
	Archive   *ArchiveFacts `json:"archive,omitempty"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// ArchiveFacts describe a binary log archive kept from a replica: the
// cluster's transactions as one GTID stream, for point-in-time recovery.
type ArchiveFacts struct {
	Dir   string `json:"dir"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	// BehindBytes is what the replica's binary log has that the archive
	// lacks; LagSeconds bounds the age of the oldest write it lacks
	// (whole seconds; 0 when it lacks nothing).
	BehindBytes int64 `json:"behind_bytes"`
	LagSeconds  int64 `json:"lag_seconds"`
	// Streaming: the archive is being written; Error says why not.
	Streaming bool   `json:"streaming"`
	Error     string `json:"error,omitempty"`
}

// Validate rejects facts a reader must not trust.
func (f ReplicaFacts) Validate() error {
	if err := ValidName("replica", f.Name); err != nil {
		return err
	}
	if f.Address == "" && len(f.Members) > 0 {
		return nil // a DR cluster before any of its nodes replicated
	}
	if host, port, err := net.SplitHostPort(f.Address); err != nil || host == "" || port == "" {
		return fmt.Errorf("replica %s: address %q is not host:port", f.Name, f.Address)
	}
	return nil
}

// Replicas is the prefix of the replicas' registrations.
func (k Keys) Replicas() string { return k.root + "replicas/" }

// Replica is one replica's key.
func (k Keys) Replica(name string) string { return k.Replicas() + name }

// ReplicaRegistration keeps one replica's facts under a lease.
type ReplicaRegistration struct{ k *LeasedKey }

// RegisterReplica publishes facts under a new lease of ttl, kept alive
// until Close or ctx ends.
func (s *Store) RegisterReplica(ctx context.Context, facts ReplicaFacts, ttl time.Duration) (*ReplicaRegistration, error) {
	if err := facts.Validate(); err != nil {
		return nil, err
	}
	k, err := s.Lease(ctx, s.Keys.Replica(facts.Name), ttl)
	if err != nil {
		return nil, err
	}
	r := &ReplicaRegistration{k: k}
	return r, r.Update(ctx, facts)
}

// Update publishes facts if they changed (the timestamp aside).
func (r *ReplicaRegistration) Update(ctx context.Context, facts ReplicaFacts) error {
	if err := facts.Validate(); err != nil {
		return err
	}
	return putStamped(ctx, r.k, facts, func(f *ReplicaFacts, t time.Time) { f.UpdatedAt = t })
}

// Close removes the registration at once.
func (r *ReplicaRegistration) Close(ctx context.Context) error { return r.k.Close(ctx) }

// Replicas reads the registered replicas, sorted by name; values that do
// not validate are left out.
func (s *Store) Replicas(ctx context.Context) ([]ReplicaFacts, error) {
	resp, err := s.Client.Get(ctx, s.Keys.Replicas(), clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	raw := map[string][]byte{}
	for _, kv := range resp.Kvs {
		raw[string(kv.Key)] = kv.Value
	}
	return s.decodeReplicas(raw), nil
}

func (s *Store) decodeReplicas(raw map[string][]byte) []ReplicaFacts {
	out := []ReplicaFacts{}
	for k, v := range raw {
		var f ReplicaFacts
		if json.Unmarshal(v, &f) == nil && f.Validate() == nil && k == s.Keys.Replica(f.Name) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WatchReplicas sends the registered replicas, now and after every change,
// until ctx ends.
func (s *Store) WatchReplicas(ctx context.Context) <-chan []ReplicaFacts {
	return watchDecoded(ctx, s, s.Keys.Replicas(), func(raw map[string][]byte, _ int64) []ReplicaFacts { return s.decodeReplicas(raw) })
}
