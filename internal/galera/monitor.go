package galera

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// statusNames and variableNames are what decides a node's fitness. They
// are read in one round trip per poll.
var statusNames = []string{
	"wsrep_local_state", "wsrep_local_state_comment", "wsrep_cluster_status", "wsrep_ready",
	"wsrep_connected", "wsrep_cluster_size", "wsrep_cluster_state_uuid", "wsrep_cluster_conf_id",
	"wsrep_local_index", "wsrep_local_recv_queue", "wsrep_flow_control_paused", "wsrep_last_committed",
	// Who is in the node's component: a writer out of this proxy's reach
	// that Galera still counts is not failed (see Health.Members).
	"wsrep_incoming_addresses",
	// For metrics only (deploy/ dashboards and alerts).
	"wsrep_flow_control_paused_ns", "wsrep_local_cert_failures", "wsrep_local_bf_aborts",
}

var variableNames = []string{
	"wsrep_desync", "wsrep_reject_queries", "wsrep_sst_donor_rejects_queries", "wsrep_sst_method",
	"read_only", "wsrep_provider_options", "pxc_maint_mode",
	// What a crash of every node can lose (DurabilityRisk).
	"innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin",
}

// GlobalsKey is the poll's fingerprint of the node's session defaults:
// an MD5 of the global values of every variable that has a session
// scope. MariaDB keeps them in information_schema.SYSTEM_VARIABLES, which
// any account may read; MySQL has no such table, so there the poll leaves
// it out.
const GlobalsKey = "galeon_session_globals"

// globalsEvery: the fingerprint costs the node about 2 ms of CPU (it
// reads ~650 variables), so it is taken on one poll in this many; a
// change made directly on a node reaches new sessions within that many
// intervals (one made through galeon, at once).
const globalsEvery = 4

func pollQuery(schema string, globals bool) string {
	in := func(names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = "'" + strings.ToUpper(n) + "'"
		}
		return strings.Join(q, ",")
	}
	return "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM " + schema + ".GLOBAL_STATUS WHERE UPPER(VARIABLE_NAME) IN (" + in(statusNames) + ")" +
		" UNION ALL SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM " + schema + ".GLOBAL_VARIABLES WHERE UPPER(VARIABLE_NAME) IN (" + in(variableNames) + ")" +
		globalsPart(schema, globals)
}

func globalsPart(schema string, globals bool) string {
	if schema != "information_schema" || !globals {
		return ""
	}
	return " UNION ALL SELECT '" + GlobalsKey + "', MD5(GROUP_CONCAT(VARIABLE_NAME, '=', IFNULL(GLOBAL_VALUE, 'NULL') ORDER BY VARIABLE_NAME SEPARATOR ';'))" +
		" FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_SCOPE = 'SESSION'"
}

// Node is a node to monitor.
type Node struct {
	Name string
	Addr string
}

// MonitorConfig sets up a Monitor.
type MonitorConfig struct {
	User, Password string
	Interval       time.Duration // default 500ms
	Timeout        time.Duration // per check, default 300ms
	Policy         Policy
}

// Monitor polls every node and reports the evaluated health of all of
// them after each change.
type Monitor struct {
	cfg   MonitorConfig
	nodes []Node
	// OnUpdate receives the health of every node, after Reconcile, each
	// time any node's state or reason changes.
	OnUpdate func(map[string]Health)

	// changes carries nodes added and removed while Run runs.
	changes chan nodeChange

	mu     sync.Mutex
	kick   map[string]chan struct{}
	checks map[string]Check
}

// nodeChange adds (remove false) or removes a node.
type nodeChange struct {
	node   Node
	remove bool
}

// Check is the latest poll of one node as operators see it: when it ran,
// how long the round trip took, what the node said and what galeon made
// of it.
type Check struct {
	Node    string
	At      time.Time
	Latency time.Duration
	Err     string            // the poll's error, if it failed
	Vars    map[string]string // status and variables as read (last good poll)
	Health  Health
	// Polls counts the polls of the node completed since it was added;
	// Missed, those of them that failed.
	Polls, Missed int
}

// Checks returns the latest check of every node that has been polled, in
// the order the nodes were given.
func (m *Monitor) Checks() []Check {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Check, 0, len(m.checks))
	for _, n := range m.nodes {
		if c, ok := m.checks[n.Name]; ok {
			out = append(out, c)
		}
	}
	return out
}

// Settled says whether every node has been polled at least n times: the
// monitor's verdicts then rest on evidence, not on the initial guesses.
func (m *Monitor) Settled(n int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, node := range m.nodes {
		if m.checks[node.Name].Polls < n {
			return false
		}
	}
	return true
}

// NewMonitor creates a monitor for nodes.
func NewMonitor(cfg MonitorConfig, nodes []Node) *Monitor {
	if cfg.Interval == 0 {
		cfg.Interval = 500 * time.Millisecond
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 300 * time.Millisecond
	}
	m := &Monitor{cfg: cfg, nodes: append([]Node(nil), nodes...), kick: map[string]chan struct{}{}, checks: map[string]Check{},
		changes: make(chan nodeChange, 64)}
	for _, n := range nodes {
		m.kick[n.Name] = make(chan struct{}, 1)
	}
	return m
}

// AddNode starts monitoring a node (one that registered through
// discovery). It is offline until it passes ok_checks polls in a row.
func (m *Monitor) AddNode(n Node) { m.changes <- nodeChange{node: n} }

// RemoveNode stops monitoring a node and drops it from the health map.
func (m *Monitor) RemoveNode(name string) {
	m.changes <- nodeChange{node: Node{Name: name}, remove: true}
}

// Check asks for an immediate out-of-band poll of a node, e.g. after a
// data connection to it failed. It never blocks.
func (m *Monitor) Check(name string) {
	m.mu.Lock()
	ch := m.kick[name]
	m.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Probe checks node name at once on a connection of its own, out of the
// polling rhythm: nil when a single poll finds it fit to take writes
// (ONLINE by the policy, not read-only), otherwise why not. An operator's
// switchover target is checked so: the monitor's verdict can be an
// interval old.
func (m *Monitor) Probe(ctx context.Context, name string) error {
	m.mu.Lock()
	var addr string
	for _, n := range m.nodes {
		if n.Name == name {
			addr = n.Addr
		}
	}
	m.mu.Unlock()
	if addr == "" {
		return fmt.Errorf("%s is not a known node", name)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = m.cfg.User, m.cfg.Password, "tcp", addr
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = m.cfg.Timeout, m.cfg.Timeout, m.cfg.Timeout
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	schema := "information_schema"
	s := m.poll(ctx, db, &schema, false)
	if s.Err != nil {
		return fmt.Errorf("unreachable: %v", s.Err)
	}
	h := m.cfg.Policy.Evaluate(Health{State: Online}, s)
	switch {
	case h.State != Online:
		return fmt.Errorf("%s: %s", h.State, h.Reason)
	case h.ReadOnly:
		return errors.New("read_only is ON")
	}
	return nil
}

type result struct {
	node    string
	s       Sample
	at      time.Time
	latency time.Duration
}

// Run polls until ctx ends.
func (m *Monitor) Run(ctx context.Context) {
	results := make(chan result, len(m.nodes)+8)
	var wg sync.WaitGroup
	stops := map[string]context.CancelFunc{}
	start := func(n Node) {
		nctx, cancel := context.WithCancel(ctx)
		stops[n.Name] = cancel
		m.mu.Lock()
		kick := m.kick[n.Name]
		m.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.pollLoop(nctx, n, kick, results)
		}()
	}
	health := map[string]Health{}
	for _, n := range m.nodes {
		start(n)
		// Until proven otherwise a configured node is assumed fit, so
		// traffic flows from the first moment; the first poll corrects
		// it within an interval.
		health[n.Name] = Health{State: Online}
	}
	published := map[string]Health{}
	// hold: after a node left the Primary component, nothing is published
	// until the others' checks taken since are in (confirmHold).
	hold := confirmHold{max: 2*m.cfg.Timeout + 50*time.Millisecond}
	// view is every node's health, reconciled; publish hands it on when
	// anything changed.
	view := func() map[string]Health {
		v := make(map[string]Health, len(health))
		for k, h := range health {
			v[k] = h
		}
		Reconcile(v)
		return v
	}
	publish := func(v map[string]Health) {
		if changed(published, v) && m.OnUpdate != nil {
			published = v
			m.OnUpdate(v)
		}
	}
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case ch := <-m.changes:
			name := ch.node.Name
			if stop, ok := stops[name]; ok {
				stop()
				delete(stops, name)
			}
			m.mu.Lock()
			if ch.remove {
				delete(m.kick, name)
				delete(m.checks, name)
				m.nodes = slices.DeleteFunc(m.nodes, func(n Node) bool { return n.Name == name })
				delete(health, name)
				hold.forget(name)
			} else {
				m.kick[name] = make(chan struct{}, 1)
				m.nodes = append(slices.DeleteFunc(m.nodes, func(n Node) bool { return n.Name == name }), ch.node)
				health[name] = Health{State: Offline, Reason: ReasonNotChecked}
				hold.forget(name)
			}
			m.mu.Unlock()
			if !ch.remove {
				start(ch.node)
			}
			publish(view())
		case r := <-results:
			if _, ok := health[r.node]; !ok {
				continue // removed while its poll was on the way
			}
			prev := health[r.node]
			h := m.cfg.Policy.Evaluate(prev, r.s)
			health[r.node] = h
			hold.seen(r.node, r.at)
			if prev.Primary && !h.Primary {
				for _, name := range hold.begin(r.node, health, time.Now()) {
					m.Check(name)
				}
			}
			v := view()
			m.record(r, v)
			if hold.done(time.Now()) {
				publish(v)
			}
		case <-hold.timer():
			hold.end()
			publish(view())
		}
	}
}

// confirmHold keeps a node's departure from the Primary component from
// being published alone. A cut takes several nodes out at once, but their
// checks arrive one by one: published at once, the first one's verdict
// would have the writer policy choose a node whose latest check predates
// the cut — and which the next check, a millisecond later, finds outside
// the Primary component too (issue 25: dc1-1 → dc1-3 → none within 1 ms).
// So every other node that is not OFFLINE and answered its latest check is
// checked again at once, and
// the monitor publishes once all of those checks (started after the
// departure) are in, or after max: one consistent view, one decision.
type confirmHold struct {
	max      time.Duration
	since    time.Time       // the latest departure seen
	deadline time.Time       // publish by then whatever is missing
	awaiting map[string]bool // nodes whose check since is not in yet
	t        *time.Timer
}

// begin starts (or widens) a hold after node left the Primary component
// at now; it returns the nodes to check at once.
func (h *confirmHold) begin(node string, health map[string]Health, now time.Time) []string {
	if h.awaiting == nil {
		h.awaiting = map[string]bool{}
	}
	if len(h.awaiting) == 0 {
		h.deadline = now.Add(h.max)
	}
	h.since = now
	var kick []string
	for name, nh := range health {
		// A node OFFLINE, or whose latest check failed, takes no writer
		// role on that check (Candidate.Electable): nothing to wait for.
		if name != node && nh.State != Offline && nh.Missed == 0 {
			h.awaiting[name] = true
			kick = append(kick, name)
		}
	}
	if len(h.awaiting) > 0 {
		if h.t == nil {
			h.t = time.NewTimer(time.Until(h.deadline))
		} else {
			h.t.Reset(time.Until(h.deadline))
		}
	}
	return kick
}

// seen notes a check of node that started at.
func (h *confirmHold) seen(node string, at time.Time) {
	if !at.Before(h.since) {
		delete(h.awaiting, node)
	}
}

// forget drops a node that left the monitor.
func (h *confirmHold) forget(node string) { delete(h.awaiting, node) }

// done says whether nothing is held back (now).
func (h *confirmHold) done(now time.Time) bool {
	if len(h.awaiting) > 0 && now.Before(h.deadline) {
		return false
	}
	h.end()
	return true
}

// end lets go of the hold.
func (h *confirmHold) end() {
	clear(h.awaiting)
	if h.t != nil {
		h.t.Stop()
	}
}

// timer fires at the deadline of a hold (nil channel while none).
func (h *confirmHold) timer() <-chan time.Time {
	if h.t == nil || len(h.awaiting) == 0 {
		return nil
	}
	return h.t.C
}

// record keeps the latest check of r's node, with the reconciled health
// of every node (Reconcile can change a node other than r's).
func (m *Monitor) record(r result, view map[string]Health) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.checks[r.node]
	c.Node, c.At, c.Latency, c.Err = r.node, r.at, r.latency, ""
	c.Polls++
	if r.s.Err != nil {
		c.Err = r.s.Err.Error()
		c.Missed++
	} else {
		c.Vars = r.s.Vars
	}
	m.checks[r.node] = c
	for name, h := range view {
		if c, ok := m.checks[name]; ok {
			c.Health = h
			m.checks[name] = c
		}
	}
}

func changed(a, b map[string]Health) bool {
	if len(a) != len(b) {
		return true
	}
	for k, v := range b {
		o := a[k]
		if o.State != v.State || o.Reason != v.Reason || o.Lagging != v.Lagging || o.ReadOnly != v.ReadOnly || o.Globals != v.Globals ||
			o.Primary != v.Primary || (o.Missed > 0) != (v.Missed > 0) || o.DialFailed != v.DialFailed || !slices.Equal(o.Members, v.Members) {
			return true
		}
	}
	return false
}

func (m *Monitor) pollLoop(ctx context.Context, n Node, kick <-chan struct{}, out chan<- result) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = m.cfg.User, m.cfg.Password, "tcp", n.Addr
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = m.cfg.Timeout, m.cfg.Timeout, m.cfg.Timeout
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		out <- result{node: n.Name, s: Sample{Err: err}, at: time.Now()}
		return
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	// One persistent connection: a poll costs one round trip.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	schema := "information_schema"
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	var globals string // the last fingerprint read (GlobalsKey)
	for i := 0; ; i++ {
		start := time.Now()
		s := m.poll(ctx, db, &schema, i%globalsEvery == 0 || globals == "")
		if s.Err == nil {
			if v, ok := s.Vars[GlobalsKey]; ok {
				globals = v
			} else if globals != "" {
				s.Vars[GlobalsKey] = globals
			}
		}
		select {
		case out <- result{node: n.Name, s: s, at: start, latency: time.Since(start)}:
		case <-ctx.Done():
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
	}
}

func (m *Monitor) poll(ctx context.Context, db *sql.DB, schema *string, globals bool) Sample {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	rows, err := db.QueryContext(ctx, pollQuery(*schema, globals))
	var me *mysql.MySQLError
	if err != nil && errors.As(err, &me) && (me.Number == 1109 || me.Number == 3167) && *schema == "information_schema" {
		// MySQL 5.7+/PXC keep these in performance_schema.
		*schema = "performance_schema"
		rows, err = db.QueryContext(ctx, pollQuery(*schema, globals))
	}
	if err != nil {
		if ctx.Err() != nil {
			// A hung node: drop the connection so the next poll dials anew
			// instead of queueing behind a stuck one.
			db.SetMaxIdleConns(0)
			db.SetMaxIdleConns(1)
		}
		return Sample{Err: err}
	}
	defer rows.Close()
	vars := map[string]string{}
	for rows.Next() {
		var k, v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return Sample{Err: err}
		}
		vars[k.String] = v.String
	}
	if err := rows.Err(); err != nil {
		return Sample{Err: err}
	}
	if _, ok := vars["wsrep_cluster_status"]; !ok {
		return Sample{Err: errors.New("no wsrep status: not a Galera node (wsrep_on=OFF or no provider)")}
	}
	return Sample{Vars: vars}
}
