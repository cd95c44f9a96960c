package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Promotion is an operator's promotion of an asynchronous replica to a
// primary of its own (galeon replica promote): while it is recorded, the
// cluster is fenced — the controller names no writer, so no proxy writes
// to the old cluster — and the replica's agent makes the replica
// writable, once it has applied the cluster's last known position or
// CatchUpUntil has passed.
type Promotion struct {
	Replica string `json:"replica"`
	Address string `json:"address"`
	// ClusterPos is the cluster's last position its agents published
	// (gtid_binlog_pos, the cluster's domain) when the promotion began;
	// Domain the cluster's GTID domain.
	ClusterPos string `json:"cluster_pos,omitempty"`
	Domain     uint32 `json:"domain"`
	// CatchUpUntil bounds the agent's wait for ClusterPos; Planned: the
	// cluster ran when it was promoted (--force), so the wait is kept
	// even while the replica's threads are down a moment.
	CatchUpUntil time.Time `json:"catch_up_until"`
	Planned      bool      `json:"planned,omitempty"`
	By           string    `json:"by"`
	At           time.Time `json:"at"`
	// Lifting: galeon replica unfence is lifting the fence. The
	// controller still names no writer, while the nodes' agents make
	// their nodes writable again; then the record goes.
	Lifting bool `json:"lifting,omitempty"`
}

// FenceHeld is NodeFacts.Fence while the node's agent holds it read-only
// for a promotion's fence.
const FenceHeld = "read-only"

// HoldsFence says whether the node is read-only for the fence (or its
// agent could not lift that).
func (n NodeFacts) HoldsFence() bool {
	return n.Fence == FenceHeld || strings.HasPrefix(n.Fence, FenceHeld+" (")
}

// LiftPromotion marks the promotion record as being lifted (Lifting).
func (s *Store) LiftPromotion(ctx context.Context) (*Promotion, error) {
	key := s.Keys.Promoted()
	resp, err := s.Client.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, errors.New("no promotion is recorded: the cluster is not fenced")
	}
	var p Promotion
	if err := json.Unmarshal(resp.Kvs[0].Value, &p); err != nil {
		// An unreadable record fences too: lifting it removes it.
		p = Promotion{Replica: "?", By: "unreadable: " + err.Error()}
	}
	p.Lifting = true
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	txn, err := s.Client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision)).
		Then(clientv3.OpPut(key, string(raw))).Commit()
	if err != nil {
		return nil, err
	}
	if !txn.Succeeded {
		return nil, errors.New("the promotion record changed meanwhile: run unfence again")
	}
	return &p, nil
}

// Promoted is the key of the cluster's promotion record.
func (k Keys) Promoted() string { return k.root + "promoted" }

// BeginPromotion records p unless a promotion is recorded already.
func (s *Store) BeginPromotion(ctx context.Context, p Promotion) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	key := s.Keys.Promoted()
	resp, err := s.Client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(raw))).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		cur, _ := s.ReadPromotion(ctx)
		if cur != nil {
			return fmt.Errorf("replica %s was promoted already (by %s at %s): the cluster is fenced", cur.Replica, cur.By, cur.At.Format(time.RFC3339))
		}
		return errors.New("a promotion is recorded already")
	}
	return nil
}

// ReadPromotion returns the promotion record, if any. An unreadable one
// still fences (Replica says why).
func (s *Store) ReadPromotion(ctx context.Context) (*Promotion, error) {
	p, err := getJSON[Promotion](ctx, s, s.Keys.Promoted())
	if errors.Is(err, errUnreadable) {
		return &Promotion{Replica: "?", By: err.Error()}, nil
	}
	return p, err
}

// ClearPromotion removes the record: the cluster is no longer fenced.
func (s *Store) ClearPromotion(ctx context.Context) error {
	_, err := s.Client.Delete(ctx, s.Keys.Promoted())
	return err
}

// WatchPromotion sends the promotion record after each change (nil when
// there is none).
func (s *Store) WatchPromotion(ctx context.Context) <-chan *Promotion {
	return watchJSON(ctx, s, s.Keys.Promoted(), func(err error) *Promotion {
		return &Promotion{Replica: "?", By: "unreadable: " + err.Error()}
	})
}

// Fence is what the promotion means for the cluster, said to its clients.
func (p Promotion) Fence() string {
	return fmt.Sprintf("the cluster is fenced: replica %s (%s) was promoted to a primary of its own by %s at %s; write there (galeon replica unfence lifts the fence)",
		p.Replica, p.Address, p.By, p.At.UTC().Format("2006-01-02 15:04:05 UTC"))
}

// FenceMark is the key an agent keeps while it holds its node read-only
// for a promotion's fence (no lease: it outlives the agent), so that an
// agent that restarts knows the node's read_only is the fence's, and
// unfence can tell which nodes still hold it.
func (k Keys) FenceMark(node string) string { return k.FenceMarks() + node }

// FenceMarks is the prefix of every FenceMark.
func (k Keys) FenceMarks() string { return k.root + "fence/" }

// SetFenceMark records (on) or removes the mark of node.
func (s *Store) SetFenceMark(ctx context.Context, node string, on bool) error {
	if on {
		_, err := s.Client.Put(ctx, s.Keys.FenceMark(node), time.Now().UTC().Format(time.RFC3339))
		return err
	}
	_, err := s.Client.Delete(ctx, s.Keys.FenceMark(node))
	return err
}

// FenceMarked lists the nodes whose agents hold them read-only for the
// fence.
func (s *Store) FenceMarked(ctx context.Context) ([]string, error) {
	resp, err := s.Client.Get(ctx, s.Keys.FenceMarks(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, kv := range resp.Kvs {
		out = append(out, strings.TrimPrefix(string(kv.Key), s.Keys.FenceMarks()))
	}
	return out, nil
}
