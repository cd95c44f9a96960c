package proxy

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/topology"
)

// Weights are one node's hostgroup weights.
type Weights struct {
	Writer int `json:"writer"`
	Reader int `json:"reader"`
}

// Runtime is the part of a proxy's configuration that operators change
// while it runs and that all proxies of a cluster share: users, query
// rules, node weights, operator drains and the writer policy. The
// control plane keeps one copy for the whole cluster; this package only
// imports and exports it.
type Runtime struct {
	Users      []config.User
	QueryRules []config.QueryRule
	// Weights of every node by name (configured or discovered).
	Weights map[string]Weights
	// Drained lists the nodes under an operator drain.
	Drained            []string
	Failback           string
	WriterIsAlsoReader string
}

// Validate checks rt as the configuration file's loader would, naming the
// key of each problem.
func (rt Runtime) Validate() error {
	c := config.Config{Users: rt.Users, QueryRules: rt.QueryRules}
	var probs []string
	for _, p := range c.Validate() {
		if strings.HasPrefix(p, "users") || strings.HasPrefix(p, "query_rules") {
			probs = append(probs, p)
		}
	}
	if _, err := config.ParseFailback(rt.Failback); err != nil {
		probs = append(probs, "galera.failback: "+err.Error())
	}
	switch topology.ReaderPolicy(rt.WriterIsAlsoReader) {
	case topology.WriterReadsNever, topology.WriterReadsAlways, topology.WriterReadsWhenNoOtherReader:
	default:
		probs = append(probs, fmt.Sprintf("galera.writer_is_also_reader: %q: use never, always or when_no_other_reader", rt.WriterIsAlsoReader))
	}
	for name, w := range rt.Weights {
		if w.Writer < 0 || w.Reader < 0 || w.Writer > 1_000_000 || w.Reader > 1_000_000 {
			probs = append(probs, fmt.Sprintf("weights.%s: use 0 to 1000000", name))
		}
	}
	if len(probs) > 0 {
		return errors.New(strings.Join(probs, "; "))
	}
	return nil
}

// ExportRuntime returns the proxy's shared configuration as it is now.
func (p *Proxy) ExportRuntime() Runtime {
	p.runtimeMu.Lock()
	rt := Runtime{Users: slices.Clone(p.runtimeUsers), Weights: map[string]Weights{}}
	for name, w := range p.weights {
		rt.Weights[name] = w
	}
	rt.Failback, rt.WriterIsAlsoReader = p.failbackSetting, p.readerPolicySetting
	p.runtimeMu.Unlock()
	live := *p.users.Load()
	for i, u := range rt.Users {
		if lu, ok := live[u.Name]; ok {
			rt.Users[i].DefaultHostgroup = lu.hostgroup()
		}
	}
	for _, r := range *p.rules.Load() {
		rt.QueryRules = append(rt.QueryRules, r.src)
	}
	for _, s := range p.view.Load().Servers {
		rt.Weights[s.Name] = Weights{Writer: s.WriterWeight, Reader: s.ReaderWeight}
	}
	p.galera.mu.Lock()
	for name, on := range p.galera.adminDrain {
		if on {
			rt.Drained = append(rt.Drained, name)
		}
	}
	p.galera.mu.Unlock()
	sort.Strings(rt.Drained)
	return rt
}

// ApplyRuntime makes rt the proxy's shared configuration, all of it or
// nothing: it is validated first. Sessions keep their user; new logins
// and statements see the new settings at once.
func (p *Proxy) ApplyRuntime(rt Runtime) error {
	if err := rt.Validate(); err != nil {
		return err
	}
	if err := p.SetRules(rt.QueryRules); err != nil {
		return err
	}
	old := *p.users.Load()
	users := make(map[string]*user, len(rt.Users))
	p.runtimeMu.Lock()
	prev := map[string]config.User{}
	for _, u := range p.runtimeUsers {
		prev[u.Name] = u
	}
	for _, u := range rt.Users {
		pu, had := prev[u.Name]
		pu.DefaultHostgroup = u.DefaultHostgroup
		if lu, ok := old[u.Name]; ok && had && sameUser(pu, u) {
			// Unchanged account: keep it (and its connection count).
			hg := u.DefaultHostgroup
			lu.defaultHostgroup.Store(&hg)
			users[u.Name] = lu
			continue
		}
		users[u.Name] = newUser(u)
	}
	p.runtimeUsers = slices.Clone(rt.Users)
	p.weights = map[string]Weights{}
	for name, w := range rt.Weights {
		p.weights[name] = w
	}
	p.failbackSetting, p.readerPolicySetting = rt.Failback, rt.WriterIsAlsoReader
	p.runtimeMu.Unlock()
	p.users.Store(&users)
	p.galera.mu.Lock()
	p.galera.failback = failbackOf(rt.Failback)
	p.galera.mu.Unlock()
	p.view.SetPolicy(nil, topology.ReaderPolicy(rt.WriterIsAlsoReader))
	if err := p.view.Update(func(s *topology.Server) error {
		if w, ok := rt.Weights[s.Name]; ok {
			s.WriterWeight, s.ReaderWeight = w.Writer, w.Reader
		}
		return nil
	}); err != nil {
		return err
	}
	drained := map[string]bool{}
	for _, n := range rt.Drained {
		drained[n] = true
	}
	p.galera.mu.Lock()
	var change []string
	for name, on := range p.galera.adminDrain {
		if on && !drained[name] {
			change = append(change, name)
		}
	}
	for name := range drained {
		if !p.galera.adminDrain[name] {
			change = append(change, name)
		}
	}
	p.galera.mu.Unlock()
	for _, name := range change {
		p.Drain(name, drained[name])
	}
	return nil
}

// sameUser says whether two accounts differ at most in their default
// hostgroup (which changes in place).
func sameUser(a, b config.User) bool {
	a.DefaultHostgroup, b.DefaultHostgroup = "", ""
	la, lb := a.LocalInfileAllowed(), b.LocalInfileAllowed()
	a.LocalInfile, b.LocalInfile = nil, nil
	return a == b && la == lb
}

// failbackOf turns the failback setting into the writer policy's form.
func failbackOf(setting string) galera.Failback {
	after, _ := config.ParseFailback(setting)
	switch {
	case after == 0:
		return galera.Failback{Mode: "immediate"}
	case after > 0:
		return galera.Failback{Mode: "after", After: after}
	}
	return galera.Failback{Mode: "never"}
}

// OnSharedChange sets f to be called after every change an operator makes
// through this proxy's admin interface; an error from f (the change
// could not be shared) is the statement's error. The control plane uses
// it to publish the change to every proxy.
func (p *Proxy) OnSharedChange(f func() error) {
	p.runtimeMu.Lock()
	p.shareChange = f
	p.runtimeMu.Unlock()
}

// shared hands an admin change to the control plane, if any.
func (p *Proxy) shared() error {
	p.runtimeMu.Lock()
	f := p.shareChange
	p.runtimeMu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}
