package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestJudgePing(t *testing.T) {
	readTimeout := &net.OpError{Op: "raw-read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	dialTimeout := &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("wrapped: %w", context.DeadlineExceeded)}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	handshake := fmt.Errorf("read handshake: %w", readTimeout)
	// What dialing really returns when the check's time is up, and when
	// the proxy shuts down.
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, realDialTimeout := (&net.Dialer{}).DialContext(expired, "tcp", "127.0.0.1:1")
	stopped, stop := context.WithCancel(context.Background())
	stop()
	_, realDialCancelled := (&net.Dialer{}).DialContext(stopped, "tcp", "127.0.0.1:1")
	const s = time.Second
	for _, c := range []struct {
		name       string
		err        error
		late       time.Duration
		timeout    time.Duration
		lateBefore int
		want       pingVerdict
	}{
		{"answered", nil, 0, 2 * s, 0, pingUp},
		{"answered after late checks", nil, 0, 2 * s, 3, pingUp},
		{"no answer, noticed on time", readTimeout, 20 * time.Millisecond, 2 * s, 0, pingDown},
		{"no answer, noticed at the slack", readTimeout, 500 * time.Millisecond, 2 * s, 0, pingDown},
		{"no answer, noticed after a stall", readTimeout, 2400 * time.Millisecond, 2 * s, 0, pingAgain},
		{"no greeting, noticed after a stall", handshake, 2 * s, 2 * s, 1, pingAgain},
		{"dial timed out after a stall", dialTimeout, 3 * s, 2 * s, 2, pingAgain},
		{"a real dial out of time, after a stall", realDialTimeout, 3 * s, 2 * s, 0, pingAgain},
		{"a real dial out of time, on time", realDialTimeout, 0, 2 * s, 0, pingDown},
		{"a dial cancelled is no timeout", realDialCancelled, 3 * s, 2 * s, 0, pingDown},
		{"late again and again: the node is out", readTimeout, 3 * s, 2 * s, maxLateChecks, pingDown},
		{"short timeout: slack is at least 250 ms", readTimeout, 200 * time.Millisecond, 200 * time.Millisecond, 0, pingDown},
		{"short timeout, stalled", readTimeout, 300 * time.Millisecond, 200 * time.Millisecond, 0, pingAgain},
		{"refused however late", refused, 5 * s, 2 * s, 0, pingDown},
		{"connection closed however late", io.EOF, 5 * s, 2 * s, 0, pingDown},
		{"server error however late", errors.New("1040 too many connections"), 5 * s, 2 * s, 0, pingDown},
	} {
		// One miss is all it takes here: the rule for late checks alone.
		if got := judgePing(pingCheck{err: c.err, late: c.late, timeout: c.timeout, lateBefore: c.lateBefore, maxMissed: 1}); got != c.want {
			t.Errorf("%s: judgePing = %d, want %d", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name         string
		err          error
		late         time.Duration
		lateBefore   int
		missedBefore int
		maxMissed    int
		want         pingVerdict
	}{
		{"first miss of two", readTimeout, 0, 0, 0, 2, pingMissed},
		{"second miss of two: out", readTimeout, 0, 0, 1, 2, pingDown},
		{"a dial out of time is a miss too", realDialTimeout, 0, 0, 0, 2, pingMissed},
		{"no greeting is a miss too", handshake, 0, 0, 0, 2, pingMissed},
		{"second miss of three", readTimeout, 0, 0, 1, 3, pingMissed},
		{"third miss of three: out", readTimeout, 0, 0, 2, 3, pingDown},
		{"answered after a miss", nil, 0, 0, 1, 2, pingUp},
		{"refused after a miss: out", refused, 0, 0, 1, 3, pingDown},
		{"refused is out without a miss first", refused, 0, 0, 0, 3, pingDown},
		{"closed is out without a miss first", io.EOF, 0, 0, 0, 3, pingDown},
		{"late after a miss: again, not a second miss", readTimeout, 3 * s, 0, 1, 2, pingAgain},
		{"late too often after a miss: a miss", readTimeout, 3 * s, maxLateChecks, 0, 2, pingMissed},
		{"late too often, misses used up: out", readTimeout, 3 * s, maxLateChecks, 1, 2, pingDown},
		{"max_missed_checks 0 is taken as 1", readTimeout, 0, 0, 0, 0, pingDown},
	} {
		if got := judgePing(pingCheck{err: c.err, late: c.late, timeout: 2 * s, lateBefore: c.lateBefore, missedBefore: c.missedBefore, maxMissed: c.maxMissed}); got != c.want {
			t.Errorf("%s: judgePing = %d, want %d", c.name, got, c.want)
		}
	}
}
