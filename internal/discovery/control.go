package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// WriterDecision is the controller's published choice of writer, the one
// every proxy follows. A change of writer is published in two steps, so
// that no two nodes take writes at once even through different proxies:
// first a fencing decision (Old takes no more writes, Writer is ""), and
// only when every proxy has applied it, the new writer under the same
// epoch.
type WriterDecision struct {
	// Writer takes the writes; "" while fencing or when no node qualifies.
	Writer string `json:"writer"`
	// Epoch numbers decisions; it only grows.
	Epoch uint64 `json:"epoch"`
	// Fencing: proxies stop writing to Old; Next is the intended writer.
	Fencing bool   `json:"fencing,omitempty"`
	Old     string `json:"old,omitempty"`
	Next    string `json:"next,omitempty"`
	// OldFailed (fencing only): the controller sees Old failed, so the
	// fence is a failover — proxies close what runs there at once
	// instead of letting in-flight transactions finish (drain_grace is
	// for planned moves of a healthy writer).
	OldFailed bool `json:"old_failed,omitempty"`
	// Target (fencing only) is an operator's switchover target: a
	// one-shot request, carried by the fence until the writer is named
	// (the target if it is still fit, otherwise the policy's choice),
	// then forgotten.
	Target string `json:"target,omitempty"`
	// Fenced says why the cluster has no writer at all (a replica was
	// promoted in its place): a proxy that loses the control plane keeps
	// refusing writes instead of choosing a writer alone.
	Fenced string `json:"fenced,omitempty"`
	// Controller is the proxy that published the decision, Reason why.
	Controller string    `json:"controller"`
	Reason     string    `json:"reason,omitempty"`
	At         time.Time `json:"at"`
}

// Validate rejects decisions that must never reach routing.
func (d WriterDecision) Validate() error {
	for what, n := range map[string]string{"writer": d.Writer, "old": d.Old, "next": d.Next, "target": d.Target} {
		if n != "" {
			if err := ValidName(what, n); err != nil {
				return err
			}
		}
	}
	if d.Epoch == 0 {
		return errors.New("epoch 0: epochs start at 1")
	}
	if d.Fencing && d.Writer != "" {
		return fmt.Errorf("a fencing decision names no writer (has %q)", d.Writer)
	}
	if !d.Fencing && (d.OldFailed || d.Target != "") {
		return errors.New("old_failed and target belong to a fencing decision only")
	}
	if err := ValidName("controller", d.Controller); err != nil {
		return err
	}
	return nil
}

// DecisionUpdate is the published decision at one revision. Present is
// false before any controller published one; Rejected holds a value that
// did not decode or validate (it is never applied).
type DecisionUpdate struct {
	Decision WriterDecision
	Present  bool
	Rejected error
	Revision int64
}

// WatchWriter sends the published writer decision, first as it is now and
// then after every change, until ctx ends.
func (s *Store) WatchWriter(ctx context.Context) <-chan DecisionUpdate {
	key := s.Keys.Writer()
	return watchDecoded(ctx, s, key, func(raw map[string][]byte, rev int64) DecisionUpdate {
		u := DecisionUpdate{Revision: rev}
		if v, ok := raw[key]; ok {
			u.Decision, u.Rejected = DecodeDecision(key, v)
			u.Present = u.Rejected == nil
		}
		return u
	})
}

// DecodeDecision parses and validates the writer key's value.
func DecodeDecision(key string, value []byte) (WriterDecision, error) {
	var d WriterDecision
	if err := json.Unmarshal(value, &d); err != nil {
		return d, fmt.Errorf("%s: not a valid writer decision: %v", key, err)
	}
	if err := d.Validate(); err != nil {
		return d, fmt.Errorf("%s: %v", key, err)
	}
	return d, nil
}

// ReadDecision reads the published decision now, with a linearizable
// read: it fails when etcd has no quorum, which is how a proxy learns
// that the control plane is unreachable.
func (s *Store) ReadDecision(ctx context.Context) (DecisionUpdate, error) {
	key := s.Keys.Writer()
	resp, err := s.Client.Get(ctx, key)
	if err != nil {
		return DecisionUpdate{}, err
	}
	u := DecisionUpdate{Revision: resp.Header.Revision}
	if len(resp.Kvs) > 0 {
		u.Decision, u.Rejected = DecodeDecision(key, resp.Kvs[0].Value)
		u.Present = u.Rejected == nil
	}
	return u, nil
}

// SwitchoverRequest is an operator's request, made through any proxy,
// that the controller move the writer role to Node. It is one-shot: the
// controller answers it in the same key (State accepted or refused, with
// Error saying why), and a later request replaces it.
type SwitchoverRequest struct {
	ID    string    `json:"id"`
	Node  string    `json:"node"`
	By    string    `json:"by"`
	At    time.Time `json:"at"`
	State string    `json:"state"`
	Error string    `json:"error,omitempty"`
	Valid bool      `json:"-"`
}

// The states of a switchover request.
const (
	SwitchoverPending  = "pending"
	SwitchoverAccepted = "accepted"
	SwitchoverRefused  = "refused"
)

// RequestSwitchover asks the controller to move the writer to node and
// waits (until ctx ends) for its answer: nil once accepted, the
// controller's reason when refused.
func (s *Store) RequestSwitchover(ctx context.Context, node, by string) error {
	if err := ValidName("node", node); err != nil {
		return err
	}
	now := time.Now().UTC()
	id := fmt.Sprintf("%s-%d", by, now.UnixNano())
	val, _ := json.Marshal(SwitchoverRequest{ID: id, Node: node, By: by, At: now, State: SwitchoverPending})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := s.WatchSwitchover(wctx)
	if _, err := s.Client.Put(ctx, s.Keys.Switchover(), string(val)); err != nil {
		return fmt.Errorf("switchover request to the controller: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("switchover to %s: no answer from the controller in time; the request stays pending and may still be carried out (a controller answers it once elected): see SELECT * FROM writer and events", node)
		case r, ok := <-answers:
			if !ok {
				return fmt.Errorf("switchover to %s: no answer from the controller in time; the request stays pending and may still be carried out (a controller answers it once elected): see SELECT * FROM writer and events", node)
			}
			if !r.Valid || r.ID != id {
				if r.Valid && r.ID != id && r.At.After(now) {
					return fmt.Errorf("switchover to %s: superseded by a request for %s by %s", node, r.Node, r.By)
				}
				continue
			}
			switch r.State {
			case SwitchoverAccepted:
				return nil
			case SwitchoverRefused:
				return fmt.Errorf("switchover to %s refused by the controller: %s", node, r.Error)
			}
		}
	}
}

// WatchSwitchover sends the switchover request after each change (Valid
// false when there is none or it does not decode).
func (s *Store) WatchSwitchover(ctx context.Context) <-chan SwitchoverRequest {
	key := s.Keys.Switchover()
	return watchDecoded(ctx, s, key, func(raw map[string][]byte, _ int64) SwitchoverRequest {
		var r SwitchoverRequest
		if v, ok := raw[key]; ok && json.Unmarshal(v, &r) == nil && ValidName("node", r.Node) == nil {
			r.Valid = true
		}
		return r
	})
}

// AnswerSwitchover records the controller's answer to request r (only
// while r is still the pending request: a newer one is left alone).
func (l *Leadership) AnswerSwitchover(ctx context.Context, r SwitchoverRequest, accepted bool, why string) error {
	r.State, r.Error = SwitchoverRefused, why
	if accepted {
		r.State, r.Error = SwitchoverAccepted, ""
	}
	val, _ := json.Marshal(r)
	key := l.s.Keys.Switchover()
	cur, err := l.s.Client.Get(ctx, key)
	if err != nil {
		return err
	}
	var now SwitchoverRequest
	if len(cur.Kvs) == 0 || json.Unmarshal(cur.Kvs[0].Value, &now) != nil || now.ID != r.ID {
		return nil
	}
	_, err = l.s.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", cur.Kvs[0].ModRevision),
			clientv3.Compare(clientv3.CreateRevision(l.election.Key()), "=", l.election.Rev())).
		Then(clientv3.OpPut(key, string(val))).Commit()
	return err
}

// Leadership is one term as the cluster's controller, won through an
// etcd election (concurrency.Election): at most one process holds it at
// any revision, and it ends when the holder's session lease expires.
type Leadership struct {
	s        *Store
	session  *concurrency.Session
	election *concurrency.Election
}

// Campaign blocks until id is elected controller or ctx ends. ttl is how
// long a dead controller keeps the role (its session lease).
func (s *Store) Campaign(ctx context.Context, id string, ttl time.Duration) (*Leadership, error) {
	sess, err := concurrency.NewSession(s.Client, concurrency.WithTTL(max(int(ttl/time.Second), 2)), concurrency.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("controller session: %w", err)
	}
	e := concurrency.NewElection(sess, s.Keys.Controller())
	if err := e.Campaign(ctx, id); err != nil {
		sess.Close()
		return nil, fmt.Errorf("controller election: %w", err)
	}
	return &Leadership{s: s, session: sess, election: e}, nil
}

// Done is closed when the term ends (the session's lease was lost).
func (l *Leadership) Done() <-chan struct{} { return l.session.Done() }

// Publish writes d as the decision, only while this term holds: the
// write is a transaction conditioned on the election key this term
// created, so a controller that lost the role (paused, partitioned) can
// never overwrite its successor's decision. It returns the store's
// revision of the write.
func (l *Leadership) Publish(ctx context.Context, d WriterDecision) (int64, error) {
	if err := d.Validate(); err != nil {
		return 0, err
	}
	val, _ := json.Marshal(d)
	resp, err := l.s.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(l.election.Key()), "=", l.election.Rev())).
		Then(clientv3.OpPut(l.s.Keys.Writer(), string(val))).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("publish writer decision: %w", err)
	}
	if !resp.Succeeded {
		return 0, errors.New("publish writer decision: no longer the controller")
	}
	return resp.Header.Revision, nil
}

// Resign ends the term at once (clean shutdown): another proxy takes over
// without waiting for the lease to expire.
func (l *Leadership) Resign(ctx context.Context) {
	_ = l.election.Resign(ctx)
	l.session.Close()
}

// Controller returns the current controller's id ("" when none).
func (s *Store) Controller(ctx context.Context) (string, error) {
	resp, err := s.Client.Get(ctx, s.Keys.Controller(), clientv3.WithFirstCreate()...)
	if err != nil || len(resp.Kvs) == 0 {
		return "", err
	}
	return string(resp.Kvs[0].Value), nil
}

// ProxyFacts is what a proxy publishes about itself and its view, under
// its lease: the controller reads it to know when every proxy has fenced
// the old writer, operators to see whether all proxies agree.
type ProxyFacts struct {
	Name  string `json:"name"`
	MySQL string `json:"mysql"`
	Admin string `json:"admin,omitempty"`
	// Writer and Epoch are what the proxy routes writes to now; Applied
	// is the epoch of the last published decision it has carried out
	// (it writes to no node other than that decision's writer).
	Writer  string `json:"writer"`
	Epoch   uint64 `json:"epoch"`
	Applied uint64 `json:"applied"`
	// Seen is the epoch of the latest decision the proxy received.
	Seen      uint64 `json:"seen"`
	Switching bool   `json:"switching,omitempty"`
	// Degraded: etcd is unreachable from this proxy; it decides alone.
	Degraded bool `json:"degraded,omitempty"`
	// Controller: this proxy holds the controller role.
	Controller bool `json:"controller,omitempty"`
	// Online lists the nodes this proxy's monitor sees ONLINE; Reached
	// those whose last check it got an answer from (ONLINE or not: a
	// node outside the Primary component answers too).
	Online  []string `json:"online"`
	Reached []string `json:"reached,omitempty"`
	// InUse counts, by node, the backend connections busy with a
	// statement or transaction now (a drain waits for them).
	InUse     map[string]int64 `json:"in_use,omitempty"`
	UpdatedAt time.Time        `json:"updated_at"`
}

// ProxyRecord keeps a proxy's facts under its lease.
type ProxyRecord struct{ k *LeasedKey }

// RegisterProxy publishes f under a lease of ttl.
func (s *Store) RegisterProxy(ctx context.Context, f ProxyFacts, ttl time.Duration) (*ProxyRecord, error) {
	if err := ValidName("proxy", f.Name); err != nil {
		return nil, fmt.Errorf("discovery.proxy_name: %w", err)
	}
	k, err := s.Lease(ctx, s.Keys.Proxies()+f.Name, ttl)
	if err != nil {
		return nil, err
	}
	r := &ProxyRecord{k: k}
	return r, r.Update(ctx, f)
}

// Update publishes f if it changed (the timestamp aside).
func (r *ProxyRecord) Update(ctx context.Context, f ProxyFacts) error {
	return putStamped(ctx, r.k, f, func(f *ProxyFacts, t time.Time) { f.UpdatedAt = t })
}

// Close removes the record (clean shutdown).
func (r *ProxyRecord) Close(ctx context.Context) error { return r.k.Close(ctx) }

// Proxies reads every live proxy's record, sorted by name; records that
// do not decode are skipped.
func (s *Store) Proxies(ctx context.Context) ([]ProxyFacts, error) {
	resp, err := s.Client.Get(ctx, s.Keys.Proxies(), clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	raw := map[string][]byte{}
	for _, kv := range resp.Kvs {
		raw[string(kv.Key)] = kv.Value
	}
	return decodeProxies(raw), nil
}

// WatchProxies sends every live proxy's record after each change.
func (s *Store) WatchProxies(ctx context.Context) <-chan []ProxyFacts {
	return watchDecoded(ctx, s, s.Keys.Proxies(), func(raw map[string][]byte, _ int64) []ProxyFacts {
		return decodeProxies(raw)
	})
}

func decodeProxies(raw map[string][]byte) []ProxyFacts {
	out := make([]ProxyFacts, 0, len(raw))
	for _, v := range raw {
		var f ProxyFacts
		if json.Unmarshal(v, &f) == nil && ValidName("proxy", f.Name) == nil {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
