package discovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.uber.org/zap"

	"github.com/galeon-db/galeon/internal/config"
)

// The embedded etcd: one member inside this process, alone (the
// default) or one of a cluster of proxies that etcd's own membership
// holds together (discovery.peers, discovery.join). galeon adds no
// consensus of its own: it only chooses how the member starts, from what
// is on disk and what the running members say (planStart), the way
// etcd's runtime-reconfiguration guide and k3s do it:
//
//   - members formed together start with the same initial cluster
//     (etcd's static bootstrap);
//   - a member added later is added through the API first, as a learner
//     (it does not count towards quorum until it has caught up, so a
//     member that never starts costs no availability), then started with
//     initial-cluster-state=existing and promoted once etcd allows it;
//     etcd accepts one learner at a time, so joiners that arrive together
//     retry ("too many learner members");
//   - a member with data restarts from it; a member whose data is gone
//     but that the cluster knows as started must be replaced, never
//     started afresh (it could vote twice in one term).

// memberTimeout bounds how long a member of a cluster waits for the
// others at start (formation, join, promotion).
const memberTimeout = 2 * time.Minute

// remoteMember is a member as the running cluster lists it.
type remoteMember struct {
	ID         uint64
	Name       string // empty until the member has started once
	PeerURLs   []string
	ClientURLs []string // empty until the member has started once
	Learner    bool
}

func (m remoteMember) started() bool { return len(m.ClientURLs) > 0 }

// planInput is what decides how a member of a cluster starts.
type planInput struct {
	Name, PeerURL string
	Peers         []config.Peer // static initial cluster (may be empty)
	Join          bool          // discovery.join is set
	HasData       bool          // the data directory holds a WAL
	// Remote is the running cluster's membership, nil when no member
	// answered (asked only when HasData is false).
	Remote []remoteMember
}

// startPlan is how the member starts.
type startPlan struct {
	State          string // embed.ClusterStateFlagNew or ...Existing
	InitialCluster string
	AddAsLearner   bool // add this member through the API first
	Why            string
}

// errDataLost and errNotMember are planStart's refusals.
var (
	errDataLost  = errors.New("data lost")
	errNotMember = errors.New("not a member")
)

// planStart decides how a member of an embedded cluster starts: a pure
// function of the member's settings, its data directory and the running
// cluster's membership.
func planStart(in planInput) (startPlan, error) {
	static := config.EmbeddedMember{Peers: in.Peers}.InitialCluster()
	if in.HasData {
		// etcd restarts from its WAL and ignores the initial cluster.
		ic := static
		if ic == "" {
			ic = in.Name + "=" + in.PeerURL
		}
		return startPlan{State: embed.ClusterStateFlagExisting, InitialCluster: ic, Why: "restarting from its data directory"}, nil
	}
	if in.Remote == nil {
		if len(in.Peers) > 0 {
			return startPlan{State: embed.ClusterStateFlagNew, InitialCluster: static, Why: "forming the cluster of discovery.peers"}, nil
		}
		return startPlan{}, errors.New("no member answers")
	}
	formed := slices.ContainsFunc(in.Remote, remoteMember.started)
	for _, m := range in.Remote {
		if m.Name != in.Name {
			continue
		}
		if m.started() {
			return startPlan{}, fmt.Errorf("%w: member %s has run in this cluster before and its data directory is empty", errDataLost, in.Name)
		}
		if !formed && len(in.Peers) > 0 {
			return startPlan{State: embed.ClusterStateFlagNew, InitialCluster: static, Why: "forming the cluster of discovery.peers with the members already up"}, nil
		}
		return startPlan{State: embed.ClusterStateFlagExisting, InitialCluster: initialCluster(in.Remote, in.Name, in.PeerURL), Why: "starting as a member the cluster already lists"}, nil
	}
	for _, m := range in.Remote {
		if m.Name == "" && slices.Contains(m.PeerURLs, in.PeerURL) {
			return startPlan{State: embed.ClusterStateFlagExisting, InitialCluster: initialCluster(in.Remote, in.Name, in.PeerURL),
				Why: "starting as the member added for its peer URL"}, nil
		}
	}
	if in.Join {
		return startPlan{State: embed.ClusterStateFlagExisting, AddAsLearner: true, Why: "joining through discovery.join"}, nil
	}
	if !formed {
		return startPlan{}, fmt.Errorf("%w: the members that answer were formed with other discovery.peers than this member's", errNotMember)
	}
	return startPlan{}, fmt.Errorf("%w: the running cluster does not list member %s (%s): it was removed or replaced", errNotMember, in.Name, in.PeerURL)
}

// initialCluster is etcd's initial-cluster for a member joining the
// running members: every member by peer URL, this one (listed without a
// name until it starts) under its own name.
func initialCluster(ms []remoteMember, name, peerURL string) string {
	var parts []string
	self := false
	for _, m := range ms {
		n := m.Name
		if slices.Contains(m.PeerURLs, peerURL) {
			n, self = name, true
		} else if n == "" {
			n = fmt.Sprintf("pending-%x", m.ID)
		}
		for _, u := range m.PeerURLs {
			parts = append(parts, n+"="+u)
		}
	}
	if !self {
		parts = append(parts, name+"="+peerURL)
	}
	return strings.Join(parts, ",")
}

// startEmbedded runs this process's etcd member and returns the client
// URLs galeon uses: this member's alone, or every voting member's (this
// one first), so that the client fails over when one is lost.
func startEmbedded(ctx context.Context, cfg Config, log *slog.Logger) (*embed.Etcd, []string, error) {
	m, problems := cfg.settings().EmbeddedMember()
	if len(problems) > 0 {
		return nil, nil, errors.New(strings.Join(problems, "; "))
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("discovery.data_dir: %w", err)
	}
	dir := filepath.Join(cfg.DataDir, "etcd")
	_, err := os.Stat(filepath.Join(dir, "member", "wal"))
	hasData := err == nil
	if !m.Clustered() {
		// A single member, started as galeon always has.
		e, err := runMember(ctx, cfg, m, dir, embed.ClusterStateFlagNew, m.Name+"="+m.PeerURL, 30*time.Second)
		if err != nil {
			return nil, nil, err
		}
		return e, []string{m.ClientURL}, nil
	}
	mlog := log.With("member", m.Name, "peer_url", m.PeerURL)
	in := planInput{Name: m.Name, PeerURL: m.PeerURL, Peers: m.Peers, Join: len(m.Join) > 0, HasData: hasData}
	if !hasData {
		if in.Remote, err = remoteMembers(ctx, m, mlog); err != nil {
			return nil, nil, err
		}
	}
	plan, err := planStart(in)
	if err != nil {
		return nil, nil, explainRefusal(err, m, cfg.DataDir)
	}
	var added uint64
	if plan.AddAsLearner {
		if added, plan.InitialCluster, err = addLearner(ctx, m, mlog); err != nil {
			return nil, nil, err
		}
	}
	mlog.Info("starting the embedded etcd member", "why", plan.Why, "state", plan.State, "initial_cluster", plan.InitialCluster)
	e, err := runMember(ctx, cfg, m, dir, plan.State, plan.InitialCluster, memberTimeout)
	for deadline := time.Now().Add(memberTimeout); err != nil && plan.AddAsLearner && membershipLag(err) && time.Now().Before(deadline) && ctx.Err() == nil; {
		// The peer etcd asked for the membership has not applied our
		// addition yet (etcd-io/etcd#10626: two members joining one
		// after the other); nothing was written: start again shortly.
		mlog.Info("a peer does not list this member yet; starting again", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
		e, err = runMember(ctx, cfg, m, dir, plan.State, plan.InitialCluster, memberTimeout)
	}
	if err != nil {
		if added != 0 {
			// Leave no learner behind that will never start: etcd takes
			// one learner at a time, it would block every later join.
			removeMember(m.Join, added)
		}
		return nil, nil, err
	}
	// A learner serves no requests: ask the others too.
	via := append([]string{}, m.Join...)
	for _, r := range in.Remote {
		via = append(via, r.ClientURLs...)
	}
	urls, err := promoteAndList(ctx, e, m, via, mlog)
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	return e, urls, nil
}

// membershipLag says whether a joining member failed to start because the
// peer that etcd asked for the cluster's membership does not list every
// member of our initial cluster yet (it has not applied the latest
// additions): etcd checks this before it writes anything, and the
// peers catch up within moments.
func membershipLag(err error) bool {
	return strings.Contains(err.Error(), "member count is unequal")
}

// explainRefusal turns planStart's refusal into what the operator does.
func explainRefusal(err error, m config.EmbeddedMember, dataDir string) error {
	switch {
	case errors.Is(err, errDataLost):
		return fmt.Errorf("embedded etcd: %v (discovery.data_dir %s was lost or moved). Starting it afresh could split the cluster, so it does not start: put the data directory back, or replace the member from any machine: `galeon discovery member replace %s --peer-url %s --discovery etcd://<a running member's client address>`, then start this proxy again with discovery.join set",
			err, dataDir, m.Name, m.PeerURL)
	case errors.Is(err, errNotMember):
		return fmt.Errorf("embedded etcd: %v. Add it first (`galeon discovery member add --peer-url %s --discovery etcd://<a running member>`) or set discovery.join to a running member's client address", err, m.PeerURL)
	default:
		return fmt.Errorf("embedded etcd (discovery.join %s): %v: start a member of the cluster first, or check the address", strings.Join(m.Join, ","), err)
	}
}

// remoteMembers asks the running cluster for its members: through the
// join addresses (waiting for them up to memberTimeout), or through the
// other peers' peer URLs (nil when none answers: the cluster is being
// formed).
func remoteMembers(ctx context.Context, m config.EmbeddedMember, log *slog.Logger) ([]remoteMember, error) {
	if len(m.Join) > 0 {
		deadline := time.Now().Add(memberTimeout)
		for attempt := 0; ; attempt++ {
			ms, err := listMembers(ctx, m.Join)
			if err == nil {
				return ms, nil
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return nil, fmt.Errorf("discovery.join %s: no member answers after %s (%v): start a member of the cluster first, or check the address",
					strings.Join(m.Join, ","), memberTimeout, err)
			}
			if attempt%10 == 0 {
				log.Info("waiting for a member to join through", "join", strings.Join(m.Join, ","), "error", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	var others []string
	for _, p := range m.Peers {
		if p.URL != m.PeerURL {
			others = append(others, p.URL)
		}
	}
	// etcd's own query of its peers' /members, with short timeouts: at
	// a simultaneous formation most peers do not listen yet.
	rt := &http.Transport{DialContext: (&net.Dialer{Timeout: time.Second}).DialContext, ResponseHeaderTimeout: 2 * time.Second}
	defer rt.CloseIdleConnections()
	rc, err := etcdserver.GetClusterFromRemotePeers(zap.NewNop(), others, rt)
	if err != nil {
		return nil, nil // nobody answers: nothing runs yet
	}
	var out []remoteMember
	for _, rm := range rc.Members() {
		out = append(out, remoteMember{ID: uint64(rm.ID), Name: rm.Name, PeerURLs: rm.PeerURLs, ClientURLs: rm.ClientURLs, Learner: rm.IsLearner})
	}
	return out, nil
}

// listMembers asks the members at endpoints for the membership.
func listMembers(ctx context.Context, endpoints []string) ([]remoteMember, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	resp, err := cli.MemberList(lctx)
	if err != nil {
		return nil, err
	}
	return fromPB(resp), nil
}

func fromPB(resp *clientv3.MemberListResponse) []remoteMember {
	out := make([]remoteMember, 0, len(resp.Members))
	for _, pm := range resp.Members {
		out = append(out, remoteMember{ID: pm.ID, Name: pm.Name, PeerURLs: pm.PeerURLs, ClientURLs: pm.ClientURLs, Learner: pm.IsLearner})
	}
	return out
}

// addLearner adds this member to the running cluster as a learner,
// retrying while etcd refuses for a reason that passes (another learner
// is catching up; the cluster is electing a leader), and returns its ID
// and the initial cluster to start with.
func addLearner(ctx context.Context, m config.EmbeddedMember, log *slog.Logger) (uint64, string, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: m.Join, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return 0, "", fmt.Errorf("discovery.join: %w", err)
	}
	defer cli.Close()
	deadline := time.Now().Add(memberTimeout)
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		resp, err := cli.MemberAddAsLearner(actx, []string{m.PeerURL})
		cancel()
		if err == nil {
			ms := fromPB(&clientv3.MemberListResponse{Members: resp.Members})
			log.Info("added to the etcd cluster as a learner", "id", fmt.Sprintf("%x", resp.Member.ID), "attempts", attempt+1)
			return resp.Member.ID, initialCluster(ms, m.Name, m.PeerURL), nil
		}
		if errors.Is(err, rpctypes.ErrPeerURLExist) {
			// Added by an earlier attempt that did not start: take it.
			ms, lerr := listMembers(ctx, m.Join)
			if lerr != nil {
				return 0, "", fmt.Errorf("discovery.join: %w", lerr)
			}
			return 0, initialCluster(ms, m.Name, m.PeerURL), nil
		}
		retry := errors.Is(err, rpctypes.ErrTooManyLearners) || errors.Is(err, rpctypes.ErrUnhealthy) ||
			errors.Is(err, context.DeadlineExceeded) || errors.Is(err, rpctypes.ErrNoLeader) || errors.Is(err, rpctypes.ErrTimeout)
		if !retry || time.Now().After(deadline) || ctx.Err() != nil {
			return 0, "", fmt.Errorf("discovery.join %s: adding member %s (%s): %v", strings.Join(m.Join, ","), m.Name, m.PeerURL, err)
		}
		if attempt%10 == 0 {
			log.Info("etcd cannot add this member yet; retrying", "error", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// removeMember removes a member that was added but never started.
func removeMember(endpoints []string, id uint64) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = cli.MemberRemove(ctx, id)
}

// runMember starts the member and waits until it serves.
func runMember(ctx context.Context, cfg Config, m config.EmbeddedMember, dir, state, initial string, wait time.Duration) (*embed.Etcd, error) {
	ec := embed.NewConfig()
	ec.Name = m.Name
	ec.Dir = dir
	cl, pl := url.URL{Scheme: "http", Host: m.ClientListen}, url.URL{Scheme: "http", Host: m.PeerListen}
	ca, pa, err := parseURL(m.ClientURL, m.PeerURL)
	if err != nil {
		return nil, err
	}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{cl}, []url.URL{ca}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{pl}, []url.URL{pa}
	ec.InitialCluster = initial
	ec.ClusterState = state
	if m.Clustered() {
		// Every cluster of proxies formed together gets the same
		// cluster ID from the same peers; the token keeps two galeon
		// clusters on the same addresses apart.
		ec.InitialClusterToken = "galeon-" + cfg.Cluster
	}
	ec.LogLevel = "error"
	if m.Clustered() {
		// etcd says at warn level that a member was removed.
		ec.LogLevel = "warn"
	}
	ec.LogOutputs = []string{filepath.Join(cfg.DataDir, "etcd.log")}
	// Leases must expire soon after an agent dies (issue: within 3 s);
	// etcd's smallest TTL follows from its election timeout.
	ec.TickMs, ec.ElectionMs = 100, 1000
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd (member %s, discovery.client_listen %s, peer_listen %s, data_dir %s): %w", m.Name, m.ClientListen, m.PeerListen, cfg.DataDir, err)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		if removed(cfg) {
			return nil, stoppedError(cfg, m)
		}
		return nil, fmt.Errorf("embedded etcd: %w", err)
	case <-e.Server.StopNotify():
		e.Close()
		return nil, stoppedError(cfg, m)
	case <-timer.C:
		e.Close()
		if m.Clustered() {
			return nil, fmt.Errorf("embedded etcd member %s did not become ready within %s: a majority of the members must be up (discovery.peers %s; join %s); see etcd.log in discovery.data_dir %s",
				m.Name, wait, m.InitialCluster(), strings.Join(m.Join, ","), cfg.DataDir)
		}
		return nil, fmt.Errorf("embedded etcd did not become ready within %s; see etcd.log in discovery.data_dir", wait)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
}

// stoppedError says why a member stopped before it was ready: the usual
// cause is that it was removed from the cluster (etcd stops a removed
// member as soon as a peer tells it).
func stoppedError(cfg Config, m config.EmbeddedMember) error {
	if removed(cfg) {
		return fmt.Errorf("embedded etcd member %s was removed from the cluster (galeon discovery member remove/replace) and stops: it must not come back with its old data. To make this proxy a member again, move discovery.data_dir %s aside and start it with discovery.join set to a running member's client address",
			m.Name, cfg.DataDir)
	}
	return fmt.Errorf("embedded etcd member %s stopped before it was ready; see etcd.log in discovery.data_dir %s", m.Name, cfg.DataDir)
}

// removed says whether etcd logged that this member was removed from
// its cluster.
func removed(cfg Config) bool {
	logText, _ := os.ReadFile(filepath.Join(cfg.DataDir, "etcd.log"))
	return strings.Contains(string(logText), "permanently removed from the cluster")
}

func parseURL(client, peer string) (url.URL, url.URL, error) {
	c, err := url.Parse(client)
	if err != nil {
		return url.URL{}, url.URL{}, fmt.Errorf("discovery.client_url: %w", err)
	}
	p, err := url.Parse(peer)
	if err != nil {
		return url.URL{}, url.URL{}, fmt.Errorf("discovery.peer_url: %w", err)
	}
	return *c, *p, nil
}

// promoteAndList promotes this member if it is a learner (etcd allows it
// once the learner has caught up with the leader) and returns the voting
// members' client URLs, this member's first. A learner serves neither
// the member list nor the promotion: both go to the other members, found
// in this member's own copy of the membership and in via.
func promoteAndList(ctx context.Context, e *embed.Etcd, m config.EmbeddedMember, via []string, log *slog.Logger) ([]string, error) {
	self := e.Server.MemberID()
	others := func(votersOnly bool) []string {
		var urls []string
		for _, o := range e.Server.Cluster().Members() {
			if o.ID != self && !(votersOnly && o.IsLearner) {
				urls = append(urls, o.ClientURLs...)
			}
		}
		return urls
	}
	var cli *clientv3.Client
	defer func() {
		if cli != nil {
			cli.Close()
		}
	}()
	deadline := time.Now().Add(memberTimeout)
	var err error
	for attempt := 0; ; attempt++ {
		if !e.Server.IsLearner() {
			return append([]string{m.ClientURL}, others(true)...), nil
		}
		if cli == nil {
			eps := append(others(false), via...)
			if cli, err = clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 2 * time.Second, Logger: zap.NewNop()}); err != nil {
				return nil, err
			}
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = cli.MemberPromote(pctx, uint64(self))
		cancel()
		if err == nil || errors.Is(err, rpctypes.ErrMemberNotLearner) {
			log.Info("promoted from learner to voting member", "attempts", attempt+1)
			// Wait until this member has applied its own promotion.
			for e.Server.IsLearner() && time.Now().Before(deadline) && ctx.Err() == nil {
				time.Sleep(20 * time.Millisecond)
			}
			continue
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("embedded etcd member %s: not a voting member after %s: %v (it stays a learner; `galeon discovery member list` shows it)", m.Name, memberTimeout, err)
		}
		if attempt%10 == 9 {
			log.Info("waiting to be promoted", "error", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
