package proxy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/topology"
)

// This file is the proxy's face to its operators: what the admin tables
// (package proxyadmin) read and the changes they make, as plain methods,
// so that the data plane links no admin engine.

// OperatorDrained says whether an operator drains node (admin_state).
func (p *Proxy) OperatorDrained(node string) bool {
	p.galera.mu.Lock()
	defer p.galera.mu.Unlock()
	return p.galera.adminDrain[node]
}

// FailbackSetting is galera.failback as the proxy runs with it now.
func (p *Proxy) FailbackSetting() string {
	p.runtimeMu.Lock()
	defer p.runtimeMu.Unlock()
	return p.failbackSetting
}

// SetWeights sets the writer and reader weights of the named nodes in one
// atomic change: every node named must be in the topology, or nothing
// changes.
func (p *Proxy) SetWeights(weights map[string]config.Weights) error {
	err := p.view.UpdateAll(func(servers []topology.Server) error {
		for _, name := range slices.Sorted(maps.Keys(weights)) {
			if !slices.ContainsFunc(servers, func(s topology.Server) bool { return s.Name == name }) {
				return fmt.Errorf("server %s left the topology while the statement ran; nothing was changed, run it again", name)
			}
		}
		for i := range servers {
			if w, ok := weights[servers[i].Name]; ok {
				servers[i].WriterWeight, servers[i].ReaderWeight = w.Writer, w.Reader
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.reconsider()
	if len(weights) > 0 {
		p.log.Info("admin: server weights updated", "servers", fmt.Sprint(weights))
	}
	return nil
}

// HasServer says whether node is in the topology now.
func (p *Proxy) HasServer(node string) bool {
	_, ok := p.view.Load().Server(node)
	return ok
}

// UserRow is one client account as the admin table users shows it.
type UserRow struct {
	Name, BackendUser, DefaultHostgroup, DefaultSchema, AuthPlugin string
	MaxConnections, Connections                                    int64
}

// Users lists the client accounts, by name.
func (p *Proxy) Users() []UserRow {
	m := *p.users.Load()
	out := make([]UserRow, 0, len(m))
	for _, u := range m {
		out = append(out, UserRow{Name: u.name, BackendUser: u.backendUser, DefaultHostgroup: u.hostgroup(),
			DefaultSchema: u.defaultSchema, AuthPlugin: u.plugin, MaxConnections: u.maxConns, Connections: u.conns.Load()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SetDefaultHostgroups changes users' default hostgroups ("", writer or
// reader), all or none.
func (p *Proxy) SetDefaultHostgroups(set map[string]string) error {
	users := *p.users.Load()
	for name, h := range set {
		if h != "" && h != config.HostgroupWriter && h != config.HostgroupReader {
			return fmt.Errorf("default_hostgroup %q: use '', 'writer' or 'reader'", h)
		}
		if users[name] == nil {
			return fmt.Errorf("user %s no longer exists; nothing was changed", name)
		}
	}
	for name, h := range set {
		users[name].defaultHostgroup.Store(&h)
	}
	return nil
}

// QueryRules are the routing rules in force, in order.
func (p *Proxy) QueryRules() []config.QueryRule {
	rs := *p.rules.Load()
	out := make([]config.QueryRule, len(rs))
	for i, r := range rs {
		out[i] = r.src
	}
	return out
}

// ReplaceQueryRules validates rs as the configuration file's loader would
// and makes it the rules in force, or changes nothing.
func (p *Proxy) ReplaceQueryRules(rs []config.QueryRule) error {
	c := config.Config{QueryRules: rs, Users: p.cfg.Users}
	for _, prob := range c.Validate() {
		if strings.HasPrefix(prob, "query_rules") {
			return errors.New(prob)
		}
	}
	return p.SetRules(rs)
}

// ShareChange hands an operator's change to the control plane (see
// OnSharedChange); its error is the admin statement's.
func (p *Proxy) ShareChange() error { return p.shared() }

// Counter is one of the proxy's outcome counters.
type Counter struct {
	Name  string
	Value int64
	Help  string
}

// Counters are the proxy's outcome counters (stats_galeon).
func (p *Proxy) Counters() []Counter {
	c := &p.counts
	return []Counter{
		{"read_retries", c.readRetries.Load(), "Autocommit reads retried on another node after theirs failed before answering."},
		{"autocommit_write_retries", c.wrapRetries.Load(), "Autocommit writes (wrapped with a commit marker) rolled back by a deadlock or a brute-force abort and run again, as the node's wsrep_retry_autocommit does for a bare one."},
		{"wsrep_not_ready_retries", c.notReadyRetries.Load(), "Statements a node refused with 1047 (WSREP not ready), re-sent elsewhere."},
		{"aborted_writer_changed", c.abortedWriterChanged.Load(), "Transactions or statements ended with an error (9002, or 9003 if they may have committed) because the writer role moved."},
		{"backend_lost", c.backendLost.Load(), "Statements ended with an error (9003, or 9002 if nothing can have committed) because their node's connection broke."},
		{"writer_changes", c.writerChanges.Load(), "Completed writer switches."},
		{"commits_settled_committed", p.markers.committed.Load(), "COMMITs lost with the writer that the commit marker showed committed: the client got their OK."},
		{"commits_settled_not_committed", p.markers.notCommitted.Load(), "COMMITs lost with the writer that the cluster settled as not committed: the client got 9002."},
		{"commits_unknown", p.markers.unknown.Load(), "COMMITs lost with the writer whose outcome could not be settled within galera.commit_settle_timeout: the client got 9003."},
		{"commits_without_marker", p.markers.skipped.Load(), "COMMITs of transactions that wrote, sent without a marker (markers off for the account, or a compressed link)."},
		{"transactions_replayed", c.replayed.Load(), "Transactions lost with the writer and replayed on the new one, every answer as the client saw it."},
		{"transactions_replay_failed", c.replayFailed.Load(), "Transactions lost with the writer whose replay answered differently or found no writer: the client got 9002."},
		{"transactions_too_large_to_replay", c.replayTooLarge.Load(), "Transactions whose statements grew past galera.transaction_replay_max_size (not replayable)."},
		{"causal_reads", c.causalReads.Load(), "Reads made causal (wsrep_sync_wait) so that their session read its own write."},
		{"degraded_writer_decisions", c.degradedDecisions.Load(), "Writer changes this proxy made alone while the control plane was unreachable."},
		{"paused_writes", p.pauses.now.Load(), "Statements waiting for a writer now (a writer switch, or no node fit to write)."},
		{"paused_writes_total", p.pauses.total.Load(), "Statements that waited for a writer."},
		{"paused_writes_ms_total", p.pauses.nanos.Load() / 1e6, "Milliseconds statements spent waiting for a writer, summed."},
		{"paused_writes_rejected", p.pauses.rejected.Load(), "Statements refused with 9001 because proxy.max_paused_writes statements already waited."},
		{"client_connections", p.clients.Load(), "Client sessions connected now."},
		{"client_connections_total", p.clientsTotal.Load(), "Client connections accepted."},
	}
}

// StateTransfers are the joining nodes' state transfers in progress.
func (p *Proxy) StateTransfers() []StateTransfer {
	if ts := p.transfers.Load(); ts != nil {
		return *ts
	}
	return nil
}
