package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Action kinds the controller asks an agent to carry out on its node.
const (
	// ActionBootstrap starts the node as a new Primary component.
	ActionBootstrap = "bootstrap"
	// ActionJoin starts the node so that it joins the running cluster.
	ActionJoin = "join"
	// ActionPosition recovers a crashed node's position (mariadbd
	// --wsrep-recover) without starting it.
	ActionPosition = "position"
	// ActionPromote makes a running node that lost quorum the new
	// Primary component (pc.bootstrap=YES), without a restart.
	ActionPromote = "pc-bootstrap"
	// ActionRestart restarts the node cleanly and waits until it runs
	// again; ActionStop stops it cleanly. An operator's tools ask for
	// them (rolling restart, cluster stop) on nodes of any platform.
	ActionRestart = "restart"
	ActionStop    = "stop"
	// ActionBackupCopy copies the node's data with mariabackup into Dir,
	// on the node's machine; ActionBackupFinish prepares and checks the
	// copy in Dir, writes Payload (the backup's description, JSON) beside
	// it and renames it to Final. An operator's backup asks for them.
	ActionBackupCopy   = "backup-copy"
	ActionBackupFinish = "backup-finish"
	// ActionBackupDiscard removes a copy in Dir that is not kept (the
	// operator's backup was interrupted after the copy).
	ActionBackupDiscard = "backup-discard"
)

// operatorActions are the actions an operator's tools may ask for.
var operatorActions = []string{ActionRestart, ActionStop, ActionBackupCopy, ActionBackupFinish, ActionBackupDiscard}

// BackupWorkSuffix ends the name of a backup's directory while it is
// made: the only directories a backup action writes to or removes.
const BackupWorkSuffix = ".partial"

// Action is what the controller asks one node's agent to do. ID names the
// recovery it belongs to: an agent carries out each ID once.
type Action struct {
	ID         string    `json:"id"`
	Kind       string    `json:"kind"`
	Node       string    `json:"node"`
	Reason     string    `json:"reason,omitempty"`
	Controller string    `json:"controller"`
	At         time.Time `json:"at"`
	// Dir, Final and Payload are a backup action's (absolute paths on
	// the node's machine).
	Dir     string `json:"dir,omitempty"`
	Final   string `json:"final,omitempty"`
	Payload string `json:"payload,omitempty"`
}

// Validate rejects an action no agent should carry out.
func (a Action) Validate() error {
	if a.ID == "" {
		return errors.New("action without id")
	}
	switch a.Kind {
	case ActionBootstrap, ActionJoin, ActionPosition, ActionPromote, ActionRestart, ActionStop:
	case ActionBackupCopy, ActionBackupFinish, ActionBackupDiscard:
		// An agent runs these as root: they may only ever touch a
		// backup's own work directory (and its final name).
		base := strings.TrimSuffix(a.Dir, BackupWorkSuffix)
		if !filepath.IsAbs(a.Dir) || filepath.Clean(a.Dir) != a.Dir || !strings.HasSuffix(a.Dir, BackupWorkSuffix) ||
			filepath.Base(base) == "" || filepath.Dir(base) == base || a.Kind == ActionBackupFinish && a.Final != base {
			return fmt.Errorf("action %s: a backup's directory must be a clean absolute path ending in %s, and its final name the same without it (%q, %q)", a.ID, BackupWorkSuffix, a.Dir, a.Final)
		}
	default:
		return fmt.Errorf("action %s: unknown kind %q", a.ID, a.Kind)
	}
	return ValidName("node", a.Node)
}

// ActionState is an agent's report on the last action it took up.
type ActionState struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Done bool   `json:"done"`
	Err  string `json:"error,omitempty"`
	// Detail is its progress while it runs; Result what it produced (a
	// backup's description, JSON).
	Detail string `json:"detail,omitempty"`
	Result string `json:"result,omitempty"`
}

// Action is the key of one node's action.
func (k Keys) Action(node string) string { return k.root + "actions/" + node }

// Actions is the prefix of the actions.
func (k Keys) Actions() string { return k.root + "actions/" }

// PublishAction writes an action for its node, only while this term holds
// (as Publish), so that a deposed controller can never start a second
// bootstrap.
func (l *Leadership) PublishAction(ctx context.Context, a Action) error {
	if err := a.Validate(); err != nil {
		return err
	}
	val, _ := json.Marshal(a)
	resp, err := l.s.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(l.election.Key()), "=", l.election.Rev())).
		Then(clientv3.OpPut(l.s.Keys.Action(a.Node), string(val))).
		Commit()
	if err != nil {
		return fmt.Errorf("publish action: %w", err)
	}
	if !resp.Succeeded {
		return errors.New("publish action: no longer the controller")
	}
	return nil
}

// RequestAction writes an operator's action (restart, stop) for its node.
// Unlike the controller's recovery actions it needs no election term:
// operators' tools act on a running, healthy cluster.
func (s *Store) RequestAction(ctx context.Context, a Action) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if !slices.Contains(operatorActions, a.Kind) {
		return fmt.Errorf("action %s: only the controller may ask for %q", a.ID, a.Kind)
	}
	return s.putJSON(ctx, s.Keys.Action(a.Node), a)
}

// ClearAction removes a node's operator action once its agent reported
// it, unless another has replaced it: an agent that restarts must not
// carry it out again.
func (s *Store) ClearAction(ctx context.Context, a Action) error {
	val, err := json.Marshal(a)
	if err != nil {
		return err
	}
	key := s.Keys.Action(a.Node)
	_, err = s.Client.Txn(ctx).If(clientv3.Compare(clientv3.Value(key), "=", string(val))).Then(clientv3.OpDelete(key)).Commit()
	return err
}

// Actions reads every node's current action.
func (s *Store) Actions(ctx context.Context) (map[string]Action, error) {
	resp, err := s.Client.Get(ctx, s.Keys.Actions(), clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := map[string]Action{}
	for _, kv := range resp.Kvs {
		var a Action
		if json.Unmarshal(kv.Value, &a) == nil && a.Validate() == nil && string(kv.Key) == s.Keys.Action(a.Node) {
			out[a.Node] = a
		}
	}
	return out, nil
}

// WatchAction sends node's action after each change (ID "" when there is
// none or it does not validate).
func (s *Store) WatchAction(ctx context.Context, node string) <-chan Action {
	key := s.Keys.Action(node)
	return watchDecoded(ctx, s, key, func(raw map[string][]byte, _ int64) Action {
		var a Action
		if v, ok := raw[key]; !ok || json.Unmarshal(v, &a) != nil || a.Validate() != nil || a.Node != node {
			return Action{}
		}
		return a
	})
}

// ClearActions removes every action (a recovery is complete).
func (s *Store) ClearActions(ctx context.Context) error {
	_, err := s.Client.Delete(ctx, s.Keys.Actions(), clientv3.WithPrefix())
	return err
}

// Hold is an operator's stop of the whole cluster: while it is set the
// controller does not recover the cluster (it is down on purpose).
type Hold struct {
	Reason string    `json:"reason"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
}

// Hold is the key of the cluster's hold.
func (k Keys) Hold() string { return k.root + "hold" }

// SetHold sets the hold (before a cluster stop).
func (s *Store) SetHold(ctx context.Context, h Hold) error {
	return s.putJSON(ctx, s.Keys.Hold(), h)
}

// ClearHold removes the hold (a cluster start): the controller brings the
// cluster back.
func (s *Store) ClearHold(ctx context.Context) error {
	_, err := s.Client.Delete(ctx, s.Keys.Hold())
	return err
}

// ReadHold returns the hold, if any. An unreadable one still holds.
func (s *Store) ReadHold(ctx context.Context) (*Hold, error) {
	h, err := getJSON[Hold](ctx, s, s.Keys.Hold())
	if errors.Is(err, errUnreadable) {
		return &Hold{Reason: err.Error()}, nil
	}
	return h, err
}

// Force is an operator's order to recover the cluster from one node
// (galeon cluster recover --force NODE) when the controller cannot prove
// which node is most advanced. The operator takes responsibility for any
// transaction only the other nodes had.
type Force struct {
	Node string    `json:"node"`
	By   string    `json:"by"`
	At   time.Time `json:"at"`
}

// Force is the key of the operator's recovery order.
func (k Keys) Force() string { return k.root + "recovery/force" }

// RequestForce asks the controller to recover the cluster from node.
func (s *Store) RequestForce(ctx context.Context, f Force) error {
	if err := ValidName("node", f.Node); err != nil {
		return err
	}
	return s.putJSON(ctx, s.Keys.Force(), f)
}

// ReadForce returns the operator's recovery order, if any; one that does
// not validate is ignored (nil), never acted on.
func (s *Store) ReadForce(ctx context.Context) (*Force, error) {
	f, err := getJSON[Force](ctx, s, s.Keys.Force())
	if errors.Is(err, errUnreadable) || f != nil && ValidName("node", f.Node) != nil {
		return nil, nil
	}
	return f, err
}

// ClearForce removes the order once carried out (or refused).
func (s *Store) ClearForce(ctx context.Context) error {
	_, err := s.Client.Delete(ctx, s.Keys.Force())
	return err
}

// RecoveryStatus is the controller's latest word on recovering the
// cluster, for operators (galeon cluster recover, galeon status).
type RecoveryStatus struct {
	Status string `json:"status"`
	// Blocked: only an operator can go on (the status says how).
	Blocked    bool      `json:"blocked"`
	Controller string    `json:"controller"`
	At         time.Time `json:"at"`
}

// RecoveryStatus is the key of the controller's recovery status.
func (k Keys) RecoveryStatus() string { return k.root + "recovery/status" }

// PublishRecoveryStatus records the controller's recovery status.
func (s *Store) PublishRecoveryStatus(ctx context.Context, st RecoveryStatus) error {
	return s.putJSON(ctx, s.Keys.RecoveryStatus(), st)
}

// ReadRecoveryStatus returns the controller's latest recovery status.
func (s *Store) ReadRecoveryStatus(ctx context.Context) (*RecoveryStatus, error) {
	return getJSON[RecoveryStatus](ctx, s, s.Keys.RecoveryStatus())
}

// ClusterSize is the size of the cluster's Primary component when a
// controller last saw one: a controller elected during an outage must
// know how many nodes to wait for before it may call one most advanced.
type ClusterSize struct {
	Size int       `json:"size"`
	At   time.Time `json:"at"`
}

// ClusterSize is the key of the last Primary component's size.
func (k Keys) ClusterSize() string { return k.root + "recovery/size" }

// SetClusterSize records the last Primary component's size.
func (s *Store) SetClusterSize(ctx context.Context, c ClusterSize) error {
	return s.putJSON(ctx, s.Keys.ClusterSize(), c)
}

// ReadClusterSize returns the last recorded size (0 if none or unreadable).
func (s *Store) ReadClusterSize(ctx context.Context) (int, error) {
	c, err := getJSON[ClusterSize](ctx, s, s.Keys.ClusterSize())
	if errors.Is(err, errUnreadable) || c == nil {
		return 0, nil
	}
	return c.Size, err
}

// errUnreadable: a key holds a value that does not decode.
var errUnreadable = errors.New("unreadable value")

func (s *Store) putJSON(ctx context.Context, key string, v any) error {
	val, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.Client.Put(ctx, key, string(val))
	return err
}

// getJSON reads and decodes key: nil when it is absent.
func getJSON[T any](ctx context.Context, s *Store, key string) (*T, error) {
	resp, err := s.Client.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(resp.Kvs[0].Value, &v); err != nil {
		return nil, fmt.Errorf("%w at %s: %v", errUnreadable, key, err)
	}
	return &v, nil
}
