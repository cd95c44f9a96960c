package quorum

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/galera"
)

// RTT is one measured round trip: between sites From and To, or, when
// To is "", from From to the farthest member (Galera's own replication
// latency as the nodes of From report it). Err says the measurement
// failed (a cut link).
type RTT struct {
	From, To string
	RTT      time.Duration
	Err      string
}

func (m RTT) String() string {
	if m.To == "" {
		return "replication latency in " + m.From
	}
	return m.From + "-" + m.To
}

// WANThreshold is the round trip above which links between sites are
// treated as a WAN: LAN failure detection (a node suspected after 5 s,
// 2 s in the sandbox) then evicts nodes on every spike of a second or
// two, which such links have.
const WANThreshold = 5 * time.Millisecond

// LANSuspectTimeout is Galera's default evs.suspect_timeout: what a
// cluster runs unless told otherwise, and what the plan's LAN advice
// means. The sandbox runs PT2S (tuned for one machine, see
// docs/sandbox.md); the WAN profile PT30S.
const LANSuspectTimeout = "PT5S"

// Running is what the measured nodes run, as far as it is known.
type Running struct {
	// SuspectTimeout is their evs.suspect_timeout ("" unknown).
	SuspectTimeout string
	// Why, if set, says where that value comes from ("the sandbox's
	// loopback tuning").
	Why string
}

// Measured adds what the round trips between sites say to the report:
// whether the WAN profile is needed, what every commit will wait, and
// which links are down. It replaces the general WAN advice Plan gives
// before anything is measured. run is what the nodes run: the advice says
// how it compares with what it advises.
func (r *Report) Measured(rtts []RTT, run Running) {
	if len(rtts) == 0 {
		return
	}
	r.RTTs = rtts
	var worst RTT
	var parts []string
	for _, m := range rtts {
		if m.Err != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s could not be measured (%s): is the link cut?", m, m.Err))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.1f ms", m, float64(m.RTT.Microseconds())/1000))
		if m.RTT > worst.RTT {
			worst = m
		}
	}
	if len(parts) == 0 {
		return // nothing measured: the general advice stands
	}
	r.Advice = slices.DeleteFunc(r.Advice, func(s string) bool { return strings.HasPrefix(s, wanAdvice) })
	ms := float64(worst.RTT.Microseconds()) / 1000
	suspect, why := run.SuspectTimeout, ""
	if run.Why != "" {
		why = ", " + run.Why
	}
	if worst.RTT >= WANThreshold {
		running := ""
		switch {
		case suspect == wanSuspect:
			running = " (the nodes run evs.suspect_timeout " + wanSuspect + " already)"
		case suspect != "":
			running = fmt.Sprintf(" (the nodes run evs.suspect_timeout %s now%s)", suspect, why)
		}
		r.Advice = append(r.Advice, fmt.Sprintf("%s%s; measured %s: every commit waits at least %.0f ms (one round trip to the farthest site)",
			wanAdvice, running, strings.Join(parts, ", "), ms))
		return
	}
	running := "Galera's default, evs.suspect_timeout " + LANSuspectTimeout
	switch {
	case suspect == LANSuspectTimeout:
		running += ", which the nodes run"
	case suspect == wanSuspect:
		running += "; the nodes run " + suspect + ", the WAN profile's"
	case suspect != "":
		running += fmt.Sprintf("; the nodes run %s%s", suspect, why)
	}
	r.Advice = append(r.Advice, fmt.Sprintf("measured %s: the sites are close (under %s), so LAN failure detection fits (%s); the WAN profile would only make a lost site slower to exclude",
		strings.Join(parts, ", "), WANThreshold, running))
}

// wanSuspect is the WAN profile's evs.suspect_timeout.
var wanSuspect = galera.WANProfile()["evs.suspect_timeout"]

// Horizon adds what the cluster's gcaches mean for a site that goes
// away: a node rejoins by IST (only the write-sets it missed) while its
// donor's gcache still holds them, and by SST (a full copy, across the
// WAN) after. horizon is how long the smallest gcache covers at the
// measured commit rate (node names it); rate 0 means no writes were seen.
func (r *Report) Horizon(node string, horizon time.Duration, rate float64) {
	if rate <= 0 || node == "" {
		r.Advice = append(r.Advice, "no commits (or no gcache bounds) while measuring: how long a site can be away and still rejoin by IST (gcache.size) is unknown; run galeon plan under normal load")
		return
	}
	r.Advice = append(r.Advice, fmt.Sprintf("at %.1f commits/s, the smallest gcache (%s) holds %s of writes: a site away longer rejoins by SST, a full copy across the WAN; size gcache.size for the longest site outage to ride out (gcache grows with write bytes per second × that outage)",
		rate, node, horizon.Round(time.Second)))
}
