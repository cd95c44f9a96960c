package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Operation is an operator's cluster-wide operation (a schema change, a
// rolling restart) in progress: one at a time per cluster, recorded here
// so that another operator or tool sees it, and so that an interrupted
// one can be resumed from where it stopped.
type Operation struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	By   string `json:"by"`
	// Statement, Schema and Method describe a schema change.
	Statement string `json:"statement,omitempty"`
	Schema    string `json:"schema,omitempty"`
	Method    string `json:"method,omitempty"`
	// Before is the table's definition before the change, After the one a
	// changed node has (SHOW CREATE TABLE without AUTO_INCREMENT=): on a
	// resume they tell a node still to change from one done.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Order is the nodes in the order they are handled; Done those
	// finished, with their seconds in Seconds; Current the node in hand
	// and Step what happens to it.
	Order   []string           `json:"order,omitempty"`
	Done    []string           `json:"done,omitempty"`
	Seconds map[string]float64 `json:"seconds,omitempty"`
	Current string             `json:"current,omitempty"`
	Step    string             `json:"step,omitempty"`
	// Detail is the step's progress (percent, bytes, time to go).
	Detail string `json:"detail,omitempty"`
	// Failed says why the operation stopped (empty while it runs).
	Failed  string    `json:"failed,omitempty"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
}

// Operation kinds.
const (
	OperationSchemaChange = "schema-change"
	OperationBackup       = "backup"
)

// Operation is the key of the cluster's operation in progress.
func (k Keys) Operation() string { return k.root + "operation" }

// ErrOperationRunning is returned by BeginOperation when another operation
// is recorded.
var ErrOperationRunning = errors.New("another operation is in progress")

// BeginOperation records op as the cluster's operation, unless one is
// recorded already: then it returns that one and ErrOperationRunning.
func (s *Store) BeginOperation(ctx context.Context, op Operation) (*Operation, error) {
	val, err := json.Marshal(op)
	if err != nil {
		return nil, err
	}
	key := s.Keys.Operation()
	resp, err := s.Client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(val))).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return nil, err
	}
	if resp.Succeeded {
		return nil, nil
	}
	var cur Operation
	if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
		if err := json.Unmarshal(kvs[0].Value, &cur); err != nil {
			cur = Operation{ID: "?", Kind: "unreadable: " + err.Error()}
		}
	}
	return &cur, fmt.Errorf("%w: %s %s by %s since %s", ErrOperationRunning, cur.Kind, cur.ID, cur.By, cur.Started.UTC().Format(time.RFC3339))
}

// UpdateOperation writes op's progress, only while it is still the
// recorded operation (same ID).
func (s *Store) UpdateOperation(ctx context.Context, op Operation) error {
	op.Updated = time.Now()
	return s.swapOperation(ctx, op.ID, &op)
}

// EndOperation removes the operation with id (finished, or abandoned by
// an operator).
func (s *Store) EndOperation(ctx context.Context, id string) error {
	return s.swapOperation(ctx, id, nil)
}

func (s *Store) swapOperation(ctx context.Context, id string, next *Operation) error {
	key := s.Keys.Operation()
	resp, err := s.Client.Get(ctx, key)
	if err != nil {
		return err
	}
	var cur Operation
	if len(resp.Kvs) == 0 || json.Unmarshal(resp.Kvs[0].Value, &cur) != nil || cur.ID != id {
		return fmt.Errorf("operation %s is no longer the recorded one", id)
	}
	op := clientv3.OpDelete(key)
	if next != nil {
		val, err := json.Marshal(next)
		if err != nil {
			return err
		}
		op = clientv3.OpPut(key, string(val))
	}
	tr, err := s.Client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision)).Then(op).Commit()
	if err == nil && !tr.Succeeded {
		err = fmt.Errorf("operation %s changed under us: retry", id)
	}
	return err
}

// ReadOperation returns the cluster's operation in progress, if any.
func (s *Store) ReadOperation(ctx context.Context) (*Operation, error) {
	op, err := getJSON[Operation](ctx, s, s.Keys.Operation())
	if errors.Is(err, errUnreadable) {
		return &Operation{ID: "?", Kind: err.Error()}, nil
	}
	return op, err
}

// WatchOperation sends the recorded operation after each change (nil
// when there is none; an unreadable one as its error in Kind).
func (s *Store) WatchOperation(ctx context.Context) <-chan *Operation {
	return watchJSON(ctx, s, s.Keys.Operation(), func(err error) *Operation {
		return &Operation{ID: "?", Kind: "unreadable: " + err.Error()}
	})
}
