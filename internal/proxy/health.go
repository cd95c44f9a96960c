package proxy

import (
	"context"
	"errors"
	"net"
	"os"
	"time"
)

// pingVerdict is what one plain health check (connect if needed, then
// COM_PING, within pool.connect_timeout) says of a node.
type pingVerdict uint8

const (
	pingUp pingVerdict = iota
	// pingDown: the node failed the check; it is taken out.
	pingDown
	// pingAgain: the check ran out of time, but this proxy noticed it
	// late: it was not running itself (a host that stalled, a process
	// starved of CPU) for part of the wait, so the node may have
	// answered in time. The check says nothing of the node and is made
	// again at once.
	pingAgain
	// pingMissed: the node did not answer in time, and it has missed
	// fewer than pool.max_missed_checks checks in a row: it stays in,
	// and is checked again at once.
	pingMissed
)

// maxLateChecks bounds the checks in a row judged again for being
// noticed late: a proxy starved for good must still take out a node that
// does not answer.
const maxLateChecks = 3

// pingCheck is one plain health check's outcome and what came before it.
type pingCheck struct {
	err     error         // nil: the node answered
	late    time.Duration // how long after the check's deadline the proxy saw its timeout
	timeout time.Duration // the check's limit (pool.connect_timeout)
	// lateBefore and missedBefore are the checks in a row already judged
	// pingAgain and pingMissed; maxMissed is pool.max_missed_checks.
	lateBefore, missedBefore, maxMissed int
}

// judgePing decides a plain health check.
//
// A refused or broken connection takes the node out at once: it says the
// node failed whenever it is noticed. A check that ran out of time is
// weighed twice over:
//
//   - Noticed late, it is made again (pingAgain). Galera's own failure
//     detector skips a check when its thread ran late ("last inactive
//     check more than PT1.5S ago, skipping check"); this is the same rule
//     for the proxy's checks. On this project's 2-core VM the whole host
//     stalls now and then for over 3 s (node1's log at 06:13:00 on
//     2026-11-28: "last inactive check more than PT1.5S ago
//     (PT3.40421S)"); a ping sent just before such a stall timed out when
//     the proxy ran again, and one missed ping took two healthy nodes out
//     and moved the writer.
//   - Noticed on time, it is a miss; the node is out after
//     max_missed_checks misses in a row (as HAProxy's "fall" and the
//     Galera monitor's max_missed_checks). The node processes themselves
//     were seen not running for 2-3.4 s on an overloaded host
//     (bench/README, 2026-11-28), and one such pause took a node out.
func judgePing(c pingCheck) pingVerdict {
	switch {
	case c.err == nil:
		return pingUp
	case !isTimeout(c.err):
		return pingDown
	case c.late > stallSlack(c.timeout) && c.lateBefore < maxLateChecks:
		return pingAgain
	case c.missedBefore+1 < c.maxMissed:
		return pingMissed
	default:
		return pingDown
	}
}

// stallSlack is how late past its deadline a timeout may be noticed
// before the delay is taken for the proxy's own: a quarter of the check's
// limit, at least 250 ms (a loaded Go process notices a timer tens of
// milliseconds late, not hundreds).
func stallSlack(timeout time.Duration) time.Duration {
	return max(250*time.Millisecond, timeout/4)
}

// isTimeout reports a deadline that expired (dialing, logging in or
// waiting for the ping's answer), as opposed to a refused or broken
// connection, which says the node failed whenever it is noticed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
}
