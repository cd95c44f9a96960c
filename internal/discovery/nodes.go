package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/galeon-db/galeon/internal/galera"
)

// NodeFacts is what an agent publishes about its Galera node. Facts flow
// up; proxies and the controller decide from them.
type NodeFacts struct {
	Name string `json:"name"`
	// Address is where clients (and proxies) reach mariadbd: host:port.
	Address string `json:"address"`
	// Agent is the agent's HTTP address (clustercheck endpoint).
	Agent   string `json:"agent,omitempty"`
	Segment int    `json:"segment"`
	Site    string `json:"site,omitempty"`
	// Weight is the node's pc.weight (its vote in quorum; 0 is a valid
	// setting); nil if unknown.
	Weight *int `json:"pc_weight,omitempty"`
	// ReplLatency is wsrep_evs_repl_latency's average, in seconds: how
	// long the group takes to agree on this node's messages, i.e. the
	// round trip to the farthest member (0 until first measured; the
	// last measure is kept while the provider's window is empty).
	ReplLatency float64 `json:"repl_latency_s,omitempty"`
	// Up: the agent reached mariadbd on its last check; Error says why
	// not otherwise.
	Up    bool   `json:"up"`
	Error string `json:"error,omitempty"`
	// wsrep state as the node reports it.
	LocalState        int    `json:"wsrep_local_state"`
	LocalStateComment string `json:"wsrep_local_state_comment,omitempty"`
	ClusterStatus     string `json:"wsrep_cluster_status,omitempty"`
	Ready             bool   `json:"wsrep_ready"`
	ClusterSize       int    `json:"wsrep_cluster_size"`
	// Members are the client addresses of the component's members as
	// Galera lists them (wsrep_incoming_addresses).
	Members       []string `json:"wsrep_incoming_addresses,omitempty"`
	StateUUID     string   `json:"wsrep_cluster_state_uuid,omitempty"`
	LastCommitted int64    `json:"wsrep_last_committed"`
	// CachedDownto is the lowest seqno in the node's gcache: a joiner
	// whose position is at or above it can join by IST from this node.
	CachedDownto int64 `json:"wsrep_local_cached_downto"`
	RecvQueue    int   `json:"wsrep_local_recv_queue"`
	// Grastate is the node's grastate.dat (for recovery after an outage).
	Grastate galera.Grastate `json:"grastate"`
	// Stopped: the agent knows the node's server is not running (it can
	// tell only beside a node it manages, such as a sandbox node).
	Stopped bool `json:"stopped,omitempty"`
	// Position is a stopped node's last committed position, recovered
	// with --wsrep-recover after a crash; nil while unknown.
	Position *galera.Grastate `json:"position,omitempty"`
	// Action is the agent's report on the last action it took up.
	Action *ActionState `json:"action,omitempty"`
	// DataBytes is the size of the node's data directory without its
	// gcache and temporary tablespace: what a full state transfer (SST)
	// from this node copies, roughly. 0 when the agent does not know
	// the data directory.
	DataBytes int64 `json:"data_bytes,omitempty"`
	// Replication source facts: the node's gtid_binlog_pos, its
	// wsrep_gtid_domain_id (nil while unknown) and what makes it unsafe
	// for an asynchronous replica to follow (replica.CheckSource).
	GTIDBinlogPos  string   `json:"gtid_binlog_pos,omitempty"`
	GTIDDomain     *uint32  `json:"wsrep_gtid_domain_id,omitempty"`
	SourceProblems []string `json:"source_problems,omitempty"`
	// ReadOnly is the node's @@read_only. Fence says how the node stands
	// while a replica's promotion fences the cluster: FenceHeld while its
	// agent holds it read-only for the fence, otherwise why it is not
	// ("" when no fence concerns it).
	ReadOnly bool   `json:"read_only,omitempty"`
	Fence    string `json:"fence,omitempty"`
	// Transfer is the state transfer the node is receiving, if any.
	Transfer *Transfer `json:"transfer,omitempty"`
	// Synced is the clustercheck verdict (Synced in a Primary component).
	Synced bool `json:"synced"`
	// Left: the agent is leaving on purpose (a clean stop, scale-in):
	// proxies stop routing to the node at once. A registration that
	// merely lapsed (etcd away, the agent killed) is not a departure:
	// proxies keep a node while their own checks find it healthy.
	Left      bool      `json:"left,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Transfer is a joiner's state transfer as its agent sees it.
type Transfer struct {
	// Kind is "SST" (a full copy, seen in the data directory) or "IST"
	// (write-sets from a donor's gcache, seen in wsrep_last_committed).
	Kind  string    `json:"kind"`
	Since time.Time `json:"since"`
	// Done is bytes received (SST) or write-sets applied (IST) so far;
	// Rate its recent speed per second.
	Done int64   `json:"done"`
	Rate float64 `json:"rate"`
	// From is the seqno the joiner had when an IST started.
	From int64 `json:"from,omitempty"`
}

// Validate rejects facts that must never reach routing: a corrupt or
// hostile value in etcd is reported, not applied.
func (f NodeFacts) Validate() error {
	if err := ValidName("node", f.Name); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(f.Address)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("node %s: address %q is not host:port", f.Name, f.Address)
	}
	if f.Segment < 0 || f.Segment > 255 {
		return fmt.Errorf("node %s: segment %d is out of range (0-255, gmcast.segment)", f.Name, f.Segment)
	}
	if f.LocalState < 0 || f.LocalState > 5 {
		return fmt.Errorf("node %s: wsrep_local_state %d is not a Galera state", f.Name, f.LocalState)
	}
	return nil
}

// DecodeNode parses and validates one registration value.
func DecodeNode(key string, value []byte) (NodeFacts, error) {
	var f NodeFacts
	if err := json.Unmarshal(value, &f); err != nil {
		return f, fmt.Errorf("%s: not valid node facts: %v", key, err)
	}
	if err := f.Validate(); err != nil {
		return f, fmt.Errorf("%s: %v", key, err)
	}
	return f, nil
}

// Registration keeps one node's facts in the store under a lease: if the
// process holding it dies, the lease expires and the node disappears.
type Registration struct{ k *LeasedKey }

// Register publishes facts under a new lease of ttl (at least etcd's
// minimum, about 2 s) and keeps the lease alive until Close or ctx ends.
func (s *Store) Register(ctx context.Context, facts NodeFacts, ttl time.Duration) (*Registration, error) {
	if err := facts.Validate(); err != nil {
		return nil, err
	}
	k, err := s.Lease(ctx, s.Keys.Node(facts.Name), ttl)
	if err != nil {
		return nil, err
	}
	r := &Registration{k: k}
	if err := r.Update(ctx, facts); err != nil {
		return nil, err
	}
	return r, nil
}

// Update publishes facts if they changed (the timestamp aside). A lease
// that expired meanwhile (etcd unreachable longer than the TTL) is
// granted anew and the facts published again, changed or not.
func (r *Registration) Update(ctx context.Context, facts NodeFacts) error {
	if err := facts.Validate(); err != nil {
		return err
	}
	return putStamped(ctx, r.k, facts, func(f *NodeFacts, t time.Time) { f.UpdatedAt = t })
}

// Close removes the registration at once (revoking the lease), as on a
// clean shutdown.
func (r *Registration) Close(ctx context.Context) error { return r.k.Close(ctx) }

// Leave says the node leaves on purpose (facts with Left set), then
// removes the registration: proxies stop routing to it at once, where a
// registration that lapsed leaves them routing to it while it is healthy.
func (r *Registration) Leave(ctx context.Context, facts NodeFacts) error {
	facts.Left = true
	if err := r.Update(ctx, facts); err != nil {
		return err
	}
	return r.Close(ctx)
}

// NodeSet is the registered nodes at one revision, by name, with the
// values that were rejected.
type NodeSet struct {
	Nodes    map[string]NodeFacts
	Rejected []error
	Revision int64
}

// Sorted returns the nodes ordered by name.
func (ns NodeSet) Sorted() []NodeFacts {
	out := make([]NodeFacts, 0, len(ns.Nodes))
	for _, n := range ns.Nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WatchNodes sends the whole set of registered nodes, first as it is now
// and then after every change, until ctx ends. When the watch breaks
// (etcd restarted, unreachable), it reads the set again and resumes, so a
// receiver always ends up with the current state.
func (s *Store) WatchNodes(ctx context.Context) <-chan NodeSet {
	prefix := s.Keys.Nodes()
	return watchDecoded(ctx, s, prefix, func(raw map[string][]byte, rev int64) NodeSet {
		ns := NodeSet{Nodes: map[string]NodeFacts{}, Revision: rev}
		for k, v := range raw {
			f, err := DecodeNode(k, v)
			if err != nil {
				ns.Rejected = append(ns.Rejected, err)
				continue
			}
			if k != prefix+f.Name {
				ns.Rejected = append(ns.Rejected, fmt.Errorf("%s: holds node %q", k, f.Name))
				continue
			}
			ns.Nodes[f.Name] = f
		}
		return ns
	})
}

// Nodes reads the registered nodes now, sorted by name; registrations
// that do not validate are left out.
func (s *Store) Nodes(ctx context.Context) ([]NodeFacts, error) {
	resp, err := s.Client.Get(ctx, s.Keys.Nodes(), clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	ns := NodeSet{Nodes: map[string]NodeFacts{}}
	for _, kv := range resp.Kvs {
		if f, err := DecodeNode(string(kv.Key), kv.Value); err == nil {
			ns.Nodes[f.Name] = f
		}
	}
	return ns.Sorted(), nil
}
