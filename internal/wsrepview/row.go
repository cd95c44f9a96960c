package wsrepview

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Row is what one node looked like over one interval.
type Row struct {
	Node  string    `json:"node"`
	Time  time.Time `json:"time"`
	Up    bool      `json:"up"`
	Error string    `json:"error,omitempty"`

	ClusterStatus string `json:"cluster_status,omitempty"` // Primary, non-Primary, Disconnected
	ConfID        int64  `json:"conf_id"`
	Size          int64  `json:"size"`
	LocalIndex    int64  `json:"local_index"`
	State         string `json:"state,omitempty"` // wsrep_local_state_comment

	OutMsgsPerSec  float64 `json:"out_msgs_per_sec"`
	OutBytesPerSec float64 `json:"out_bytes_per_sec"`
	SendQueue      int64   `json:"send_queue"`
	InMsgsPerSec   float64 `json:"in_msgs_per_sec"`
	InBytesPerSec  float64 `json:"in_bytes_per_sec"`
	RecvQueue      int64   `json:"recv_queue"`

	// FCPaused is the fraction of the interval replication was paused by
	// flow control; FCSent the flow-control messages this node sent.
	FCPaused float64 `json:"fc_paused"`
	FCSent   int64   `json:"fc_sent"`

	CertFailures int64 `json:"local_cert_failures"`
	BFAborts     int64 `json:"local_bf_aborts"`

	// ISTWindow is how many write-sets this node's gcache can still serve
	// by IST: last_committed - local_cached_downto.
	ISTWindow     int64 `json:"ist_window"`
	CertIndexSize int64 `json:"cert_index_size"`
	// ApplyEfficiency is wsrep_apply_oooe in percent: how often write-sets
	// were applied out of order, i.e. how well parallel apply works.
	ApplyEfficiency float64 `json:"apply_efficiency_pct"`
	// Rates is false on a first sample, which has nothing to diff against.
	Rates bool `json:"rates"`

	// Site is the node's data centre as the caller knows it; Segment its
	// gmcast.segment.
	Site    string `json:"site,omitempty"`
	Segment int64  `json:"segment"`
	// ReplLatency is wsrep_evs_repl_latency: how long the group takes to
	// agree on a message this node sends (average and maximum over the
	// provider's last report period), in seconds. Across sites it is the
	// round trip to the farthest member: what every commit waits.
	ReplLatencyAvg float64 `json:"repl_latency_avg_s"`
	ReplLatencyMax float64 `json:"repl_latency_max_s"`
	// Delayed is wsrep_evs_delayed: members this node sees answering
	// late (the first sign of a WAN link in trouble).
	Delayed string `json:"delayed,omitempty"`
}

// Compute turns a sample (and the previous one of the same node, if any,
// used for rates and deltas) into a Row.
func Compute(prev *Sample, cur Sample) Row {
	r := Row{Node: cur.Node, Time: cur.Time, Up: cur.Err == nil}
	if cur.Err != nil {
		r.Error = cur.Err.Error()
		return r
	}
	r.ClusterStatus = cur.Vars["wsrep_cluster_status"]
	r.ConfID = cur.int("wsrep_cluster_conf_id")
	r.Size = cur.int("wsrep_cluster_size")
	r.LocalIndex = cur.int("wsrep_local_index")
	r.State = cur.Vars["wsrep_local_state_comment"]
	r.SendQueue = cur.int("wsrep_local_send_queue")
	r.RecvQueue = cur.int("wsrep_local_recv_queue")
	if downto := cur.int("wsrep_local_cached_downto"); downto > 0 {
		r.ISTWindow = cur.int("wsrep_last_committed") - downto
	}
	r.CertIndexSize = cur.int("wsrep_cert_index_size")
	r.ApplyEfficiency = 100 * cur.float("wsrep_apply_oooe")
	r.Segment = cur.int("wsrep_gmcast_segment")
	r.ReplLatencyAvg, r.ReplLatencyMax = ReplLatency(cur.Vars["wsrep_evs_repl_latency"])
	r.Delayed = cur.Vars["wsrep_evs_delayed"]
	if prev == nil || prev.Err != nil {
		return r
	}
	dt := cur.Time.Sub(prev.Time).Seconds()
	if dt <= 0 {
		return r
	}
	delta := func(name string) int64 {
		d := cur.int(name) - prev.int(name)
		if d < 0 { // counters reset (FLUSH STATUS or a restart)
			return cur.int(name)
		}
		return d
	}
	r.Rates = true
	r.OutMsgsPerSec = float64(delta("wsrep_replicated")) / dt
	r.OutBytesPerSec = float64(delta("wsrep_replicated_bytes")) / dt
	r.InMsgsPerSec = float64(delta("wsrep_received")) / dt
	r.InBytesPerSec = float64(delta("wsrep_received_bytes")) / dt
	r.FCPaused = float64(delta("wsrep_flow_control_paused_ns")) / (dt * 1e9)
	r.FCSent = delta("wsrep_flow_control_sent")
	r.CertFailures = delta("wsrep_local_cert_failures")
	r.BFAborts = delta("wsrep_local_bf_aborts")
	return r
}

// ReplLatency reads wsrep_evs_repl_latency, "min/avg/max/stddev/samples"
// in seconds; no samples read as zero.
func ReplLatency(v string) (avg, maxLat float64) {
	f := strings.Split(v, "/")
	if len(f) != 5 {
		return 0, 0
	}
	avg, _ = strconv.ParseFloat(f[1], 64)
	maxLat, _ = strconv.ParseFloat(f[2], 64)
	return avg, maxLat
}

// SiteSummary is one site's nodes taken together, for a cluster spread
// over data centres.
type SiteSummary struct {
	Name    string `json:"site"`
	Segment int64  `json:"segment"`
	Nodes   int    `json:"nodes"`
	Primary int    `json:"primary"`
	// In/Out are the site's replication bytes per second, summed over its
	// nodes.
	InBytesPerSec  float64 `json:"in_bytes_per_sec"`
	OutBytesPerSec float64 `json:"out_bytes_per_sec"`
	// ReplLatencyMax is the largest average group latency a node of the
	// site reports (seconds).
	ReplLatencyMax float64  `json:"repl_latency_s"`
	Delayed        []string `json:"delayed,omitempty"`
	Rows           []int    `json:"-"` // indexes of its rows
}

// Sites groups rows by site (by gmcast.segment for nodes of no known
// site), in order of first appearance; it returns nil when every node is
// in one group.
func Sites(rows []Row) []SiteSummary {
	var out []SiteSummary
	idx := map[string]int{}
	for i, r := range rows {
		name := r.Site
		if name == "" {
			name = fmt.Sprintf("segment %d", r.Segment)
		}
		k, ok := idx[name]
		if !ok {
			k = len(out)
			idx[name] = k
			out = append(out, SiteSummary{Name: name, Segment: r.Segment})
		}
		s := &out[k]
		s.Rows = append(s.Rows, i)
		s.Nodes++
		if !r.Up {
			continue
		}
		if r.ClusterStatus == "Primary" {
			s.Primary++
		}
		s.InBytesPerSec += r.InBytesPerSec
		s.OutBytesPerSec += r.OutBytesPerSec
		s.ReplLatencyMax = max(s.ReplLatencyMax, r.ReplLatencyAvg)
		if r.Delayed != "" && !slices.Contains(s.Delayed, r.Delayed) {
			s.Delayed = append(s.Delayed, r.Delayed)
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// Line renders a site's summary above its nodes' lines.
func (s SiteSummary) Line() string {
	line := fmt.Sprintf("── %s (segment %d): %d of %d Primary · repl latency %.1f ms · in %sB/s out %sB/s",
		s.Name, s.Segment, s.Primary, s.Nodes, 1000*s.ReplLatencyMax, Human(s.InBytesPerSec), Human(s.OutBytesPerSec))
	if len(s.Delayed) > 0 {
		line += " · delayed: " + strings.Join(s.Delayed, "; ")
	}
	return line
}

// ShortState abbreviates wsrep_local_state_comment to fit a column:
// "Joining: receiving State Transfer" becomes "Join:SST-rx".
func ShortState(s string) string {
	switch {
	case s == "Synced", s == "Joined":
		return s
	case s == "Donor/Desynced":
		return "Donor"
	case strings.HasPrefix(s, "Joining: receiving"):
		return "Join:SST-rx"
	case strings.HasPrefix(s, "Joining: preparing"):
		return "Join:prep"
	case strings.HasPrefix(s, "Joining: waiting"):
		return "Join:wait"
	case strings.HasPrefix(s, "Joining"):
		return "Joining"
	case s == "Initialized":
		return "Init"
	}
	if len(s) > 11 {
		return s[:11]
	}
	return s
}

// Header is the two-line column header of the text view.
func Header() string {
	return fmt.Sprintf("%-8s %-16s %1s %4s %2s %3s %-11s | %6s %7s %3s | %6s %7s %4s | %5s %3s | %3s %3s | %7s %5s %4s\n",
		"", "", "", "", "", "", "", "Outbnd", "", "", "Inbnd", "", "", "FlowC", "", "Cnf", "", "Gcache", "Cert", "Appl") +
		fmt.Sprintf("%-8s %-16s %1s %4s %2s %3s %-11s | %6s %7s %3s | %6s %7s %4s | %5s %3s | %3s %3s | %7s %5s %4s",
			"time", "node", "P", "cnf", "#", "idx", "state", "msg/s", "B/s", "que", "msg/s", "B/s", "que", "pause", "snt", "lcf", "bfa", "ist", "idx", "%ef")
}

// Line renders r as one line of the text view.
func (r Row) Line() string {
	ts := r.Time.Format("15:04:05")
	if !r.Up {
		return fmt.Sprintf("%-8s %-16s DOWN  %s", ts, trunc(r.Node, 16), r.Error)
	}
	rate := func(v float64) string {
		if !r.Rates {
			return "-"
		}
		return Human(v)
	}
	small := func(v int64) string {
		if !r.Rates {
			return "-"
		}
		return fmt.Sprint(v)
	}
	pause := "-"
	if r.Rates {
		pause = fmt.Sprintf("%.2f", r.FCPaused)
	}
	p := "?"
	switch r.ClusterStatus {
	case "Primary":
		p = "P"
	case "non-Primary", "Non-Primary":
		p = "N"
	case "Disconnected":
		p = "D"
	}
	return fmt.Sprintf("%-8s %-16s %1s %4d %2d %3d %-11s | %6s %7s %3d | %6s %7s %4d | %5s %3s | %3s %3s | %7s %5s %4.0f",
		ts, trunc(r.Node, 16), p, r.ConfID, r.Size, r.LocalIndex, ShortState(r.State),
		rate(r.OutMsgsPerSec), rate(r.OutBytesPerSec), r.SendQueue,
		rate(r.InMsgsPerSec), rate(r.InBytesPerSec), r.RecvQueue,
		pause, small(r.FCSent), small(r.CertFailures), small(r.BFAborts),
		Human(float64(r.ISTWindow)), Human(float64(r.CertIndexSize)), r.ApplyEfficiency)
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Human prints a number in at most 5 characters: 950, 12.3K, 4.5M.
func Human(v float64) string {
	switch {
	case v < 1000:
		if v == float64(int64(v)) {
			return fmt.Sprintf("%d", int64(v))
		}
		return fmt.Sprintf("%.1f", v)
	case v < 1e6:
		return fmt.Sprintf("%.1fK", v/1e3)
	case v < 1e9:
		return fmt.Sprintf("%.1fM", v/1e6)
	}
	return fmt.Sprintf("%.1fG", v/1e9)
}
