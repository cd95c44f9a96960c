// Package assemble is galeon's composition root: it builds a running
// proxy from a configuration, in one order — the control-plane store and
// the cluster's shared configuration (when discovery is on), the proxy,
// its admin interface and metrics, and its link to the control plane —
// and stops it in the reverse order. The CLI (`galeon proxy`) and every
// test harness that runs a proxy use it, so tests run what users run.
package assemble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/adminops"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/metrics"
	"github.com/galeon-db/galeon/internal/nodesync"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/proxyadmin"
	"github.com/galeon-db/galeon/internal/sharedconfig"
)

// Options say what to assemble.
type Options struct {
	// Config is the proxy's configuration (shared settings are merged
	// into it when it joins a control plane). Where it names a file,
	// ConfigPath says which, for messages.
	Config     *config.Config
	ConfigPath string
	// Log receives every component's log (nil: discarded).
	Log *slog.Logger
	// Listener, if set, is where clients connect (tests listen on port
	// 0); otherwise Config.Proxy.Listen.
	Listener net.Listener
	// Admin serves the admin SQL and HTTP endpoints (Config.Admin).
	Admin bool
	// Store, if set, is the control plane to join, already open (the
	// caller closes it); otherwise Config.Discovery is opened when
	// enabled. Key then seals the shared configuration's secrets
	// (otherwise discovery.secret_key_file is loaded or created).
	Store *discovery.Store
	Key   *sharedconfig.Key
	// CloseStore hands Store to the proxy: Stop and Halt close it (as
	// they close a store they opened themselves).
	CloseStore bool
	// DataPlaneOnly leaves the control plane out even when Config names
	// one: the caller links the proxy to it (tests of one control-plane
	// piece, such as nodesync.Follow alone).
	DataPlaneOnly bool
	// Name is the proxy's name in the control plane (default: from the
	// configuration, see config.Discovery.Name).
	Name string
}

// Proxy is an assembled, running proxy.
type Proxy struct {
	Proxy *proxy.Proxy
	// Addr is the client (MySQL protocol) address.
	Addr string
	// Admin is the admin interface, when served.
	Admin *admin.Server
	// Store is the control plane joined, if any; Name the proxy's name
	// there.
	Store *discovery.Store
	Name  string

	log       *slog.Logger
	ops       *adminops.Runner
	ownsStore bool
	// embedded: the store this proxy closes runs etcd inside it.
	embedded bool
	errs     chan error
	stopData context.CancelFunc
	stopLink context.CancelFunc
	dataDone sync.WaitGroup
	linkDone chan struct{}
	once     sync.Once
}

// Start assembles the proxy and starts serving. An error leaves nothing
// running.
func Start(ctx context.Context, o Options) (_ *Proxy, err error) {
	cfg := o.Config
	log := o.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a := &Proxy{log: log, errs: make(chan error, 3), linkDone: make(chan struct{}), Name: o.Name}
	if a.Name == "" {
		a.Name = cfg.Discovery.Name(cfg.Proxy.Listen)
	}
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()

	// 1. The control plane and the shared configuration, before the
	// proxy: a proxy whose file has little more than the discovery
	// endpoint takes its users and rules from there.
	var shared *sharedconfig.Sync
	a.Store, a.ownsStore = o.Store, o.Store != nil && o.CloseStore
	if a.Store == nil && cfg.Discovery.Enabled() && !o.DataPlaneOnly {
		if a.Store, err = discovery.Open(ctx, discovery.FromSettings(cfg.Discovery), log); err != nil {
			return nil, err
		}
		a.ownsStore, a.embedded = true, cfg.Discovery.Endpoints == config.EmbeddedEndpoints
		undo = append(undo, func() { a.Store.Close() })
	}
	if a.Store != nil {
		key := o.Key
		if key == nil {
			k, created, err := sharedconfig.LoadOrCreateKey(cfg.Discovery.SecretKeyFile)
			if err != nil {
				return nil, err
			}
			if created {
				log.Info("generated the key that seals passwords in the shared configuration; give every proxy of the cluster a copy", "file", cfg.Discovery.SecretKeyFile)
			}
			key = &k
		}
		if shared, err = sharedconfig.Bootstrap(ctx, a.Store, cfg, *key, a.Name, log); err != nil {
			return nil, err
		}
		if probs := cfg.RequireAfterShared(); len(probs) > 0 {
			return nil, fmt.Errorf("%s: %s", orDefault(o.ConfigPath, "configuration"), strings.Join(probs, "; "))
		}
	}
	if probs := cfg.Validate(); len(probs) > 0 {
		return nil, fmt.Errorf("%s: %s", orDefault(o.ConfigPath, "configuration"), strings.Join(probs, "; "))
	}

	// 2. The data plane.
	if a.Proxy, err = proxy.New(cfg, log); err != nil {
		return nil, err
	}
	ln := o.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Proxy.Listen); err != nil {
			return nil, fmt.Errorf("proxy.listen %s: %w", cfg.Proxy.Listen, err)
		}
	}
	undo = append(undo, func() { ln.Close() })
	a.Addr = ln.Addr().String()

	// 3. The admin interface and metrics, listening before anything
	// serves: a port in use fails the start at once.
	if o.Admin && (cfg.Admin.Listen != "" || cfg.Admin.HTTPListen != "") {
		reg, err := metrics.NewRegistry(proxyadmin.Collectors(a.Proxy)...)
		if err != nil {
			return nil, err
		}
		// Operations started from the admin interface need the control
		// plane and an account on the nodes.
		var ops proxyadmin.Operations
		if a.Store != nil && cfg.Operations.NodeUser != "" {
			pw := cfg.Operations.NodePassword
			if pw == "" {
				pw = os.Getenv("GALEON_NODE_PASSWORD")
			}
			a.ops = adminops.New(a.Store, cfg.Operations.NodeUser, pw, a.Name+" (admin)", log)
			undo = append(undo, a.ops.Close)
			ops = a.ops
		}
		a.Admin = admin.NewServer(admin.Config{
			SQLListen: cfg.Admin.Listen, HTTPListen: cfg.Admin.HTTPListen,
			User: cfg.Admin.User, Password: cfg.Admin.Password, Logger: log,
		}, proxyadmin.Tables(a.Proxy, ops), metrics.Handler(reg, log))
		if err := a.Admin.Listen(); err != nil {
			return nil, err
		}
	}

	// Serving starts here; from now on Stop ends it.
	dctx, stopData := context.WithCancel(context.Background())
	a.stopData = stopData
	a.dataDone.Add(1)
	go func() {
		defer a.dataDone.Done()
		a.errs <- a.Proxy.ServeListener(dctx, ln)
	}()
	if a.Admin != nil {
		a.dataDone.Add(1)
		go func() {
			defer a.dataDone.Done()
			a.errs <- a.Admin.Serve(dctx)
		}()
	}

	// 4. The link to the control plane: nodes, decisions, the proxy's
	// record, shared configuration, the controller election.
	lctx, stopLink := context.WithCancel(context.Background())
	a.stopLink = stopLink
	if a.Store == nil {
		close(a.linkDone)
		return a, nil
	}
	go func() {
		defer close(a.linkDone)
		nodesync.Run(lctx, a.Store, a.Proxy, nodesync.Options{Name: a.Name, MySQL: a.Addr, Admin: cfg.Admin.Listen,
			FenceTimeout: cfg.Galera.DrainGrace.D() + time.Second, Shared: shared}, log)
	}()
	log.Info("joined the control plane", "proxy", a.Name, "endpoints", strings.Join(a.Store.Endpoints, ","), "cluster", cfg.Discovery.Cluster)
	return a, nil
}

// Wait returns when ctx ends (nil) or a serving part fails (its error);
// either way the caller then stops the proxy.
func (a *Proxy) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-a.errs:
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
}

// Stop ends the proxy cleanly: it leaves the control plane first
// (resigning the controller role, removing its record), then stops
// serving clients and waits for every goroutine, then closes the store
// (stopping the embedded etcd, if this proxy hosts it).
func (a *Proxy) Stop() {
	a.once.Do(func() { a.stop(nil) })
}

// StopWithin is Stop bounded by d, for a process that exits next (the
// CLI on SIGTERM): if the stop is not over after d it logs the step it
// is still in and returns false, leaving that step to finish in the
// background. The step that takes long is the embedded etcd's: it waits
// up to etcd's request timeout (7 s) for the open streams of other
// proxies and agents, which never end on their own. etcd's log is
// written synchronously (fsync per entry), so a process that exits
// there loses nothing.
func (a *Proxy) StopWithin(d time.Duration) bool {
	var step atomic.Pointer[string]
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.once.Do(func() { a.stop(&step) })
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		what := "stop"
		if s := step.Load(); s != nil {
			what = *s
		}
		if what == stepStopEtcd {
			// The usual case when other proxies or agents use this
			// etcd: their streams would hold it for 7 s.
			a.log.Info("shutdown deadline passed while the embedded etcd waits for its clients' streams: exiting without waiting (etcd's log is synced)", "deadline", d)
		} else {
			a.log.Warn("shutdown deadline passed: exiting without waiting for the rest", "deadline", d, "still_running", what)
		}
		return false
	}
}

// stepStopEtcd is the step of stop that stops the embedded etcd.
const stepStopEtcd = "stop_embedded_etcd"

// stop runs the steps of Stop in order, naming the current one in step
// (if set) and logging how long each took.
func (a *Proxy) stop(step *atomic.Pointer[string]) {
	var took []any
	run := func(name string, f func()) {
		if step != nil {
			step.Store(&name)
		}
		t := time.Now()
		f()
		took = append(took, name, time.Since(t).Round(time.Microsecond))
	}
	begin := time.Now()
	if a.ops != nil {
		// An operation this proxy runs stops where it is, recorded as
		// stopped (resumable from anywhere), while etcd is still there.
		run("stop_operation", a.ops.Close)
	}
	run("leave_control_plane", func() {
		a.stopLink()
		<-a.linkDone
	})
	run("close_clients", func() {
		a.stopData()
		a.dataDone.Wait()
	})
	if a.ownsStore {
		name := "close_etcd_client"
		if a.embedded {
			name = stepStopEtcd
		}
		run(name, func() { a.Store.Close() })
	}
	a.log.Info("proxy stopped", append([]any{"total", time.Since(begin).Round(time.Microsecond)}, took...)...)
}

// Halt ends the proxy as a crash would, as seen by its clients: they are
// cut off first, then the control-plane link ends, its store closed
// first (a link that cannot reach etcd does not wait out its timeouts).
// Tests that kill a proxy sever its etcd link before, so that it cannot
// resign.
func (a *Proxy) Halt() {
	a.once.Do(func() {
		a.stopData()
		a.dataDone.Wait()
		if a.ops != nil {
			a.ops.Close()
		}
		a.stopLink()
		if a.ownsStore {
			a.Store.Close()
		}
		<-a.linkDone
	})
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
