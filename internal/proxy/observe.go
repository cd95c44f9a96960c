package proxy

import (
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/galera"
)

// This file is what operators watch during an incident: the monitor's
// latest check of every node and the log of routing changes (shown by
// package proxyadmin and in /metrics).

// GaleraChecks returns the monitor's latest check of every node, or
// nothing when the Galera monitor is off.
func (p *Proxy) GaleraChecks() []galera.Check {
	if p.galera.monitor == nil {
		return nil
	}
	return p.galera.monitor.Checks()
}

// Events returns the kept routing events, newest first.
func (p *Proxy) Events() []eventlog.Event { return p.events.List() }
