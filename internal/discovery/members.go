package discovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Member is one member of the etcd cluster, as etcd lists it.
type Member struct {
	ID         uint64
	Name       string // empty until it has started
	PeerURLs   []string
	ClientURLs []string // empty until it has started
	Learner    bool
	Leader     bool
	// Healthy: it answered a status request just now.
	Healthy bool
}

// Started says whether the member has run (it published its name and
// client URLs).
func (m Member) Started() bool { return len(m.ClientURLs) > 0 }

// Members lists the etcd cluster's members, asking each started one for
// its status (leader, health).
func (s *Store) Members(ctx context.Context) ([]Member, error) {
	resp, err := s.Client.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("etcd member list: %w", err)
	}
	var out []Member
	for _, pm := range resp.Members {
		m := Member{ID: pm.ID, Name: pm.Name, PeerURLs: pm.PeerURLs, ClientURLs: pm.ClientURLs, Learner: pm.IsLearner}
		for _, u := range pm.ClientURLs {
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			st, err := s.Client.Status(sctx, u)
			cancel()
			if err == nil {
				m.Healthy, m.Leader = true, st.Leader == pm.ID
				break
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// findMember finds a member by name or by hexadecimal ID.
func findMember(ms []Member, nameOrID string) (Member, error) {
	for _, m := range ms {
		if m.Name == nameOrID {
			return m, nil
		}
	}
	if id, err := strconv.ParseUint(nameOrID, 16, 64); err == nil {
		for _, m := range ms {
			if m.ID == id {
				return m, nil
			}
		}
	}
	var names []string
	for _, m := range ms {
		names = append(names, memberLabel(m))
	}
	return Member{}, fmt.Errorf("no etcd member %q (members: %s)", nameOrID, strings.Join(names, ", "))
}

func memberLabel(m Member) string {
	if m.Name != "" {
		return m.Name
	}
	return fmt.Sprintf("%x (not started)", m.ID)
}

// AddMember adds a member for peerURL as a learner: it counts towards
// no quorum until it has started, caught up and been promoted (a
// galeon proxy started with that peer URL does this by itself).
func (s *Store) AddMember(ctx context.Context, peerURL string) (Member, error) {
	// etcd refuses a change for a few seconds after its members
	// (re)connected ("unhealthy cluster": it must have seen a quorum for
	// 5 s); that passes.
	var resp *clientv3.MemberAddResponse
	var err error
	for deadline := time.Now().Add(15 * time.Second); ; {
		resp, err = s.Client.MemberAddAsLearner(ctx, []string{peerURL})
		if !errors.Is(err, rpctypes.ErrUnhealthy) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return Member{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	if err != nil {
		if errors.Is(err, rpctypes.ErrTooManyLearners) {
			return Member{}, fmt.Errorf("etcd member add %s: another member is still a learner (etcd adds one at a time): start it, or remove it, then try again", peerURL)
		}
		return Member{}, fmt.Errorf("etcd member add %s: %w", peerURL, err)
	}
	return Member{ID: resp.Member.ID, PeerURLs: resp.Member.PeerURLs, Learner: true}, nil
}

// RemoveMember removes a member by name or ID. etcd refuses when the
// remaining members would not hold a quorum.
func (s *Store) RemoveMember(ctx context.Context, nameOrID string) (Member, error) {
	ms, err := s.Members(ctx)
	if err != nil {
		return Member{}, err
	}
	m, err := findMember(ms, nameOrID)
	if err != nil {
		return Member{}, err
	}
	if len(ms) == 1 {
		return Member{}, fmt.Errorf("%s is the only etcd member: removing it would end the cluster", memberLabel(m))
	}
	if _, err := s.Client.MemberRemove(ctx, m.ID); err != nil {
		if errors.Is(err, rpctypes.ErrUnhealthy) {
			return Member{}, fmt.Errorf("etcd refuses to remove %s: the members left would not hold a quorum (bring the down members back first): %w", memberLabel(m), err)
		}
		return Member{}, fmt.Errorf("etcd member remove %s: %w", memberLabel(m), err)
	}
	return m, nil
}

// ReplaceMember removes old (a lost or retired member) and adds a new
// one at peerURL as a learner, in etcd's recommended order (remove the
// failed member first, then add its replacement): the cluster never
// counts a member that is not running towards its quorum.
func (s *Store) ReplaceMember(ctx context.Context, old, peerURL string) (removed, added Member, err error) {
	ms, err := s.Members(ctx)
	if err != nil {
		return Member{}, Member{}, err
	}
	o, err := findMember(ms, old)
	if err != nil {
		return Member{}, Member{}, err
	}
	for _, m := range ms {
		if m.ID != o.ID && slices.Contains(m.PeerURLs, peerURL) {
			return Member{}, Member{}, fmt.Errorf("--peer-url %s is already member %s's", peerURL, memberLabel(m))
		}
		if m.ID != o.ID && m.Learner {
			return Member{}, Member{}, fmt.Errorf("member %s is still a learner (etcd adds one at a time): start it or remove it first", memberLabel(m))
		}
	}
	key := o.Name
	if key == "" {
		key = strconv.FormatUint(o.ID, 16)
	}
	if removed, err = s.RemoveMember(ctx, key); err != nil {
		return Member{}, Member{}, err
	}
	if added, err = s.AddMember(ctx, peerURL); err != nil {
		return removed, Member{}, fmt.Errorf("%s was removed, but adding the new member failed: %w (run `galeon discovery member add --peer-url %s`)", memberLabel(removed), err, peerURL)
	}
	return removed, added, nil
}
