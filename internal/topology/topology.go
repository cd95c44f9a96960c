// Package topology is the proxy's view of its backend nodes: their
// hostgroup weights, whether each may take new traffic, and which one is
// the writer. The router reads an immutable Snapshot on every statement
// (one atomic load); health checks, the Galera monitor and the admin
// interface change the view by publishing a new snapshot, so routing never
// races with changes and an admin change applies atomically.
//
// A writer change is two-phase, so that no two nodes ever take writes
// through this proxy at once: the view first publishes no writer and the
// new one as pending (writes pause), the proxy fences the old writer
// (waits for its transactions, or closes its connections), and only then
// commits the new writer with the next epoch.
package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Server is one node as the router sees it.
type Server struct {
	Name         string
	Addr         string
	WriterWeight int
	ReaderWeight int
	// Online: may take new transactions. Draining nodes finish what they
	// have but take nothing new; offline nodes take nothing.
	Online   bool
	Draining bool
	// Lagging nodes serve no reads; ReadOnly nodes are never the writer.
	Lagging  bool
	ReadOnly bool
	// Reason says why the node is not plainly online ("unreachable:
	// connection refused", "desync", "recv queue 250 > max 100").
	Reason string
	// Discovered: the node came from service discovery (its agent
	// registered it), not from the configuration file.
	Discovered bool
	// Site is the node's data centre ("" if unknown).
	Site string
	// Stale: the node answers but is outside the Primary component (its
	// site is cut off): its data stops at the cut. It serves reads only
	// when stale reads are allowed and no node of a Primary component
	// can (see View.SetStaleReads).
	Stale bool
	// Primary: the node answers from inside a Primary component, whether
	// or not it may serve yet (recovering, desynced, donor).
	Primary bool
}

// State is the node's state as operators see it.
func (s Server) State() string {
	switch {
	case s.Online:
		return "ONLINE"
	case s.Draining:
		return "DRAINING"
	}
	return "OFFLINE"
}

// ReaderPolicy is writer_is_also_reader.
type ReaderPolicy string

// Reader policies.
const (
	WriterReadsNever             ReaderPolicy = "never"
	WriterReadsAlways            ReaderPolicy = "always"
	WriterReadsWhenNoOtherReader ReaderPolicy = "when_no_other_reader"
)

// StickyHighestWeight is the simplest writer rule, the view's choice at
// start: the current writer keeps the role while it is online; otherwise
// the online node with the highest writer weight, ties broken by name.
func StickyHighestWeight(servers []Server, current string) string {
	best := -1
	for i, s := range servers {
		if !s.Online || s.WriterWeight <= 0 || s.ReadOnly {
			continue
		}
		if s.Name == current {
			return current
		}
		if best < 0 || s.WriterWeight > servers[best].WriterWeight ||
			(s.WriterWeight == servers[best].WriterWeight && s.Name < servers[best].Name) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return servers[best].Name
}

// Snapshot is an immutable routing state.
type Snapshot struct {
	Servers []Server // sorted by name
	writer  int      // index into Servers, -1 if none (or paused)
	readers []int
	cumul   []int
	policy  ReaderPolicy
	// Epoch counts writer changes; Pending is the writer being switched
	// to while writes pause.
	Epoch   uint64
	Pending string
	// Switching: a writer change waits for the old writer to be fenced
	// (writes pause). Pending may be "" while switching: the writer
	// failed and no node is to take over yet.
	Switching bool
	Version   uint64
	// StaleReads: no node of a Primary component can serve, and reads go
	// to nodes outside it (allowed by View.SetStaleReads).
	StaleReads bool
	staleOK    bool // stale reads are allowed, for Why
	// changed is closed when the next snapshot is published.
	changed chan struct{}
}

// Changed is closed when a newer snapshot replaces this one: a session
// that waits for a writer (a switch, no node fit) waits on it, not on a
// clock.
func (s *Snapshot) Changed() <-chan struct{} { return s.changed }

// View publishes snapshots.
type View struct {
	mu      sync.Mutex
	servers []Server
	writer  string
	pending string
	// switching: a change away from writer waits for fencing (pending may
	// be "" when no node is to take over).
	switching bool
	epoch     uint64
	version   uint64
	policy    ReaderPolicy
	home      string // the proxy's site: reads stay there while they can
	stale     bool   // reads may go to Stale nodes when nothing else can serve
	switches  chan struct{}
	cur       atomic.Pointer[Snapshot]
	// nextEpoch: the epoch (0: count on) of pending, the writer a switch
	// ends on.
	nextEpoch uint64
	subs      []chan struct{}
}

// Change is a change of writer the view made.
type Change struct {
	Old, New string
	Epoch    uint64
}

// Notify signals every subscriber without publishing a new snapshot: the
// proxy's decision state changed (an applied or seen epoch) and what
// watches it must look again.
func (v *View) Notify() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.notify()
}

func (v *View) notify() {
	for _, ch := range v.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Subscribe returns a channel that signals (coalesced) each publication
// of a new snapshot, for watchers that act on the whole view: the
// controller re-decides, a proxy republishes its record.
func (v *View) Subscribe() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	ch := make(chan struct{}, 1)
	v.subs = append(v.subs, ch)
	return ch
}

// NewView starts with servers, all online until a check says otherwise.
func NewView(servers []Server) *View {
	v := &View{servers: append([]Server(nil), servers...),
		policy: WriterReadsWhenNoOtherReader, switches: make(chan struct{}, 1)}
	sort.Slice(v.servers, func(i, j int) bool { return v.servers[i].Name < v.servers[j].Name })
	for i := range v.servers {
		v.servers[i].Online = true
	}
	v.writer = StickyHighestWeight(v.servers, "")
	if v.writer != "" {
		v.epoch = 1
	}
	v.publish()
	return v
}

// SetReaderPolicy sets writer_is_also_reader.
func (v *View) SetReaderPolicy(rp ReaderPolicy) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if rp != "" && rp != v.policy {
		v.policy = rp
		v.publish()
	}
}

// Load returns the current snapshot.
func (v *View) Load() *Snapshot { return v.cur.Load() }

// Switches signals (coalesced) that a writer switch is pending and waits
// for the proxy to fence the old writer and call CommitWriter.
func (v *View) Switches() <-chan struct{} { return v.switches }

// Current is the writer on record (the old one while a switch waits for
// its fence, whether or not it takes writes) and whether a switch waits.
func (v *View) Current() (writer string, switching bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.writer, v.switching
}

// SetWriter hands the view the writer decided for it and its epoch (0:
// the view counts on by one). A different writer takes over at once when
// there is none; otherwise the change waits for the proxy to fence the
// old writer (Switches, CommitWriter) while writes pause. The writer
// decided again before the fence cancels the switch. An epoch given for
// the current writer is adopted (every proxy names the same writer with
// the same number). The change made, if any, is returned.
func (v *View) SetWriter(writer string, epoch uint64) (Change, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case writer == v.writer:
		adopt := epoch != 0 && writer != "" && epoch != v.epoch
		if !v.switching && !adopt {
			return Change{}, false
		}
		v.pending, v.switching, v.nextEpoch = "", false, 0
		if adopt {
			v.epoch = epoch
		}
		v.publish()
		return Change{}, false
	case v.writer == "":
		// Nothing to fence: the new writer starts at once.
		ch := v.setWriter(writer, epoch)
		v.publish()
		return ch, true
	}
	if v.switching && v.pending == writer && v.nextEpoch == epoch {
		return Change{}, false
	}
	v.pending, v.nextEpoch, v.switching = writer, epoch, true
	select {
	case v.switches <- struct{}{}:
	default:
	}
	v.publish()
	return Change{}, false
}

// setWriter makes next the writer with its epoch (mu held).
func (v *View) setWriter(next string, epoch uint64) Change {
	old := v.writer
	v.writer, v.pending, v.switching, v.nextEpoch = next, "", false, 0
	if epoch != 0 {
		v.epoch = epoch
	} else {
		v.epoch++
	}
	return Change{Old: old, New: next, Epoch: v.epoch}
}

// PendingSwitch returns the writer being replaced and its replacement, if
// a switch waits for fencing.
func (v *View) PendingSwitch() (old, next string, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.writer, v.pending, v.switching
}

// CommitWriter ends a switch once old is fenced: next (decided at that
// moment, "" when no node qualifies) becomes the writer with epoch (0:
// count on); next == old cancels the switch. It does nothing if old is no
// longer the writer on record or no switch waits.
func (v *View) CommitWriter(old, next string, epoch uint64) (Change, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.writer != old || !v.switching {
		return Change{}, false
	}
	if next == old {
		v.pending, v.switching = "", false
		v.publish()
		return Change{}, false
	}
	ch := v.setWriter(next, epoch)
	v.publish()
	return ch, true
}

func (v *View) publish() {
	v.version++
	s := &Snapshot{Servers: append([]Server(nil), v.servers...), writer: -1, policy: v.policy,
		Epoch: v.epoch, Pending: v.pending, Switching: v.switching, Version: v.version, staleOK: v.stale,
		changed: make(chan struct{})}
	total := 0
	for i, srv := range s.Servers {
		// A writer that failed takes no writes, even in the moment
		// before the proxy's decision moves them (SetWriter).
		if srv.Name == v.writer && !v.switching && (srv.Online || srv.Draining) {
			s.writer = i
		}
	}
	for i, srv := range s.Servers {
		if !srv.Online || srv.Lagging || srv.ReaderWeight <= 0 {
			continue
		}
		if i == s.writer && v.policy != WriterReadsAlways {
			continue
		}
		total += srv.ReaderWeight
		s.readers = append(s.readers, i)
		s.cumul = append(s.cumul, total)
	}
	s.readers, s.cumul = localFirst(s, v.home)
	if len(s.readers) == 0 && s.writer < 0 && v.stale {
		s.readers, s.cumul = staleReaders(s)
		s.readers, s.cumul = localFirst(s, v.home) // s.writer < 0: no local-writer step
		s.StaleReads = len(s.readers) > 0
	}
	if prev := v.cur.Swap(s); prev != nil {
		close(prev.changed)
	}
	v.notify()
}

// SetHomeSite makes reads prefer nodes of site (the proxy's own data
// centre); "" reads from every reader.
func (v *View) SetHomeSite(site string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.home = site
	v.publish()
}

// SetStaleReads allows (or not) reads from Stale nodes when no node of a
// Primary component can serve: a proxy in a site cut off from the
// others then answers reads with the data as of the cut rather than
// failing them. Writes never go to a Stale node.
func (v *View) SetStaleReads(on bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.stale = on
	v.publish()
}

// staleReaders are the Stale nodes that may serve reads, with their
// reader weights; when none has one, those with a writer weight serve
// alike (the way a writer serves reads when no reader is left), unless
// writer_is_also_reader = never. It returns none while any node of a
// Primary component answers, so stale data is served only when nothing
// fresher is within reach.
func staleReaders(s *Snapshot) ([]int, []int) {
	for _, srv := range s.Servers {
		if srv.Online || srv.Primary {
			// A node of a Primary component answers (if it cannot serve
			// yet, reads wait for it rather than read stale data).
			return nil, nil
		}
	}
	var readers, cumul []int
	total := 0
	add := func(weight func(Server) int) {
		for i, srv := range s.Servers {
			if srv.Stale && !srv.Lagging && weight(srv) > 0 {
				total += weight(srv)
				readers = append(readers, i)
				cumul = append(cumul, total)
			}
		}
	}
	add(func(srv Server) int { return srv.ReaderWeight })
	if len(readers) == 0 && s.policy != WriterReadsNever {
		add(func(srv Server) int { return min(srv.WriterWeight, 1) })
	}
	return readers, cumul
}

// localFirst keeps only the readers in the home site when at least one
// of them can serve: a read then never crosses a WAN link while a local
// node can answer it. With no local reader, a local writer serves the
// reads (unless writer_is_also_reader = never): one node's load is
// cheaper than a WAN round trip on every read. Only then do reads go to
// the other sites. Weights keep their meaning among the readers kept.
func localFirst(s *Snapshot, home string) ([]int, []int) {
	if home == "" {
		return s.readers, s.cumul
	}
	var readers, cumul []int
	total := 0
	for k, i := range s.readers {
		if s.Servers[i].Site == home {
			// The weight the list was built with (not ReaderWeight:
			// stale writer-only nodes carry 1), from the running totals.
			w := s.cumul[k]
			if k > 0 {
				w -= s.cumul[k-1]
			}
			total += w
			readers = append(readers, i)
			cumul = append(cumul, total)
		}
	}
	if len(readers) == 0 && s.writer >= 0 && s.Servers[s.writer].Site == home && s.policy != WriterReadsNever {
		return []int{s.writer}, []int{1}
	}
	if len(readers) == 0 {
		return s.readers, s.cumul
	}
	return readers, cumul
}

// SetHealth marks a node online or offline (simple health checks) and
// reports whether that changed anything.
func (v *View) SetHealth(name string, online bool, reason string) bool {
	return v.SetState(name, func(s *Server) {
		s.Online, s.Draining, s.Reason = online, false, reason
	})
}

// SetState changes one node's state fields. The writer is not decided
// here: the proxy decides again and calls SetWriter.
func (v *View) SetState(name string, fn func(*Server)) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range v.servers {
		if v.servers[i].Name == name {
			before := v.servers[i]
			fn(&v.servers[i])
			if v.servers[i] == before {
				return false
			}
			v.publish()
			return true
		}
	}
	return false
}

// AddServer adds a node to the view, offline until its health checks say
// otherwise (a node that just registered has not been checked yet). It
// reports false if a node of that name is already there.
func (v *View) AddServer(srv Server) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range v.servers {
		if s.Name == srv.Name {
			return false
		}
	}
	srv.Online, srv.Draining = false, false
	if srv.Reason == "" {
		srv.Reason = "not checked yet" // galera.ReasonNotChecked
	}
	v.servers = append(v.servers, srv)
	sort.Slice(v.servers, func(i, j int) bool { return v.servers[i].Name < v.servers[j].Name })
	v.publish()
	return true
}

// RemoveServer takes a node out of the view. If it was the writer, it
// takes no more writes and stays the writer on record until the proxy
// decides another one and fences it (SetWriter, CommitWriter). It reports
// whether the node was there.
func (v *View) RemoveServer(name string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, s := range v.servers {
		if s.Name == name {
			v.servers = append(v.servers[:i:i], v.servers[i+1:]...)
			v.publish()
			return true
		}
	}
	return false
}

// Update applies fn to a copy of every server and publishes the result
// only if fn succeeds for all of them: an admin UPDATE is all or nothing.
func (v *View) Update(fn func(s *Server) error) error {
	return v.UpdateAll(func(servers []Server) error {
		for i := range servers {
			if err := fn(&servers[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// UpdateAll is Update for changes that concern the list as a whole: fn
// gets a copy of every server and may refuse the change (a server named
// by an admin statement has left the topology) before anything is
// published.
func (v *View) UpdateAll(fn func(servers []Server) error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	next := append([]Server(nil), v.servers...)
	if err := fn(next); err != nil {
		return err
	}
	v.servers = next
	v.publish()
	return nil
}

// Writer returns the node that takes writes; none while a switch is
// pending (writes pause) or when no node qualifies.
func (s *Snapshot) Writer() (Server, bool) {
	if s.writer < 0 {
		return Server{}, false
	}
	return s.Servers[s.writer], true
}

// Server returns the named node.
func (s *Snapshot) Server(name string) (Server, bool) {
	for _, srv := range s.Servers {
		if srv.Name == name {
			return srv, true
		}
	}
	return Server{}, false
}

// PickReader returns a reader chosen at random in proportion to the
// configured reader weights. With no reader available it returns the
// writer (unless writer_is_also_reader = never): reads never fail while a
// healthy node exists.
func (s *Snapshot) PickReader() (Server, bool) {
	if len(s.readers) == 0 {
		if s.policy == WriterReadsNever {
			return Server{}, false
		}
		return s.Writer()
	}
	total := s.cumul[len(s.cumul)-1]
	r := rand.IntN(total)
	i := sort.SearchInts(s.cumul, r+1)
	return s.Servers[s.readers[i]], true
}

// PickReaderLoaded is PickReader that balances what the readers have in
// flight: it draws two readers by weight and takes the one with less
// load (load(name): statements or connections in use there) per unit of
// weight ("the power of two choices"). Idle readers (equal load) are
// chosen by weight; a reader that falls behind gets fewer reads until it
// catches up.
func (s *Snapshot) PickReaderLoaded(load func(name string) int64) (Server, bool) {
	a, b, ok, choose := s.drawTwo()
	if !choose {
		return a, ok
	}
	return lessLoaded(a, b, load), true
}

// drawTwo draws two readers by weight (PickReader); choose says whether
// they differ, else a is the pick (or none, !ok).
func (s *Snapshot) drawTwo() (a, b Server, ok, choose bool) {
	a, ok = s.PickReader()
	if !ok || len(s.readers) < 2 {
		return a, a, ok, false
	}
	b, _ = s.PickReader()
	return a, b, true, a.Name != b.Name
}

// lessLoaded is a unless b has less load per unit of weight.
func lessLoaded(a, b Server, load func(name string) int64) Server {
	// load(a)/wa > load(b)/wb, without division.
	if load(a.Name)*int64(b.ReaderWeight) > load(b.Name)*int64(a.ReaderWeight) {
		return b
	}
	return a
}

// PickReaderBehind is the draw that starts a run of reads (pool.affinity):
// two readers drawn by weight, and of two different ones the one further
// behind its weight's share of the reads recently served (served(name):
// reads over a recent window), so that sessions kept on their reader for
// runs still spread the reads by weight. The reader behind is taken only
// if it keeps up (keepsUp: it served reads over the window, or has
// nothing in use; a node that hangs serves none while its connections
// stay in use) and has no more in use per weight than the other, by
// loadSlack; else, as with equal shares (nothing served yet), the less
// loaded per weight takes it, as in PickReaderLoaded.
func (s *Snapshot) PickReaderBehind(load, served func(name string) int64) (Server, bool) {
	a, b, ok, choose := s.drawTwo()
	if !choose {
		return a, ok
	}
	sa, sb := served(a.Name), served(b.Name)
	behind, other, sBehind := a, b, sa
	switch aw, bw := sa*int64(b.ReaderWeight), sb*int64(a.ReaderWeight); {
	case aw == bw:
		return lessLoaded(a, b, load), true
	case aw > bw: // a is less behind
		behind, other, sBehind = b, a, sb
	}
	lBehind, lOther := load(behind.Name), load(other.Name)
	if !keepsUp(sBehind, lBehind) ||
		lBehind*int64(other.ReaderWeight) > lOther*int64(behind.ReaderWeight)+loadSlack*int64(other.ReaderWeight) {
		return lessLoaded(a, b, load), true
	}
	return behind, true
}

// keepsUp says whether a reader that served this many reads over the
// window, with inUse connections in use there now, makes progress. In
// use counts connections held between statements too (a pinned
// session, a read-only transaction), so only no progress at all says
// that a node hangs.
func keepsUp(served, inUse int64) bool { return served > 0 || inUse == 0 }

// loadSlack is how many connections in use a reader behind its share may
// have over the other's, per weight, and still take the run: with few
// statements in flight a reader is often idle a moment, and taking the
// idle one every time bends the weights (bench/README.md).
const loadSlack = 4

// AheadOfWeight says whether reader name served more of the reads than
// its weight's share, by over slackPct percent of that share (served(n):
// the reads reader n served lately), once the readers served minReads
// between them: fewer say too little to act on. Readers that do not keep
// up (keepsUp, by load: connections in use) count for neither the reads
// nor the weights: a reader that hangs is not a share to make up.
func (s *Snapshot) AheadOfWeight(name string, load, served func(name string) int64, slackPct, minReads int64) bool {
	if len(s.readers) < 2 {
		return false
	}
	var total, weights, mine, weight int64
	for i, idx := range s.readers {
		n := served(s.Servers[idx].Name)
		if !keepsUp(n, load(s.Servers[idx].Name)) {
			continue
		}
		total += n
		weights += int64(s.readerWeight(i))
		if s.Servers[idx].Name == name {
			mine, weight = n, int64(s.readerWeight(i))
		}
	}
	if total < minReads || weight == 0 {
		return false
	}
	return mine*weights*100 > weight*total*(100+slackPct)
}

// SameReaders says whether o has the same readers with the same weights
// as s (a snapshot published for another reason: a node's status text,
// the writer's lag).
func (s *Snapshot) SameReaders(o *Snapshot) bool {
	if s == o {
		return true
	}
	if o == nil || len(s.readers) != len(o.readers) {
		return false
	}
	for i, idx := range s.readers {
		if s.Servers[idx].Name != o.Servers[o.readers[i]].Name || s.cumul[i] != o.cumul[i] {
			return false
		}
	}
	return true
}

// readerWeight is the weight of the i-th reader.
func (s *Snapshot) readerWeight(i int) int {
	if i == 0 {
		return s.cumul[0]
	}
	return s.cumul[i] - s.cumul[i-1]
}

// Busy says whether the readers have at least perReader statements in
// flight each on average, by load (a node's statements in flight).
func (s *Snapshot) Busy(load func(name string) int64, perReader int64) bool {
	if len(s.readers) == 0 {
		return false
	}
	var sum int64
	for _, idx := range s.readers {
		sum += load(s.Servers[idx].Name)
	}
	return sum >= perReader*int64(len(s.readers))
}

// PickReaderAvoiding is PickReader among the readers not named in avoid
// (nodes that just failed to serve); when every reader is to be avoided it
// is PickReader.
func (s *Snapshot) PickReaderAvoiding(avoid []string) (Server, bool) {
	if len(avoid) == 0 || len(s.readers) == 0 {
		return s.PickReader()
	}
	total := 0
	for i, idx := range s.readers {
		if !slices.Contains(avoid, s.Servers[idx].Name) {
			total += s.readerWeight(i)
		}
	}
	if total == 0 {
		return s.PickReader()
	}
	r := rand.IntN(total)
	for i, idx := range s.readers {
		if slices.Contains(avoid, s.Servers[idx].Name) {
			continue
		}
		if r -= s.readerWeight(i); r < 0 {
			return s.Servers[idx], true
		}
	}
	return s.PickReader() // not reached
}

// IsReader reports whether reads may go to the named node now.
func (s *Snapshot) IsReader(name string) bool {
	for _, i := range s.readers {
		if s.Servers[i].Name == name {
			return true
		}
	}
	return false
}

// Why explains, for an error message, why a hostgroup has no node.
func (s *Snapshot) Why(hostgroup string) string {
	if hostgroup == "writer" && s.Switching {
		if s.Pending == "" {
			return "the writer is being fenced and no node qualifies to take over"
		}
		return "writer switch to " + s.Pending + " in progress"
	}
	var parts, online, readOnly []string
	for _, srv := range s.Servers {
		weight := srv.WriterWeight
		if hostgroup == "reader" {
			weight = srv.ReaderWeight
		}
		switch {
		case weight > 0 && !srv.Online:
			parts = append(parts, fmt.Sprintf("%s %s (%s)", srv.Name, strings.ToLower(srv.State()), srv.Reason))
		case weight > 0 && hostgroup == "writer" && srv.ReadOnly:
			readOnly = append(readOnly, srv.Name)
		case weight > 0:
			online = append(online, srv.Name)
		}
	}
	if len(parts) == 0 && len(online) == 0 && len(readOnly) > 0 {
		return strings.Join(readOnly, ", ") + " ONLINE but read_only = ON (a DR cluster that still replicates its primary, or fenced): write to the primary, or promote this cluster"
	}
	ro := ""
	if len(readOnly) > 0 {
		ro = strings.Join(readOnly, ", ") + " read_only = ON"
	}
	if len(parts) == 0 && len(online) > 0 {
		// Fit nodes, none chosen: the writer decision says why.
		if ro != "" {
			return strings.Join(online, ", ") + " ONLINE here; " + ro
		}
		return strings.Join(online, ", ") + " ONLINE here"
	}
	if ro != "" {
		parts = append(parts, ro)
	}
	if len(parts) == 0 {
		return "no node has a " + hostgroup + " weight"
	}
	if hostgroup == "reader" && !s.staleOK && slices.ContainsFunc(s.Servers, func(srv Server) bool { return srv.Stale }) {
		parts = append(parts, "nodes outside the Primary component answer: set galera.stale_reads = true to read from them (data as of the partition)")
	}
	return strings.Join(parts, "; ")
}
