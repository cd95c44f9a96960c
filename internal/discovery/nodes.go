package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
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
	StateUUID         string `json:"wsrep_cluster_state_uuid,omitempty"`
	LastCommitted     int64  `json:"wsrep_last_committed"`
	// Grastate is the node's grastate.dat (for recovery after an outage).
	Grastate galera.Grastate `json:"grastate"`
	// Synced is the clustercheck verdict (Synced in a Primary component).
	Synced    bool      `json:"synced"`
	UpdatedAt time.Time `json:"updated_at"`
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
type Registration struct {
	s     *Store
	key   string
	ttl   int64
	lease clientv3.LeaseID
	last  []byte
	stop  context.CancelFunc
	// lost is set when the keep-alive stream ends on its own: the lease
	// expired (etcd was unreachable longer than the TTL) and the key
	// with it.
	lost *atomic.Bool
}

// Register publishes facts under a new lease of ttl (at least etcd's
// minimum, about 2 s) and keeps the lease alive until Close or ctx ends.
func (s *Store) Register(ctx context.Context, facts NodeFacts, ttl time.Duration) (*Registration, error) {
	if err := facts.Validate(); err != nil {
		return nil, err
	}
	r := &Registration{s: s, key: s.Keys.Node(facts.Name), ttl: max(int64(ttl/time.Second), 2)}
	if err := r.grant(ctx); err != nil {
		return nil, err
	}
	if err := r.Update(ctx, facts); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Registration) grant(ctx context.Context) error {
	if r.stop != nil {
		r.stop()
	}
	lg, err := r.s.Client.Grant(ctx, r.ttl)
	if err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	kctx, cancel := context.WithCancel(context.Background())
	ch, err := r.s.Client.KeepAlive(kctx, lg.ID)
	if err != nil {
		cancel()
		return fmt.Errorf("lease keep-alive: %w", err)
	}
	lost := &atomic.Bool{}
	go func() {
		for range ch { // drain the acknowledgements; closed when kctx ends or the lease is lost
		}
		lost.Store(kctx.Err() == nil)
	}()
	r.lease, r.stop, r.last, r.lost = lg.ID, cancel, nil, lost
	return nil
}

// Update publishes facts if they changed (the timestamp aside). A lease
// that expired meanwhile (etcd unreachable longer than the TTL) is
// granted anew and the facts published again, changed or not.
func (r *Registration) Update(ctx context.Context, facts NodeFacts) error {
	if err := facts.Validate(); err != nil {
		return err
	}
	if r.lost.Load() {
		if err := r.grant(ctx); err != nil {
			return err
		}
	}
	cmp := facts
	cmp.UpdatedAt = time.Time{}
	sig, _ := json.Marshal(cmp)
	if string(sig) == string(r.last) {
		return nil
	}
	facts.UpdatedAt = time.Now().UTC()
	val, _ := json.Marshal(facts)
	_, err := r.s.Client.Put(ctx, r.key, string(val), clientv3.WithLease(r.lease))
	if err != nil && isLeaseGone(err) {
		if err = r.grant(ctx); err == nil {
			_, err = r.s.Client.Put(ctx, r.key, string(val), clientv3.WithLease(r.lease))
		}
	}
	if err != nil {
		return fmt.Errorf("publish %s: %w", r.key, err)
	}
	r.last = sig
	return nil
}

func isLeaseGone(err error) bool {
	return errors.Is(err, rpctypes.ErrLeaseNotFound) || errors.Is(err, rpctypes.ErrGRPCLeaseNotFound)
}

// Close removes the registration at once (revoking the lease), as on a
// clean shutdown.
func (r *Registration) Close(ctx context.Context) error {
	if r.stop != nil {
		r.stop()
	}
	_, err := r.s.Client.Revoke(ctx, r.lease)
	return err
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
	out := make(chan NodeSet, 1)
	go func() {
		defer close(out)
		for delay := 100 * time.Millisecond; ctx.Err() == nil; delay = min(2*delay, 2*time.Second) {
			if s.watchNodesOnce(ctx, out) {
				delay = 100 * time.Millisecond
			}
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
		}
	}()
	return out
}

// watchNodesOnce reads the set and follows changes until the watch ends;
// ok says whether it got as far as watching.
func (s *Store) watchNodesOnce(ctx context.Context, out chan NodeSet) (ok bool) {
	prefix := s.Keys.Nodes()
	resp, err := s.Client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return false
	}
	raw := map[string][]byte{}
	for _, kv := range resp.Kvs {
		raw[string(kv.Key)] = kv.Value
	}
	send := func(rev int64) bool {
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
		select { // keep only the latest snapshot for a slow receiver
		case <-out:
		default:
		}
		select {
		case out <- ns:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if !send(resp.Header.Revision) {
		return true
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for wr := range s.Client.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1)) {
		if wr.Err() != nil {
			return true
		}
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				delete(raw, string(ev.Kv.Key))
			} else {
				raw[string(ev.Kv.Key)] = ev.Kv.Value
			}
		}
		if !send(wr.Header.Revision) {
			return true
		}
	}
	return true
}
