package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/memtrim"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// ServerInfo names a node and says where it is.
type ServerInfo struct {
	Name string
	Addr string
}

// Profile is what must match between a client session and a backend
// connection for raw packet relay to be correct: the user it logs in as,
// the wire-format capabilities (EOF deprecation, session tracking, found
// rows, multi-statements...) and the connection collation.
type Profile struct {
	User     string
	Password string
	Caps     mysqlproto.Capability
	Charset  byte
}

// ProfileCaps are the capability bits that change what the server sends
// or how it counts, so connections are pooled separately for each value.
const ProfileCaps = mysqlproto.ClientFoundRows | mysqlproto.ClientIgnoreSpace |
	mysqlproto.ClientInteractive | mysqlproto.ClientMultiStatements | mysqlproto.ClientMultiResults |
	mysqlproto.ClientPSMultiResults | mysqlproto.ClientSessionTrack | mysqlproto.ClientDeprecateEOF |
	mysqlproto.MariaDBClientStmtBulkOperations | mysqlproto.MariaDBClientExtendedMetadata |
	mysqlproto.MariaDBClientBulkUnitResults

// baseCaps are asked of every backend connection whatever the profile.
// CLIENT_LOCAL_FILES lets a node ask for a LOAD DATA LOCAL file, which
// galeon relays from (and only from) a client that allowed it.
const baseCaps = mysqlproto.DefaultClientCapabilities&^ProfileCaps | mysqlproto.ClientLocalFiles

// Options size and time a pool.
type Options struct {
	MaxConns       int
	ConnectTimeout time.Duration
	IdleTimeout    time.Duration
	PingAfterIdle  time.Duration
	// Compress asks nodes for the compressed protocol (worth it only over
	// slow links: it costs CPU on both ends).
	Compress bool
	// KeepFor is how long a connection stays kept for its session (Keep)
	// once returned (0: DefaultKeepFor). Then it is an idle connection
	// like the others, so sessions that come back seldom do not make the
	// pool open a connection each; their own, if nobody took it since,
	// is still theirs (TakeBack finds it among the idle ones).
	KeepFor time.Duration
}

// DefaultKeepFor is Options.KeepFor's default.
const DefaultKeepFor = time.Second

// Stats are the counters of one node's pools, as stats_connection_pool
// shows them.
type Stats struct {
	ConnUsed, ConnFree, ConnOK, ConnERR, MaxConnUsed int64
	Queries, BytesSent, BytesRecv                    int64
	LatencyUs                                        int64
	// ConnParked of ConnUsed are held by idle sessions with no
	// transaction open (Park): a drain does not wait for them.
	ConnParked int64
}

// Pool holds one node's idle connections for every profile, under one
// limit on open connections.
type Pool struct {
	server ServerInfo
	opts   Options

	mu   sync.Mutex
	idle map[Profile][]*Conn
	// kept are idle connections kept for the session that used them last
	// (Keep), oldest first: taken by that session again (TakeBack), or
	// by another only when the pool has no other idle connection and no
	// room to open one.
	kept  map[Profile][]*Conn
	open  int
	inUse map[*Conn]struct{}
	// waiters queue in arrival order; a released connection is handed to
	// the first waiter of its profile, a freed slot to the first waiter.
	// FIFO handoff is fair and wakes one goroutine, not all of them.
	waiters []*waiter

	writerInUse atomic.Int64
	// parkedN counts the connections in use that are parked (Park).
	parkedN atomic.Int64
	// writersDone signals (coalesced) that writerInUse fell to zero.
	writersDone chan struct{}
	// draining: a writer change away from this node waits for its
	// writer connections (DrainWriters); under mu.
	draining bool

	// globalsGen counts changes of the node's global variables seen by
	// the health checks (SetGlobals) or made through the proxy
	// (GlobalsChanged); a connection opened in an older generation
	// carries session defaults that no new session would get, and is
	// closed instead of reused.
	globalsGen atomic.Uint64
	globals    atomic.Pointer[string]

	connOK, connErr, maxUsed atomic.Int64
	used                     atomic.Int64
	queries, reads           atomic.Int64
	bytesSent, bytesRecv     atomic.Int64
	latencyUs                atomic.Int64
	greeting                 atomic.Pointer[mysqlproto.Handshake]
	retired                  atomic.Bool
}

// waiter is a Get blocked on a full pool. It receives a connection of
// its profile, or nil meaning "a slot is free: open one".
type waiter struct {
	prof Profile
	ch   chan *Conn
}

// NewPool creates the pool of one node.
func NewPool(s ServerInfo, o Options) *Pool {
	if o.KeepFor <= 0 {
		o.KeepFor = DefaultKeepFor
	}
	return &Pool{server: s, opts: o, idle: map[Profile][]*Conn{}, kept: map[Profile][]*Conn{}, inUse: map[*Conn]struct{}{}, writersDone: make(chan struct{}, 1)}
}

// Server is the node this pool connects to.
func (p *Pool) Server() ServerInfo { return p.server }

// TryIdle returns an idle connection for prof without waiting and without
// any health check other than its age, or nil. It is the hot path of
// multiplexing: no context, no timer, one uncontended mutex.
func (p *Pool) TryIdle(prof Profile) *Conn {
	p.mu.Lock()
	c := p.nextIdleLocked(prof)
	if c == nil || time.Since(c.lastUsed) > p.opts.PingAfterIdle {
		p.mu.Unlock()
		return nil // none, or one Get must ping first
	}
	c = p.popIdleLocked(prof)
	p.mu.Unlock()
	if !p.checkTaken(c, 0) {
		return nil
	}
	p.markUsed()
	return c
}

// nextIdleLocked is the idle connection of prof that popIdleLocked
// would take, or nil (p.mu held): the most recently used one not kept
// for a session, else, when the pool has no room to open another, the
// one kept longest (its session has been idle the longest).
func (p *Pool) nextIdleLocked(prof Profile) *Conn {
	p.expireKeptLocked(prof)
	if list := p.idle[prof]; len(list) > 0 {
		return list[len(list)-1]
	}
	if kept := p.kept[prof]; len(kept) > 0 && p.open >= p.opts.MaxConns {
		return kept[0]
	}
	return nil
}

// expireKeptLocked makes the connections of prof kept longer than
// Options.KeepFor idle ones (p.mu held).
func (p *Pool) expireKeptLocked(prof Profile) {
	kept := p.kept[prof]
	n := 0
	for n < len(kept) && time.Since(kept[n].lastUsed) > p.opts.KeepFor {
		n++
	}
	if n > 0 {
		p.idle[prof] = append(p.idle[prof], kept[:n]...)
		p.kept[prof] = kept[n:]
	}
}

// popIdleLocked takes nextIdleLocked's connection (p.mu held, one there)
// and records it as in use.
func (p *Pool) popIdleLocked(prof Profile) *Conn {
	var c *Conn
	if list := p.idle[prof]; len(list) > 0 {
		c = list[len(list)-1]
		p.idle[prof] = list[:len(list)-1]
	} else {
		kept := p.kept[prof]
		c = kept[0]
		p.kept[prof] = kept[1:]
	}
	p.inUse[c] = struct{}{}
	return c
}

// ErrPoolFull says every connection allowed to this node is in use.
var ErrPoolFull = errors.New("connection limit reached")

// Get returns a connection for profile: an idle one (pinged first if it
// sat idle longer than PingAfterIdle), else a new one, waiting for a free
// slot until ctx ends.
func (p *Pool) Get(ctx context.Context, prof Profile) (*Conn, error) {
	for {
		p.mu.Lock()
		if p.nextIdleLocked(prof) != nil {
			c := p.popIdleLocked(prof)
			p.mu.Unlock()
			if !p.checkTaken(c, time.Since(c.lastUsed)) {
				continue
			}
			p.markUsed()
			return c, nil
		}
		if p.open < p.opts.MaxConns {
			p.open++
			p.mu.Unlock()
			return p.openConn(ctx, prof)
		}
		// Full: close an idle connection of another profile to make room,
		// else queue for a connection or a slot.
		if victim := p.takeOtherIdle(prof); victim != nil {
			p.mu.Unlock()
			p.discard(victim)
			continue
		}
		w := &waiter{prof: prof, ch: make(chan *Conn, 1)}
		p.waiters = append(p.waiters, w)
		p.mu.Unlock()
		select {
		case c := <-w.ch:
			if c == nil {
				return p.openConn(ctx, prof) // handed a free slot
			}
			p.markUsed()
			return c, nil
		case <-ctx.Done():
			p.mu.Lock()
			for i, x := range p.waiters {
				if x == w {
					p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
					break
				}
			}
			p.mu.Unlock()
			// A handoff may have raced with the timeout: give it back.
			select {
			case c := <-w.ch:
				if c == nil {
					p.release()
				} else {
					p.used.Add(1)
					p.Put(c, prof)
				}
			default:
			}
			return nil, fmt.Errorf("%s: %w (%d connections in use)", p.server.Name, ErrPoolFull, p.opts.MaxConns)
		}
	}
}

// openConn dials a new connection in a slot already reserved (p.open).
func (p *Pool) openConn(ctx context.Context, prof Profile) (*Conn, error) {
	c, err := p.connect(ctx, prof)
	if err != nil {
		p.release()
		return nil, err
	}
	p.mu.Lock()
	p.inUse[c] = struct{}{}
	p.mu.Unlock()
	p.markUsed()
	return c, nil
}

func (p *Pool) takeOtherIdle(prof Profile) *Conn {
	for _, lists := range []map[Profile][]*Conn{p.idle, p.kept} {
		for k, list := range lists {
			if k != prof && len(list) > 0 {
				c := list[0]
				lists[k] = list[1:]
				return c
			}
		}
	}
	return nil
}

// Used is the number of the pool's connections sessions hold now.
func (p *Pool) Used() int64 { return p.used.Load() }

func (p *Pool) markUsed() {
	n := p.used.Add(1)
	for {
		m := p.maxUsed.Load()
		if n <= m || p.maxUsed.CompareAndSwap(m, n) {
			return
		}
	}
}

func (p *Pool) connect(ctx context.Context, prof Profile) (*Conn, error) {
	cfg := mysqlproto.ClientConfig{
		User: prof.User, Password: prof.Password, Charset: prof.Charset,
		Capabilities: baseCaps | prof.Caps, Compress: p.opts.Compress,
		// The proxy's backends are its own nodes, reached on a trusted
		// network or loopback; TLS to backends is a later option.
		AllowPublicKeyRetrieval: true,
	}
	start := time.Now()
	gen := p.globalsGen.Load() // before the dial: a change during it makes c stale
	c, err := dial(ctx, p.server.Addr, cfg, p.opts.ConnectTimeout)
	if err != nil {
		p.connErr.Add(1)
		return nil, fmt.Errorf("%s (%s): %w", p.server.Name, p.server.Addr, err)
	}
	p.latencyUs.Store(time.Since(start).Microseconds())
	p.greeting.Store(c.greeting)
	p.connOK.Add(1)
	c.pool = p
	c.lastUsed = time.Now()
	c.globalsGen = gen
	return c, nil
}

// SetGlobals records the fingerprint of the node's global variables from
// a health check; when it differs from the previous one, connections
// opened before are retired (GlobalsChanged).
func (p *Pool) SetGlobals(fingerprint string) {
	if fingerprint == "" {
		return // not measured (a failed check, or not MariaDB)
	}
	old := p.globals.Swap(&fingerprint)
	if old != nil && *old != fingerprint {
		p.GlobalsChanged()
	}
}

// GlobalsChanged says the node's global variables changed: idle
// connections are closed now, those in use when they come back, so a new
// session never inherits the session defaults of the old globals.
func (p *Pool) GlobalsChanged() {
	p.globalsGen.Add(1)
	p.CloseIdle(true)
}

// Retire closes the idle connections of a node that left the cluster;
// connections still in use are closed when they come back.
func (p *Pool) Retire() {
	p.retired.Store(true)
	p.CloseIdle(true)
}

// Greeting is the handshake the node sent on the last successful connect
// (its version, capabilities and default collation), or nil before one.
// galeon presents the same to its clients, because drivers choose
// behaviour from them.
func (p *Pool) Greeting() *mysqlproto.Handshake { return p.greeting.Load() }

// Put returns a connection to the pool. Broken or dirty connections are
// reset or closed; the caller must not use c afterwards. The result is
// the connection's generation, for TakeBack (0: it was not pooled).
func (p *Pool) Put(c *Conn, prof Profile) (gen uint64) {
	return p.put(c, prof, false)
}

// Keep is Put for a connection its session is likely to want again (its
// next statement goes to this node): it stays idle, but for
// Options.KeepFor another session takes it only when no other idle
// connection is there and the pool cannot open one. The session takes
// it back with Reclaim (or TakeBack). A session that stays on a reader
// and keeps its connection there costs the node markedly less CPU per
// statement than sessions moving between nodes (bench/README.md).
func (p *Pool) Keep(c *Conn, prof Profile) (gen uint64) {
	return p.put(c, prof, true)
}

func (p *Pool) put(c *Conn, prof Profile, keep bool) (gen uint64) {
	// endUse first: Stats reads ConnUsed before ConnParked, so a reader
	// in between over-counts the busy connections, never under-counts.
	p.endUse(c)
	p.used.Add(-1)
	if c.broken || c.fenced.Load() || p.retired.Load() || c.globalsGen != p.globalsGen.Load() {
		p.discard(c)
		return 0
	}
	if c.Dirty {
		// State that cannot be undone statement by statement (temporary
		// tables, user variables, locks, an open transaction): close the
		// connection. Not COM_RESET_CONNECTION: on MariaDB Galera a
		// connection that was reset (or changed user) silently stops
		// honouring wsrep_sync_wait — its reads are no longer causal,
		// whatever the variable says (measured on 10.11.19; reported
		// upstream as galera issue 613 for COM_CHANGE_USER).
		p.discard(c)
		return 0
	}
	c.lastUsed = time.Now()
	memtrim.Dropped(c.ReleaseLargeBuffers()) // a large result grew them; idle now
	p.mu.Lock()
	c.gen++
	gen = c.gen
	for i, w := range p.waiters {
		if w.prof == prof {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			p.inUse[c] = struct{}{}
			p.mu.Unlock()
			w.ch <- c
			return gen
		}
	}
	if keep {
		p.kept[prof] = append(p.kept[prof], c)
	} else {
		p.idle[prof] = append(p.idle[prof], c)
	}
	p.mu.Unlock()
	return gen
}

// Unkeep makes c, kept for its session as generation gen (Keep), an
// idle connection like any other, if it is still kept: the session no
// longer wants it (it ended, or goes to another node now).
func (p *Pool) Unkeep(c *Conn, prof Profile, gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.gen == gen && removeLocked(p.kept, prof, c) {
		p.idle[prof] = append(p.idle[prof], c)
	}
}

// removeLocked takes c out of lists[prof], reporting whether it was
// there (p.mu held).
func removeLocked(lists map[Profile][]*Conn, prof Profile, c *Conn) bool {
	list := lists[prof]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] == c {
			lists[prof] = append(list[:i], list[i+1:]...)
			return true
		}
	}
	return false
}

// TakeBack hands c back to the session that returned it as generation
// gen, if c is still idle and nobody has used it since: its
// per-statement state (warnings, FOUND_ROWS(), ROW_COUNT()) is then
// still that session's.
func (p *Pool) TakeBack(c *Conn, prof Profile, gen uint64) bool {
	return p.takeBack(c, prof, gen, false)
}

// Reclaim is TakeBack for the session's next statement (not one about
// the previous, which must find the connection as it was): one idle
// longer than PingAfterIdle is pinged first, as Get does, and closed if
// the ping fails.
func (p *Pool) Reclaim(c *Conn, prof Profile, gen uint64) bool {
	return p.takeBack(c, prof, gen, true)
}

func (p *Pool) takeBack(c *Conn, prof Profile, gen uint64, ping bool) bool {
	p.mu.Lock()
	if c.gen != gen || !removeLocked(p.kept, prof, c) && !removeLocked(p.idle, prof, c) {
		p.mu.Unlock()
		return false
	}
	p.inUse[c] = struct{}{}
	var idle time.Duration
	if ping {
		idle = time.Since(c.lastUsed) // under mu: put's write
	}
	p.mu.Unlock()
	if !p.checkTaken(c, idle) {
		return false
	}
	p.markUsed()
	return true
}

// checkTaken says whether c, just taken from the idle connections
// (recorded in inUse, not yet counted as used), may be handed out: not
// opened before a change of globals, and answering a ping when it sat
// idle longer than PingAfterIdle. An unfit c is closed.
func (p *Pool) checkTaken(c *Conn, idle time.Duration) bool {
	if c.globalsGen == p.globalsGen.Load() &&
		(idle <= p.opts.PingAfterIdle || c.SimpleCommand([]byte{byte(mysqlproto.ComPing)}) == nil) {
		return true
	}
	p.mu.Lock()
	delete(p.inUse, c)
	p.mu.Unlock()
	p.discard(c)
	return false
}

// endUse forgets c as in use (and as a writer-role connection).
func (p *Pool) endUse(c *Conn) {
	p.mu.Lock()
	counted := c.writerEpoch != 0 && !c.parked
	if c.parked {
		p.parkedN.Add(-1)
	}
	c.writerEpoch, c.parked = 0, false // under mu: FenceWriters reads them
	delete(p.inUse, c)
	p.mu.Unlock()
	if counted {
		p.writerDone()
	}
}

// Discard closes a connection taken from the pool.
func (p *Pool) Discard(c *Conn) {
	p.endUse(c) // first: see Put
	p.used.Add(-1)
	p.discard(c)
}

// MarkWriter records that c, taken from this pool, serves the writer role
// in epoch, so a writer change can wait for it or fence it.
func (p *Pool) MarkWriter(c *Conn, epoch uint64) {
	p.mu.Lock()
	if c.writerEpoch == 0 || c.parked {
		p.writerInUse.Add(1)
	}
	if c.parked {
		p.parkedN.Add(-1)
	}
	c.writerEpoch, c.parked = epoch, false // under mu: FenceWriters reads them
	p.mu.Unlock()
}

// writerDone counts one writer-role connection less in use, and signals
// a writer change waiting for none.
func (p *Pool) writerDone() {
	if p.writerInUse.Add(-1) == 0 {
		select {
		case p.writersDone <- struct{}{}:
		default:
		}
	}
}

// Park says that c, in use, is held by a session that is idle with no
// transaction open (kept after a write for a statement about it, or for
// state pinned there): neither a writer change nor a drain of the node
// waits for it, since no statement or transaction runs there. Waiting
// would not help a session whose state is pinned there (a temporary
// table, a lock): it is idle, and loses that state when the node
// restarts or the writer role leaves it, whenever that is. Only the
// session that holds c parks and unparks it.
func (p *Pool) Park(c *Conn) {
	p.mu.Lock()
	if c.parked {
		p.mu.Unlock()
		return
	}
	c.parked = true
	p.parkedN.Add(1)
	writer := c.writerEpoch != 0
	p.mu.Unlock()
	if writer {
		p.writerDone()
	}
}

// Unpark takes a parked c back for a statement. It fails while a writer
// change drains this pool's writer connections (DrainWriters): the
// session must then leave c, which is about to be fenced.
func (p *Pool) Unpark(c *Conn) bool {
	if !c.parked {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	writer := c.writerEpoch != 0
	if p.draining && writer {
		return false
	}
	c.parked = false
	p.parkedN.Add(-1)
	if writer {
		p.writerInUse.Add(1)
	}
	return true
}

// DrainWriters marks a writer change away from this node as under way
// (on) or over: parked connections cannot be taken back meanwhile.
func (p *Pool) DrainWriters(on bool) {
	p.mu.Lock()
	p.draining = on
	p.mu.Unlock()
}

// WriterInUse is the number of connections in use in the writer role,
// parked ones aside.
func (p *Pool) WriterInUse() int64 { return p.writerInUse.Load() }

// WaitWritersDone waits until no connection is in use in the writer role,
// or ctx ends; it reports whether none is.
func (p *Pool) WaitWritersDone(ctx context.Context) bool {
	for p.writerInUse.Load() > 0 {
		select {
		case <-ctx.Done():
			return p.writerInUse.Load() == 0
		case <-p.writersDone:
		}
	}
	return true
}

// FenceWriters closes every connection in use in the writer role: what
// runs on them fails at once. It returns how many it closed.
func (p *Pool) FenceWriters() int {
	p.mu.Lock()
	var victims []*Conn
	for c := range p.inUse {
		if c.writerEpoch != 0 {
			victims = append(victims, c)
		}
	}
	p.mu.Unlock()
	for _, c := range victims {
		c.Fence()
	}
	return len(victims)
}

func (p *Pool) discard(c *Conn) {
	c.Close()
	memtrim.Dropped(c.ReleaseLargeBuffers())
	p.release()
}

// release frees a slot: the first waiter, if any, gets it.
func (p *Pool) release() {
	p.mu.Lock()
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.mu.Unlock()
		w.ch <- nil // the slot passes to the waiter: p.open unchanged
		return
	}
	p.open--
	p.mu.Unlock()
}

// CloseIdle closes idle connections older than the idle timeout (all of
// them when all is true, e.g. when the node goes offline).
func (p *Pool) CloseIdle(all bool) {
	var victims []*Conn
	p.mu.Lock()
	for _, lists := range []map[Profile][]*Conn{p.idle, p.kept} {
		for k, list := range lists {
			keep := list[:0]
			for _, c := range list {
				if all || time.Since(c.lastUsed) > p.opts.IdleTimeout {
					victims = append(victims, c)
				} else {
					keep = append(keep, c)
				}
			}
			lists[k] = keep
		}
	}
	p.mu.Unlock()
	for _, c := range victims {
		p.discard(c)
	}
}

// CountQuery records one statement and its traffic for the stats.
func (p *Pool) CountQuery(sent, recv int) {
	p.queries.Add(1)
	p.bytesSent.Add(int64(sent))
	p.bytesRecv.Add(int64(recv))
}

// CountRead records one statement routed to this node as a read
// (Reads: what the readers served, for the choice of a reader).
func (p *Pool) CountRead() { p.reads.Add(1) }

// Reads returns how many reads CountRead recorded.
func (p *Pool) Reads() int64 { return p.reads.Load() }

// SetLatency records a health-check round trip.
func (p *Pool) SetLatency(d time.Duration) { p.latencyUs.Store(d.Microseconds()) }

// Stats returns the pool's counters.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	free := 0
	for _, l := range p.idle {
		free += len(l)
	}
	for _, l := range p.kept {
		free += len(l)
	}
	p.mu.Unlock()
	return Stats{
		ConnUsed: p.used.Load(), ConnFree: int64(free), ConnOK: p.connOK.Load(), ConnERR: p.connErr.Load(),
		MaxConnUsed: p.maxUsed.Load(), Queries: p.queries.Load(), BytesSent: p.bytesSent.Load(),
		// ConnParked read last (after ConnUsed): see Put.
		BytesRecv: p.bytesRecv.Load(), LatencyUs: p.latencyUs.Load(), ConnParked: p.parkedN.Load(),
	}
}
