package discovery

import (
	"context"
	"errors"
	"time"
)

// LastComponent is the cluster's last Primary component as Galera itself
// listed it (wsrep_incoming_addresses, which every member's agent
// publishes as NodeFacts.Members), kept in etcd beside the cluster size:
// after a full outage the controller — this one or one elected during the
// outage — waits for the positions of exactly these members, whether or
// not it ever saw each of them report Primary itself.
type LastComponent struct {
	// Members are the members' client addresses, as Galera lists them,
	// sorted.
	Members []string `json:"members"`
	// Names are the registered nodes' names for those addresses when the
	// component was recorded ("" where no registered node had the
	// address), in the order of Members.
	Names      []string  `json:"names"`
	Controller string    `json:"controller,omitempty"`
	At         time.Time `json:"at"`
}

// LastComponent is the key of the last Primary component's members.
func (k Keys) LastComponent() string { return k.root + "recovery/component" }

// SetLastComponent records the last Primary component's members.
func (s *Store) SetLastComponent(ctx context.Context, c LastComponent) error {
	return s.putJSON(ctx, s.Keys.LastComponent(), c)
}

// ReadLastComponent returns the recorded last Primary component (nil if
// none, or if the value does not decode: the controller then records it
// anew from the next Primary report).
func (s *Store) ReadLastComponent(ctx context.Context) (*LastComponent, error) {
	c, err := getJSON[LastComponent](ctx, s, s.Keys.LastComponent())
	if errors.Is(err, errUnreadable) {
		return nil, nil
	}
	return c, err
}
