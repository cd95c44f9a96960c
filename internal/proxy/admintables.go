package proxy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/topology"
)

// AdminTables exposes the running proxy to the admin interface. Reads are
// live; writes apply atomically to new statements at once (reader and
// writer weights, default hostgroups, query rules).
func (p *Proxy) AdminTables() []admin.Table {
	return []admin.Table{p.serversTable(), p.writerTable(), p.usersTable(), p.rulesTable(), p.poolTable(), p.digestTable(),
		p.checksTable(), p.eventsTable(), p.countersTable(), p.proxiesTable(), p.stateTransfersTable()}
}

func (p *Proxy) serversTable() admin.Table {
	cols := []admin.Column{
		{Name: "name", Kind: admin.Text}, {Name: "address", Kind: admin.Text},
		{Name: "writer_weight", Kind: admin.Int}, {Name: "reader_weight", Kind: admin.Int},
		{Name: "status", Kind: admin.Text}, {Name: "reason", Kind: admin.Text}, {Name: "role", Kind: admin.Text},
		{Name: "admin_state", Kind: admin.Text}, {Name: "lagging", Kind: admin.Int},
		{Name: "source", Kind: admin.Text}, {Name: "site", Kind: admin.Text, Nullable: true},
		{Name: "segment", Kind: admin.Int, Nullable: true},
	}
	segments := func() map[string]int64 {
		out := map[string]int64{}
		for _, c := range p.GaleraChecks() {
			if c.Vars != nil {
				out[c.Node] = int64(c.Health.Segment)
			}
		}
		return out
	}
	row := func(s topology.Server, snap *topology.Snapshot, writer string, segs map[string]int64) []any {
		role := ""
		if s.Name == writer {
			role = "writer"
		} else if s.ReaderWeight > 0 && s.Online && !s.Lagging {
			role = "reader"
		} else if snap.StaleReads && snap.IsReader(s.Name) {
			role = "stale reader"
		}
		adminState := "active"
		p.galera.mu.Lock()
		if p.galera.adminDrain[s.Name] {
			adminState = "drain"
		}
		p.galera.mu.Unlock()
		lag := int64(0)
		if s.Lagging {
			lag = 1
		}
		source := "config"
		if s.Discovered {
			source = "discovery"
		}
		var seg any
		if v, ok := segs[s.Name]; ok {
			seg = v
		}
		return []any{s.Name, s.Addr, int64(s.WriterWeight), int64(s.ReaderWeight), s.State(), s.Reason, role, adminState, lag, source, nullable(s.Site), seg}
	}
	return admin.Table{
		Name: "servers", Columns: cols,
		Rows: func() [][]any {
			snap := p.view.Load()
			w, _ := snap.Writer()
			out := make([][]any, 0, len(snap.Servers))
			segs := segments()
			for _, s := range snap.Servers {
				out = append(out, row(s, snap, w.Name, segs))
			}
			return out
		},
		Accepts: admin.OpUpdate,
		Apply: func(changes []admin.Change) error {
			// Validate every row first, then apply: weights in one
			// atomic topology update, drains after it.
			weights := map[string][2]int{}
			drains := map[string]bool{}
			for _, ch := range changes {
				name, _ := ch.Old[0].(string)
				ww, rw := ch.Old[2], ch.Old[3]
				for i, c := range cols {
					if ch.New[i] == ch.Old[i] {
						continue
					}
					switch c.Name {
					case "writer_weight", "reader_weight":
						x, _ := ch.New[i].(int64)
						if x < 0 || x > 1_000_000 {
							return fmt.Errorf("%s = %d for %s: use 0 (not in that hostgroup) to 1000000", c.Name, x, name)
						}
					case "admin_state":
						st := ch.New[i]
						if st != "drain" && st != "active" {
							return fmt.Errorf("admin_state = %v for %s: use 'drain' (no new transactions; in-flight ones finish) or 'active'", st, name)
						}
						drains[name] = st == "drain"
					default:
						return fmt.Errorf("servers.%s cannot be changed at runtime; only writer_weight, reader_weight and admin_state can", c.Name)
					}
				}
				if ch.New[2] != ww || ch.New[3] != rw {
					w, _ := ch.New[2].(int64)
					r, _ := ch.New[3].(int64)
					weights[name] = [2]int{int(w), int(r)}
				}
			}
			// Every server named must still be there, or nothing changes.
			err := p.view.UpdateAll(func(servers []topology.Server) error {
				for _, name := range slices.Concat(slices.Collect(maps.Keys(weights)), slices.Collect(maps.Keys(drains))) {
					if !slices.ContainsFunc(servers, func(s topology.Server) bool { return s.Name == name }) {
						return fmt.Errorf("server %s left the topology while the statement ran; nothing was changed, run it again", name)
					}
				}
				for i := range servers {
					if w, ok := weights[servers[i].Name]; ok {
						servers[i].WriterWeight, servers[i].ReaderWeight = w[0], w[1]
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if len(weights) > 0 {
				p.log.Info("admin: server weights updated", "servers", fmt.Sprint(weights))
			}
			for name, on := range drains {
				p.Drain(name, on)
			}
			return p.shared()
		},
	}
}

// writerTable shows the writer and its epoch; UPDATE writer SET node='x'
// is a graceful switchover.
func (p *Proxy) writerTable() admin.Table {
	cols := []admin.Column{{Name: "node", Kind: admin.Text}, {Name: "epoch", Kind: admin.Int},
		{Name: "pending", Kind: admin.Text}, {Name: "failback", Kind: admin.Text}}
	row := func() []any {
		snap := p.view.Load()
		w, _ := snap.Writer()
		p.runtimeMu.Lock()
		failback := p.failbackSetting
		p.runtimeMu.Unlock()
		return []any{w.Name, int64(snap.Epoch), snap.Pending, failback}
	}
	return admin.Table{
		Name: "writer", Columns: cols,
		Rows:    func() [][]any { return [][]any{row()} },
		Accepts: admin.OpUpdate,
		Apply: func(changes []admin.Change) error {
			ch := changes[0]
			node, ok := ch.New[0].(string)
			if !ok || len(changes) != 1 || ch.New[1] != ch.Old[1] || ch.New[2] != ch.Old[2] || ch.New[3] != ch.Old[3] {
				return errors.New("only writer.node can be set: UPDATE writer SET node = 'NAME' moves the writer role there gracefully")
			}
			return p.Switchover(node)
		},
	}
}

func (p *Proxy) usersTable() admin.Table {
	cols := []admin.Column{
		{Name: "name", Kind: admin.Text}, {Name: "backend_user", Kind: admin.Text},
		{Name: "default_hostgroup", Kind: admin.Text}, {Name: "default_schema", Kind: admin.Text},
		{Name: "max_connections", Kind: admin.Int}, {Name: "connections", Kind: admin.Int},
		{Name: "auth_plugin", Kind: admin.Text},
	}
	row := func(u *user) []any {
		return []any{u.name, u.backendUser, u.hostgroup(), u.defaultSchema, u.maxConns, u.conns.Load(), u.plugin}
	}
	sorted := func() []*user {
		m := *p.users.Load()
		out := make([]*user, 0, len(m))
		for _, u := range m {
			out = append(out, u)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
		return out
	}
	return admin.Table{
		Name: "users", Columns: cols,
		Rows: func() [][]any {
			var out [][]any
			for _, u := range sorted() {
				out = append(out, row(u))
			}
			return out
		},
		Accepts: admin.OpUpdate,
		Apply: func(changes []admin.Change) error {
			users := *p.users.Load()
			set := map[*user]string{}
			for _, ch := range changes {
				for i := range cols {
					if i != 2 && ch.New[i] != ch.Old[i] {
						return errors.New("only users.default_hostgroup can be changed at runtime")
					}
				}
				h, _ := ch.New[2].(string)
				if h != "" && h != config.HostgroupWriter && h != config.HostgroupReader {
					return fmt.Errorf("default_hostgroup %q: use '', 'writer' or 'reader'", h)
				}
				name, _ := ch.Old[0].(string)
				u := users[name]
				if u == nil {
					return fmt.Errorf("user %s no longer exists; nothing was changed", name)
				}
				set[u] = h
			}
			for u, h := range set {
				u.defaultHostgroup.Store(&h)
			}
			return p.shared()
		},
	}
}

// rulesTable: rules are replaced as a whole, validated first, so a bad
// regular expression never half-applies.
func (p *Proxy) rulesTable() admin.Table {
	cols := []admin.Column{
		{Name: "rule_id", Kind: admin.Int}, {Name: "match", Kind: admin.Text, Nullable: true},
		{Name: "digest", Kind: admin.Text, Nullable: true}, {Name: "user", Kind: admin.Text, Nullable: true},
		{Name: "destination", Kind: admin.Text},
	}
	current := func() []config.QueryRule {
		rs := *p.rules.Load()
		out := make([]config.QueryRule, len(rs))
		for i, r := range rs {
			out[i] = r.src
		}
		return out
	}
	row := func(i int, r config.QueryRule) []any {
		return []any{int64(i + 1), nullable(r.Match), nullable(r.Digest), nullable(r.User), r.Destination}
	}
	apply := func(rs []config.QueryRule) error {
		c := config.Config{QueryRules: rs, Users: p.cfg.Users}
		for _, prob := range c.Validate() {
			if strings.HasPrefix(prob, "query_rules") {
				return errors.New(prob)
			}
		}
		if err := p.SetRules(rs); err != nil {
			return err
		}
		return p.shared()
	}
	str := func(v any) string { s, _ := v.(string); return s }
	return admin.Table{
		Name: "query_rules", Columns: cols,
		Rows: func() [][]any {
			var out [][]any
			for i, r := range current() {
				out = append(out, row(i, r))
			}
			return out
		},
		Accepts: admin.OpInsert | admin.OpUpdate | admin.OpDelete,
		Apply: func(changes []admin.Change) error {
			rs := current()
			drop := make([]bool, len(rs))
			var added []config.QueryRule
			for _, ch := range changes {
				if ch.Old != nil {
					id, _ := ch.Old[0].(int64)
					if id < 1 || int(id) > len(rs) || !slices.Equal(row(int(id-1), rs[id-1]), ch.Old) {
						return errors.New("the query rules changed while the statement ran; nothing was changed, run it again")
					}
					if ch.New == nil {
						drop[id-1] = true
						continue
					}
					if ch.New[0] != ch.Old[0] {
						return errors.New("rule_id cannot be changed: it is the rule's position; delete and insert to reorder")
					}
				} else if ch.New[0] != nil {
					return errors.New("rule_id is the rule's position and is assigned; leave it out")
				}
				r := config.QueryRule{Match: str(ch.New[1]), Digest: str(ch.New[2]), User: str(ch.New[3]), Destination: str(ch.New[4])}
				if ch.Old == nil {
					added = append(added, r)
				} else {
					rs[ch.Old[0].(int64)-1] = r
				}
			}
			var next []config.QueryRule
			for i, r := range rs {
				if !drop[i] {
					next = append(next, r)
				}
			}
			return apply(append(next, added...))
		},
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// poolTable is ProxySQL's stats_connection_pool, one row per node.
func (p *Proxy) poolTable() admin.Table {
	names := []string{"hostgroup", "srv_name", "srv_host", "srv_port", "status", "ConnUsed", "ConnFree", "ConnOK", "ConnERR",
		"MaxConnUsed", "Queries", "Bytes_data_sent", "Bytes_data_recv", "Latency_us"}
	cols := make([]admin.Column, len(names))
	for i, n := range names {
		k := admin.Int
		if i < 5 {
			k = admin.Text
		}
		cols[i] = admin.Column{Name: n, Kind: k}
	}
	cols[3].Kind = admin.Int
	return admin.Table{
		Name: "stats_connection_pool", Columns: cols,
		Rows: func() [][]any {
			snap := p.view.Load()
			w, _ := snap.Writer()
			var out [][]any
			for _, r := range p.PoolStats() {
				var hgs []string
				for _, s := range snap.Servers {
					if s.Name == r.Server {
						if s.Name == w.Name {
							hgs = append(hgs, "writer")
						}
						if s.ReaderWeight > 0 {
							hgs = append(hgs, "reader")
						}
					}
				}
				host, port := splitHostPort(r.Addr)
				out = append(out, []any{strings.Join(hgs, ","), r.Server, host, port, r.Status,
					r.ConnUsed, r.ConnFree, r.ConnOK, r.ConnERR, r.MaxConnUsed, r.Queries, r.BytesSent, r.BytesRecv, r.LatencyUs})
			}
			return out
		},
	}
}

func splitHostPort(a string) (string, int64) {
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return a, 0
	}
	port, _ := strconv.ParseInt(a[i+1:], 10, 64)
	return a[:i], port
}

// digestTable is ProxySQL's stats_mysql_query_digest; DELETE resets it.
func (p *Proxy) digestTable() admin.Table {
	cols := []admin.Column{
		{Name: "hostgroup", Kind: admin.Text}, {Name: "username", Kind: admin.Text},
		{Name: "digest", Kind: admin.Text}, {Name: "digest_text", Kind: admin.Text},
		{Name: "count_star", Kind: admin.Int}, {Name: "first_seen", Kind: admin.Int}, {Name: "last_seen", Kind: admin.Int},
		{Name: "sum_time", Kind: admin.Int}, {Name: "min_time", Kind: admin.Int}, {Name: "max_time", Kind: admin.Int},
		{Name: "sum_rows_sent", Kind: admin.Int},
	}
	return admin.Table{
		Name: "stats_query_digest", Columns: cols,
		Rows: func() [][]any {
			var out [][]any
			for _, d := range p.Digests() {
				out = append(out, []any{d.Hostgroup, d.User, d.Digest, d.DigestText, d.Count, d.FirstSeen, d.LastSeen, d.SumUs, d.MinUs, d.MaxUs, d.Rows})
			}
			return out
		},
		// Any DELETE resets the whole table, as in ProxySQL
		// (stats_mysql_query_digest_reset).
		Accepts: admin.OpDelete,
		Apply: func([]admin.Change) error {
			p.ResetDigests()
			return nil
		},
	}
}
