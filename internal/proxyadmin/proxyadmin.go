// Package proxyadmin is a running proxy's face in the admin interface:
// the tables operators read and change with SQL (servers, writer, users,
// query_rules, stats_connection_pool, stats_query_digest, galera_checks,
// events, stats_galeon, proxies, state_transfers, operations, replicas), built from the proxy's
// accessors. It keeps the admin engine (and SQLite) out of the data plane:
// package proxy imports neither.
package proxyadmin

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/topology"
)

// Tables exposes the running proxy to the admin interface. Reads are
// live; writes apply atomically to new statements at once (reader and
// writer weights, default hostgroups, query rules).
// ops, if not nil, lets the operations table start and steer operations.
func Tables(p *proxy.Proxy, ops Operations) []admin.Table {
	return []admin.Table{servers(p), writer(p), users(p), rules(p), pool(p), digests(p),
		checks(p), events(p), counters(p), proxies(p), stateTransfers(p), operations(p, ops), replicas(p)}
}

func servers(p *proxy.Proxy) admin.Table {
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
		if p.OperatorDrained(s.Name) {
			adminState = "drain"
		}
		source := "config"
		if s.Discovered {
			source = "discovery"
		}
		var seg any
		if v, ok := segs[s.Name]; ok {
			seg = v
		}
		return []any{s.Name, s.Addr, int64(s.WriterWeight), int64(s.ReaderWeight), s.State(), s.Reason, role, adminState, boolInt(s.Lagging), source, nullable(s.Site), seg}
	}
	return admin.Table{
		Name: "servers", Columns: cols,
		Rows: func() [][]any {
			snap := p.View().Load()
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
			weights := map[string]config.Weights{}
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
					weights[name] = config.Weights{Writer: int(w), Reader: int(r)}
				}
			}
			// Every server named must still be there, or nothing changes.
			for name := range drains {
				if !p.HasServer(name) {
					return fmt.Errorf("server %s left the topology while the statement ran; nothing was changed, run it again", name)
				}
			}
			// No change may leave the cluster without a node that can
			// take writes: with discovery it would reach every proxy.
			snap := p.View().Load()
			drainedNow := map[string]bool{}
			for _, s := range snap.Servers {
				drainedNow[s.Name] = p.OperatorDrained(s.Name)
			}
			if err := checkWriters(snap.Servers, drainedNow, weights, drains); err != nil {
				return err
			}
			if err := p.SetWeights(weights); err != nil {
				return err
			}
			for name, on := range drains {
				p.Drain(name, on)
			}
			return p.ShareChange()
		},
	}
}

// writer shows the writer and its epoch; UPDATE writer SET node='x' is a
// graceful switchover.
func writer(p *proxy.Proxy) admin.Table {
	cols := []admin.Column{{Name: "node", Kind: admin.Text}, {Name: "epoch", Kind: admin.Int},
		{Name: "pending", Kind: admin.Text}, {Name: "failback", Kind: admin.Text}}
	return admin.Table{
		Name: "writer", Columns: cols,
		Rows: func() [][]any {
			snap := p.View().Load()
			w, _ := snap.Writer()
			return [][]any{{w.Name, int64(snap.Epoch), snap.Pending, p.FailbackSetting()}}
		},
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

func users(p *proxy.Proxy) admin.Table {
	cols := []admin.Column{
		{Name: "name", Kind: admin.Text}, {Name: "backend_user", Kind: admin.Text},
		{Name: "default_hostgroup", Kind: admin.Text}, {Name: "default_schema", Kind: admin.Text},
		{Name: "max_connections", Kind: admin.Int}, {Name: "connections", Kind: admin.Int},
		{Name: "auth_plugin", Kind: admin.Text},
	}
	return admin.Table{
		Name: "users", Columns: cols,
		Rows: func() [][]any {
			var out [][]any
			for _, u := range p.Users() {
				out = append(out, []any{u.Name, u.BackendUser, u.DefaultHostgroup, u.DefaultSchema, u.MaxConnections, u.Connections, u.AuthPlugin})
			}
			return out
		},
		Accepts: admin.OpUpdate,
		Apply: func(changes []admin.Change) error {
			set := map[string]string{}
			for _, ch := range changes {
				for i := range cols {
					if i != 2 && ch.New[i] != ch.Old[i] {
						return errors.New("only users.default_hostgroup can be changed at runtime")
					}
				}
				name, _ := ch.Old[0].(string)
				set[name], _ = ch.New[2].(string)
			}
			if err := p.SetDefaultHostgroups(set); err != nil {
				return err
			}
			return p.ShareChange()
		},
	}
}

// rules: rules are replaced as a whole, validated first, so a bad
// regular expression never half-applies.
func rules(p *proxy.Proxy) admin.Table {
	cols := []admin.Column{
		{Name: "rule_id", Kind: admin.Int}, {Name: "match", Kind: admin.Text, Nullable: true},
		{Name: "digest", Kind: admin.Text, Nullable: true}, {Name: "user", Kind: admin.Text, Nullable: true},
		{Name: "destination", Kind: admin.Text},
	}
	row := func(i int, r config.QueryRule) []any {
		return []any{int64(i + 1), nullable(r.Match), nullable(r.Digest), nullable(r.User), r.Destination}
	}
	str := func(v any) string { s, _ := v.(string); return s }
	return admin.Table{
		Name: "query_rules", Columns: cols,
		Rows: func() [][]any {
			var out [][]any
			for i, r := range p.QueryRules() {
				out = append(out, row(i, r))
			}
			return out
		},
		Accepts: admin.OpInsert | admin.OpUpdate | admin.OpDelete,
		Apply: func(changes []admin.Change) error {
			rs := p.QueryRules()
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
			if err := p.ReplaceQueryRules(append(next, added...)); err != nil {
				return err
			}
			return p.ShareChange()
		},
	}
}

// pool is ProxySQL's stats_connection_pool, one row per node.
func pool(p *proxy.Proxy) admin.Table {
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
			snap := p.View().Load()
			w, _ := snap.Writer()
			var out [][]any
			for _, r := range p.PoolStats() {
				var hgs []string
				if s, ok := snap.Server(r.Server); ok {
					if s.Name == w.Name {
						hgs = append(hgs, "writer")
					}
					if s.ReaderWeight > 0 {
						hgs = append(hgs, "reader")
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

// digests is ProxySQL's stats_mysql_query_digest; DELETE resets it.
func digests(p *proxy.Proxy) admin.Table {
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

// checkColumns are the wsrep figures galera_checks shows, as column name
// and the status or variable it comes from.
var checkColumns = []struct{ col, v string }{
	{"local_state", "wsrep_local_state_comment"}, {"cluster_status", "wsrep_cluster_status"},
	{"cluster_size", "wsrep_cluster_size"}, {"conf_id", "wsrep_cluster_conf_id"},
	{"local_index", "wsrep_local_index"}, {"recv_queue", "wsrep_local_recv_queue"},
	{"fc_paused", "wsrep_flow_control_paused"}, {"last_committed", "wsrep_last_committed"},
	{"desync", "wsrep_desync"}, {"reject_queries", "wsrep_reject_queries"},
	{"donor_rejects_queries", "wsrep_sst_donor_rejects_queries"}, {"sst_method", "wsrep_sst_method"},
	{"read_only", "read_only"}, {"pxc_maint_mode", "pxc_maint_mode"}, {"cluster_uuid", "wsrep_cluster_state_uuid"},
	{"cert_failures", "wsrep_local_cert_failures"}, {"fc_paused_ns", "wsrep_flow_control_paused_ns"},
	{"flush_log_at_trx_commit", "innodb_flush_log_at_trx_commit"}, {"sync_binlog", "sync_binlog"},
}

// checks is the monitor's latest check of every node (galera_checks).
func checks(p *proxy.Proxy) admin.Table {
	cols := []admin.Column{
		{Name: "name", Kind: admin.Text}, {Name: "state", Kind: admin.Text}, {Name: "reason", Kind: admin.Text},
		{Name: "last_check", Kind: admin.Text}, {Name: "check_us", Kind: admin.Int},
		{Name: "missed_checks", Kind: admin.Int}, {Name: "error", Kind: admin.Text}, {Name: "segment", Kind: admin.Int},
	}
	for _, c := range checkColumns {
		cols = append(cols, admin.Column{Name: c.col, Kind: admin.Text})
	}
	cols = append(cols, admin.Column{Name: "durability_risk", Kind: admin.Text})
	return admin.Table{
		Name: "galera_checks", Columns: cols,
		Rows: func() [][]any {
			var out [][]any
			for _, c := range p.GaleraChecks() {
				row := []any{c.Node, c.Health.State.String(), c.Health.Reason, c.At.UTC().Format(time.RFC3339Nano),
					c.Latency.Microseconds(), int64(c.Health.Missed), c.Err, int64(c.Health.Segment)}
				for _, k := range checkColumns {
					if v, ok := c.Vars[k.v]; ok {
						row = append(row, v)
					} else {
						row = append(row, nil)
					}
				}
				row = append(row, galera.DurabilityRisk(c.Vars))
				out = append(out, row)
			}
			return out
		},
	}
}

// events is the log of routing changes.
func events(p *proxy.Proxy) admin.Table {
	return admin.Table{
		Name: "events",
		Columns: []admin.Column{{Name: "id", Kind: admin.Int}, {Name: "time", Kind: admin.Text},
			{Name: "kind", Kind: admin.Text}, {Name: "node", Kind: admin.Text}, {Name: "detail", Kind: admin.Text}},
		Rows: func() [][]any {
			var out [][]any
			for _, e := range p.Events() {
				out = append(out, []any{e.ID, e.At.UTC().Format(time.RFC3339Nano), e.Kind, e.Node, e.Detail})
			}
			return out
		},
	}
}

// counters shows the proxy's outcome counters (stats_galeon).
func counters(p *proxy.Proxy) admin.Table {
	return admin.Table{
		Name:    "stats_galeon",
		Columns: []admin.Column{{Name: "variable_name", Kind: admin.Text}, {Name: "variable_value", Kind: admin.Int}, {Name: "description", Kind: admin.Text}},
		Rows: func() [][]any {
			var out [][]any
			for _, c := range p.Counters() {
				out = append(out, []any{c.Name, c.Value, c.Help})
			}
			return out
		},
	}
}

// proxies shows every proxy of the cluster and whether it agrees with the
// published decision.
func proxies(p *proxy.Proxy) admin.Table {
	cols := []admin.Column{
		{Name: "name", Kind: admin.Text}, {Name: "mysql_address", Kind: admin.Text}, {Name: "admin_address", Kind: admin.Text},
		{Name: "controller", Kind: admin.Int}, {Name: "writer", Kind: admin.Text}, {Name: "epoch", Kind: admin.Int},
		{Name: "applied_epoch", Kind: admin.Int}, {Name: "published_writer", Kind: admin.Text}, {Name: "published_epoch", Kind: admin.Int},
		{Name: "agrees", Kind: admin.Int}, {Name: "degraded", Kind: admin.Int}, {Name: "online_nodes", Kind: admin.Text},
		{Name: "updated_at", Kind: admin.Text},
	}
	return admin.Table{Name: "proxies", Columns: cols, Rows: func() [][]any {
		rows := p.ProxiesRows()
		out := make([][]any, 0, len(rows))
		for _, r := range rows {
			out = append(out, []any{r.Name, r.MySQL, r.Admin, boolInt(r.Controller), r.Writer, int64(r.Epoch), int64(r.Applied),
				r.PublishedWriter, int64(r.PublishedEpoch), boolInt(r.Agrees), boolInt(r.Degraded), strings.Join(r.Online, ","), r.UpdatedAt.Format(time.RFC3339Nano)})
		}
		return out
	}}
}

// stateTransfers shows the joining nodes' state transfers.
func stateTransfers(p *proxy.Proxy) admin.Table {
	cols := []admin.Column{
		{Name: "node", Kind: admin.Text}, {Name: "kind", Kind: admin.Text}, {Name: "donor", Kind: admin.Text},
		{Name: "done", Kind: admin.Int}, {Name: "total", Kind: admin.Int}, {Name: "percent", Kind: admin.Float},
		{Name: "rate_per_s", Kind: admin.Float}, {Name: "eta_s", Kind: admin.Float}, {Name: "since", Kind: admin.Text},
	}
	return admin.Table{Name: "state_transfers", Columns: cols, Rows: func() [][]any {
		ts := p.StateTransfers()
		out := make([][]any, 0, len(ts))
		for _, t := range ts {
			eta := -1.0
			if t.ETA >= 0 {
				eta = t.ETA.Seconds()
			}
			out = append(out, []any{t.Node, t.Kind, t.Donor, t.Done, t.Total, t.Percent, t.Rate, eta, t.Since.Format(time.RFC3339)})
		}
		return out
	}}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}
