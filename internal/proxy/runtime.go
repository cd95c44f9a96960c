package proxy

import (
	"slices"
	"sort"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/topology"
)

// ExportRuntime returns the proxy's shared configuration as it is now.
func (p *Proxy) ExportRuntime() config.Runtime {
	p.runtimeMu.Lock()
	rt := config.Runtime{Users: slices.Clone(p.runtimeUsers), Weights: map[string]config.Weights{}}
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
		rt.Weights[s.Name] = config.Weights{Writer: s.WriterWeight, Reader: s.ReaderWeight}
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
func (p *Proxy) ApplyRuntime(rt config.Runtime) error {
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
	p.weights = map[string]config.Weights{}
	for name, w := range rt.Weights {
		p.weights[name] = w
	}
	p.failbackSetting, p.readerPolicySetting = rt.Failback, rt.WriterIsAlsoReader
	p.runtimeMu.Unlock()
	p.users.Store(&users)
	p.galera.mu.Lock()
	p.galera.failback = failbackOf(rt.Failback)
	p.galera.mu.Unlock()
	p.view.SetReaderPolicy(topology.ReaderPolicy(rt.WriterIsAlsoReader))
	if err := p.view.Update(func(s *topology.Server) error {
		if w, ok := rt.Weights[s.Name]; ok {
			s.WriterWeight, s.ReaderWeight = w.Writer, w.Reader
		}
		return nil
	}); err != nil {
		return err
	}
	p.reconsider()
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
