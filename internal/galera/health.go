package galera

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// State is a node's fitness for traffic.
type State uint8

// Node states. DRAINING takes no new transactions while in-flight ones
// finish; OFFLINE takes nothing.
const (
	Offline State = iota
	Draining
	Online
)

func (s State) String() string {
	switch s {
	case Online:
		return "ONLINE"
	case Draining:
		return "DRAINING"
	}
	return "OFFLINE"
}

// Sample is one poll of a node: status and variables by lower-case name,
// or the error that prevented reading them.
type Sample struct {
	Vars map[string]string
	Err  error
}

// Policy holds the knobs of node evaluation.
type Policy struct {
	// MaxTransactionsBehind: a node whose wsrep_local_recv_queue is above
	// this is lagging (0 disables the check).
	MaxTransactionsBehind int64
	// AllowDonor lets a donor serve traffic if its SST method does not
	// block it (mariabackup) and it does not reject queries.
	AllowDonor bool
	// OKChecks is how many consecutive good samples a node needs before it
	// comes back ONLINE.
	OKChecks int
	// MaxMissedChecks is how many consecutive failed polls make an
	// unreachable node OFFLINE (a refused connection counts at once).
	MaxMissedChecks int
}

// Health is the evaluated state of one node, carried from poll to poll.
// Reasons of a node that is coming up: registered but not polled yet, or
// answering well but not yet ok_checks times in a row.
const (
	ReasonNotChecked = "not checked yet"
	reasonRecovering = "recovering:"
)

// ComingUp reports whether a node's reason says it is on its way to
// ONLINE rather than failing.
func ComingUp(reason string) bool {
	return reason == ReasonNotChecked || strings.HasPrefix(reason, reasonRecovering)
}

type Health struct {
	State  State
	Reason string
	// Lagging: recv queue above MaxTransactionsBehind. A lagging node
	// serves no reads and is a writer only if no other candidate exists.
	Lagging bool
	// ReadOnly: read_only=ON; never a writer.
	ReadOnly bool
	// Stale: the node answers but is outside the Primary component
	// (wsrep_cluster_status non-Primary): it can serve reads only with
	// wsrep_dirty_reads, and they show the data as of the partition.
	Stale bool
	// Primary: the node answered from inside a Primary component.
	Primary bool
	// Segment is gmcast.segment, for data-centre aware routing later.
	Segment   int
	ClusterID string // wsrep_cluster_state_uuid
	// DialFailed: the last check could not reach the node's host at all
	// (a connection attempt timed out, or found no route): the node is
	// out of this proxy's network reach — unlike a refused connection
	// (the process died) or a process that accepts connections and does
	// not answer (hung, SIGSTOPped), whose failures are its own.
	DialFailed bool
	// Members are the client addresses of the data nodes in the node's
	// component (wsrep_incoming_addresses), kept only while it is
	// Primary: who Galera counts in the cluster now, reachable from this
	// proxy or not.
	Members    []string
	Size       int
	Missed     int // consecutive failed polls
	good       int // consecutive good polls
	LastCommit int64
	// Globals fingerprints the node's global values of every variable a
	// session inherits (GlobalsKey); it changes when an operator runs
	// SET GLOBAL, so pooled connections opened before can be retired.
	Globals string
}

// nonBlockingSST are the SST methods that leave the donor serving queries.
var nonBlockingSST = map[string]bool{"mariabackup": true, "xtrabackup-v2": true, "clone": true}

// Evaluate turns a sample into the node's new Health, given the previous
// one. It does not know about other nodes; Reconcile adds the cluster-wide
// checks (minority UUID).
func (p Policy) Evaluate(prev Health, s Sample) Health {
	h := prev
	if s.Err != nil {
		h.Stale, h.Primary = false, false
		h.Missed++
		h.good = 0
		h.DialFailed = dialFailed(s.Err)
		refused := strings.Contains(s.Err.Error(), "connection refused")
		if refused || h.Missed >= max(1, p.MaxMissedChecks) {
			h.State = Offline
			// The count is the threshold crossed, not the running one: the
			// reason (and the one event of the change) stays the same while
			// the node stays away; the running count is a metric
			// (galeon_monitor_missed_checks).
			h.Reason = fmt.Sprintf("unreachable after %d missed checks (%v)", min(h.Missed, max(1, p.MaxMissedChecks)), s.Err)
			if refused {
				h.Reason = "unreachable: " + s.Err.Error()
			}
		}
		return h
	}
	h.Missed, h.DialFailed = 0, false
	v := s.Vars
	num := func(k string) int64 { n, _ := strconv.ParseInt(v[k], 10, 64); return n }
	on := func(k string) bool { x := strings.ToUpper(v[k]); return x == "ON" || x == "1" || x == "TRUE" }
	h.ClusterID = v["wsrep_cluster_state_uuid"]
	h.Size = int(num("wsrep_cluster_size"))
	h.LastCommit = num("wsrep_last_committed")
	h.Globals = v[GlobalsKey]
	h.ReadOnly = on("read_only")
	h.Segment = segment(v["wsrep_provider_options"])
	h.Lagging = p.MaxTransactionsBehind > 0 && num("wsrep_local_recv_queue") > p.MaxTransactionsBehind
	// Stale: cut off from the Primary component after having been in
	// it, synced (a node that was joining, or one that came up alone,
	// holds nothing worth reading). "Disconnected" is not stale: such a
	// node may be running on its own and have diverged.
	st := v["wsrep_cluster_status"]
	h.Primary = st == "Primary"
	h.Members = nil
	if h.Primary {
		h.Members, _ = IncomingAddresses(v["wsrep_incoming_addresses"])
	}
	h.Stale = st == "non-Primary" && (prev.State == Online || prev.Stale)

	state, reason := p.judge(v, on, num)
	if state == Draining && reason == donorReason(v) && DonorServes(prev.State == Online, prev.LastCommit, h.LastCommit) {
		state, reason = Online, ""
	}
	if state == Online {
		h.good++
		if prev.State != Online && h.good < max(1, p.OKChecks) {
			// Not yet: a node must prove itself OKChecks times in a row.
			h.Reason = fmt.Sprintf("%s %d of %d good checks", reasonRecovering, h.good, p.OKChecks)
			return h
		}
		h.State, h.Reason = Online, ""
		if h.Lagging {
			h.Reason = fmt.Sprintf("recv queue %d > max %d", num("wsrep_local_recv_queue"), p.MaxTransactionsBehind)
		}
		return h
	}
	h.good = 0
	h.State, h.Reason = state, reason
	return h
}

func (p Policy) judge(v map[string]string, on func(string) bool, num func(string) int64) (State, string) {
	if st := v["wsrep_cluster_status"]; st != "Primary" {
		return Offline, "non-Primary (wsrep_cluster_status=" + st + ")"
	}
	if !on("wsrep_ready") {
		return Offline, "wsrep_ready=OFF"
	}
	if !on("wsrep_connected") {
		return Offline, "wsrep_connected=OFF"
	}
	if rq := strings.ToUpper(v["wsrep_reject_queries"]); rq != "" && rq != "NONE" {
		if rq == "ALL_KILL" {
			return Offline, "reject_queries=ALL_KILL"
		}
		return Draining, "reject_queries=" + rq
	}
	if m := strings.ToUpper(v["pxc_maint_mode"]); m != "" && m != "DISABLED" {
		return Draining, "pxc_maint_mode=" + m
	}
	switch num("wsrep_local_state") {
	case 4: // Synced
		return Online, ""
	case 2: // Donor/Desynced
		if on("wsrep_desync") {
			return Draining, "desync"
		}
		if on("wsrep_sst_donor_rejects_queries") {
			return Draining, "donor (rejects queries)"
		}
		if p.AllowDonor && nonBlockingSST[v["wsrep_sst_method"]] {
			return Online, ""
		}
		return Draining, donorReason(v)
	}
	return Offline, "not Synced: " + v["wsrep_local_state_comment"]
}

// dialFailed says whether err is a failure to reach the node's host at
// all: a connection attempt that timed out or found no route. A refused
// connection is not one: the host answered, and nothing listens (the
// process died), which is the node's own failure.
func dialFailed(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused") {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Op == "dial"
	}
	return strings.HasPrefix(err.Error(), "dial ")
}

// IncomingAddresses parses wsrep_incoming_addresses: the client
// addresses of the component's data nodes, and how many members have
// none (an empty entry: an arbitrator, garbd, which serves no clients).
// AUTO (a node that did not resolve its own) is neither.
func IncomingAddresses(list string) (addrs []string, unaddressed int) {
	if list == "" {
		return nil, 0
	}
	for _, a := range strings.Split(list, ",") {
		switch a = strings.TrimSpace(a); {
		case a == "":
			unaddressed++
		case !strings.EqualFold(a, "AUTO"):
			addrs = append(addrs, a)
		}
	}
	return addrs, unaddressed
}

// HeldBy names a node whose last check answered from inside a Primary
// component that lists addr among its members ("" for none): the node at
// addr runs in the cluster, whether or not this proxy reaches it.
func HeldBy(health map[string]Health, self, addr string) string {
	names := make([]string, 0, len(health))
	for n := range health {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		h := health[n]
		if n != self && h.Primary && slices.Contains(h.Members, addr) {
			return n
		}
	}
	return ""
}

func donorReason(v map[string]string) string { return "donor (" + v["wsrep_sst_method"] + ")" }

// DonorServes says whether a Donor/Desynced node whose SST method could
// block it (rsync, mysqldump) is in fact still serving, so that it need
// not be drained: it was ONLINE at the previous check and its
// wsrep_last_committed moved on since (from, to).
//
// Measured on the sandbox (MariaDB 10.11, galera-4 26.4, rsync): the
// donor of an IST runs the SST script with a bypass ("Bypassing state
// dump": no FLUSH TABLES WITH READ LOCK) and sits in Donor/Desynced for
// 0.3-0.4 s while the write-sets stream from its gcache: 72 writes
// started on it in that window, the slowest took 4 ms. An rsync SST donor
// takes the global read lock a few hundred milliseconds in and holds it
// for the whole copy (1.9 s here, writes stalled up to 1.5 s): its
// commits stop, the next check sees wsrep_last_committed standing still,
// and it is drained then. Galera's status variables are the same for
// both kinds of donor; committing is the difference that matters to
// clients. A donor that saw no write between two checks is drained as
// before (nothing is lost: no client was writing).
func DonorServes(wasOnline bool, from, to int64) bool {
	return wasOnline && from > 0 && to > from
}

// segment reads gmcast.segment out of wsrep_provider_options.
func segment(opts string) int {
	v, _ := ProviderOption(opts, "gmcast.segment")
	n, _ := strconv.Atoi(v)
	return n
}

// ProviderOption reads one option out of wsrep_provider_options
// ("k1 = v1; k2 = v2; ...").
func ProviderOption(opts, key string) (string, bool) {
	for _, kv := range strings.Split(opts, ";") {
		k, val, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(val), true
		}
	}
	return "", false
}

// Reconcile applies the cluster-wide rule: nodes whose cluster state UUID
// differs from that of the largest group of reachable nodes are in a
// minority partition (or another cluster) and go OFFLINE.
func Reconcile(nodes map[string]Health) {
	count := map[string]int{}
	for _, h := range nodes {
		if h.ClusterID != "" && h.Missed == 0 {
			count[h.ClusterID]++
		}
	}
	best, bestN := "", 0
	for id, n := range count {
		if n > bestN || (n == bestN && id < best) {
			best, bestN = id, n
		}
	}
	for name, h := range nodes {
		if h.ClusterID != "" && h.Missed == 0 && h.ClusterID != best && h.State != Offline {
			h.State, h.Reason = Offline, "minority cluster UUID "+h.ClusterID
			nodes[name] = h
		}
	}
}
