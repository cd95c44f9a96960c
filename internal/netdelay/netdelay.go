// Package netdelay adds latency to the packets the kernel hands it
// through an NFQUEUE: each packet is held for the current delay and then
// let through, in arrival order. It is how the multi-site sandbox puts a
// WAN between its sites on a kernel without the netem qdisc (this
// machine's), with iptables rules in each site's namespace sending the
// packets bound for other sites to the queue.
//
// The rules use --queue-bypass, so packets flow undelayed whenever no
// process holds the queue: a crashed delay process never cuts a link.
package netdelay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	nfqueue "github.com/florianl/go-nfqueue/v2"
)

// held is a packet waiting for its release time.
type held struct {
	id      uint32
	release time.Time
}

// Run binds NFQUEUE queue in the current network namespace and delays
// every packet by delay() (read as each packet arrives) until ctx ends.
// Packets beyond what can be held are let through at once. ready, if not
// nil, is called once the queue is bound: from then on packets wait.
func Run(ctx context.Context, queue uint16, delay func() time.Duration, ready func()) error {
	nf, err := nfqueue.Open(&nfqueue.Config{
		NfQueue: queue, MaxPacketLen: 0xFFFF, MaxQueueLen: 8192,
		Copymode: nfqueue.NfQnlCopyMeta, Flags: nfqueue.NfQaCfgFlagFailOpen, WriteTimeout: time.Second,
	})
	if err != nil {
		return fmt.Errorf("netdelay: bind queue %d: %w", queue, err)
	}
	defer nf.Close()
	waiting := make(chan held, 65536)
	var failed atomic.Value
	err = nf.RegisterWithErrorFunc(ctx, func(a nfqueue.Attribute) int {
		if a.PacketID == nil {
			return 0
		}
		select {
		case waiting <- held{id: *a.PacketID, release: time.Now().Add(delay())}:
		default:
			_ = nf.SetVerdict(*a.PacketID, nfqueue.NfAccept)
		}
		return 0
	}, func(e error) int {
		if ctx.Err() == nil && !errors.Is(e, os.ErrDeadlineExceeded) && !strings.Contains(e.Error(), "timeout") {
			failed.Store(e)
		}
		return 0
	})
	if err != nil {
		return fmt.Errorf("netdelay: register on queue %d: %w", queue, err)
	}
	if ready != nil {
		ready()
	}
	// One worker releases packets in the order they came: a TCP stream
	// is delayed, never reordered.
	for {
		select {
		case <-ctx.Done():
			return nil
		case p := <-waiting:
			if d := time.Until(p.release); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return nil
				}
			}
			if err := nf.SetVerdict(p.id, nfqueue.NfAccept); err != nil && ctx.Err() == nil {
				if e, _ := failed.Load().(error); e != nil {
					return fmt.Errorf("netdelay: queue %d: %w", queue, e)
				}
			}
		}
	}
}

// FileDelay returns a delay function that reads a duration ("15ms") from
// path, at most every 100 ms; a missing or unreadable file means none.
func FileDelay(path string) func() time.Duration {
	var cur atomic.Int64
	var last atomic.Int64
	return func() time.Duration {
		now := time.Now().UnixNano()
		if now-last.Load() > int64(100*time.Millisecond) {
			last.Store(now)
			d := time.Duration(0)
			if b, err := os.ReadFile(path); err == nil {
				d, _ = time.ParseDuration(strings.TrimSpace(string(b)))
			}
			cur.Store(int64(max(d, 0)))
		}
		return time.Duration(cur.Load())
	}
}
