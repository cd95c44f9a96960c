package proxy

import (
	"sync/atomic"

	"github.com/galeon-db/galeon/internal/eventlog"
)

// counters are the proxy's own outcomes worth alerting on: how often it
// hid a failure from clients and how often it could not.
type counters struct {
	// readRetries: autocommit reads retried on another node after their
	// node failed before any byte reached the client.
	readRetries atomic.Int64
	// wrapRetries: wrapped autocommit writes rolled back by a deadlock or
	// a brute-force abort and run again (as wsrep_retry_autocommit).
	wrapRetries atomic.Int64
	// notReadyRetries: statements a node refused with 1047 (WSREP not
	// ready) and galeon re-sent elsewhere.
	notReadyRetries atomic.Int64
	// abortedWriterChanged: transactions or statements ended with an
	// error (9002, or 9003 when they may have committed) because the
	// writer role moved.
	abortedWriterChanged atomic.Int64
	// backendLost: statements ended with an error (9003, or 9002 when
	// nothing can have committed) because their node's connection broke.
	backendLost atomic.Int64
	// writerChanges: completed writer switches.
	writerChanges atomic.Int64
	// degradedDecisions: writer changes made alone while the control
	// plane was unreachable.
	degradedDecisions atomic.Int64
	// causalReads: reads galeon made causal (wsrep_sync_wait) so that
	// their session read its own write (read-your-writes, ryw.go).
	causalReads atomic.Int64
	// replayed, replayFailed: transactions lost with the writer that
	// were replayed on the new one, or could not be (a different
	// answer, no writer); replayTooLarge: transactions that grew past
	// galera.transaction_replay_max_size.
	replayed, replayFailed, replayTooLarge atomic.Int64
}

// RecordConfigApplied records that a shared configuration was applied.
func (p *Proxy) RecordConfigApplied(detail string) { p.events.Add(eventlog.Config, "", detail) }

// RecordRecovery records what the controller sees or does about a cluster
// that lost every node.
func (p *Proxy) RecordRecovery(detail string) { p.events.Add(eventlog.Recovery, "", detail) }
