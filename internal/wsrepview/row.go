package wsrepview

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/galera"
)

// Row is what one node looked like over one interval.
type Row struct {
	Node  string    `json:"node"`
	Time  time.Time `json:"time"`
	Up    bool      `json:"up"`
	Error string    `json:"error,omitempty"`

	ClusterStatus string `json:"cluster_status,omitempty"` // Primary, non-Primary, Disconnected
	// DurabilityRisk says how the node's settings let a crash of every
	// node lose acknowledged commits ("" if they do not).
	DurabilityRisk string `json:"durability_risk,omitempty"`
	// ConfID is wsrep_cluster_conf_id in a Primary component, -1 outside
	// one (Galera then reports 2^64-1: there is no configuration).
	ConfID     int64  `json:"conf_id"`
	Size       int64  `json:"size"`
	LocalIndex int64  `json:"local_index"`
	State      string `json:"state,omitempty"` // wsrep_local_state_comment

	// Out and In are replication traffic, as Galera counts it: the
	// write-sets this node replicated (wsrep_replicated, _bytes) and
	// those it received from the group (wsrep_received, _bytes) — not
	// bytes on the wire, which a multi-site sandbox counts per link.
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
	// provider's current statistics window), in seconds. Across sites it
	// is the round trip to the farthest member: what every commit waits.
	// The window is empty (0 samples) after the provider starts a new
	// one and until this node sends again: the row then keeps the last
	// value measured, and ReplLatencyAt says when (nil: never measured;
	// the values are then 0 and mean nothing).
	ReplLatencyAvg float64    `json:"repl_latency_avg_s"`
	ReplLatencyMax float64    `json:"repl_latency_max_s"`
	ReplLatencyAt  *time.Time `json:"repl_latency_at,omitempty"`
	// Members are wsrep_incoming_addresses' entries (one per member of
	// the component; an arbitrator has no address: ""), and Arbitrators
	// how many have none, when the list is complete (as many entries as
	// the cluster size), else -1.
	Members     []string `json:"members,omitempty"`
	Arbitrators int      `json:"arbitrators"`
	// Delayed is wsrep_evs_delayed: members this node sees answering
	// late (the first sign of a WAN link in trouble).
	Delayed string `json:"delayed,omitempty"`
}

// Compute turns a sample (and the previous one of the same node, if any,
// used for rates and deltas) into a Row.
func Compute(prev *Sample, cur Sample) Row {
	r := Row{Node: cur.Node, Time: cur.Time, Up: cur.Err == nil, ConfID: -1, Arbitrators: -1}
	if cur.Err != nil {
		r.Error = cur.Err.Error()
		return r
	}
	r.ClusterStatus = cur.Vars["wsrep_cluster_status"]
	r.ConfID = ConfID(r.ClusterStatus, cur.Vars["wsrep_cluster_conf_id"])
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
	if avg, mx, n := ParseReplLatency(cur.Vars["wsrep_evs_repl_latency"]); n > 0 {
		at := cur.Time
		r.ReplLatencyAvg, r.ReplLatencyMax, r.ReplLatencyAt = avg, mx, &at
	}
	r.Delayed = cur.Vars["wsrep_evs_delayed"]
	r.Members, r.Arbitrators = Arbitrators(cur.Vars["wsrep_incoming_addresses"], r.Size)
	r.DurabilityRisk = galera.DurabilityRisk(cur.Vars)
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
// in seconds; no samples read as zero (ParseReplLatency tells them
// apart).
func ReplLatency(v string) (avg, maxLat float64) {
	avg, maxLat, _ = ParseReplLatency(v)
	return avg, maxLat
}

// ParseReplLatency reads wsrep_evs_repl_latency,
// "min/avg/max/stddev/samples" in seconds, and the number of samples
// behind it: 0 means the provider's window holds no measurement (a new
// window, and nothing sent since), not a latency of 0.
func ParseReplLatency(v string) (avg, maxLat float64, samples int64) {
	f := strings.Split(v, "/")
	if len(f) != 5 {
		return 0, 0, 0
	}
	samples, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil || samples <= 0 {
		return 0, 0, 0
	}
	avg, _ = strconv.ParseFloat(f[1], 64)
	maxLat, _ = strconv.ParseFloat(f[2], 64)
	return avg, maxLat, samples
}

// CarryLatency keeps the last measured replication latency in r when r's
// sample had none: last is the node's previous row (nil: none).
func CarryLatency(r Row, last *Row) Row {
	if r.ReplLatencyAt == nil && r.Up && last != nil && last.ReplLatencyAt != nil {
		r.ReplLatencyAvg, r.ReplLatencyMax, r.ReplLatencyAt = last.ReplLatencyAvg, last.ReplLatencyMax, last.ReplLatencyAt
	}
	return r
}

// ConfID reads wsrep_cluster_conf_id: -1 outside a Primary component,
// where Galera reports 18446744073709551615 (no configuration), which
// does not fit an int64.
func ConfID(status, v string) int64 {
	if status != "Primary" {
		return -1
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 0 {
		return -1
	}
	return id
}

// Arbitrators splits wsrep_incoming_addresses into the component's
// members and counts those without an address: arbitrators (garbd
// serves no clients). The count is -1 when the list is not complete
// (fewer or more entries than size: a view being installed).
func Arbitrators(incoming string, size int64) ([]string, int) {
	if incoming == "" {
		return nil, -1
	}
	members := strings.Split(incoming, ",")
	if int64(len(members)) != size {
		return members, -1
	}
	n := 0
	for i, m := range members {
		members[i] = strings.TrimSpace(m)
		if members[i] == "" {
			n++
		}
	}
	return members, n
}

// SiteSummary is one site's members taken together, for a cluster
// spread over data centres.
type SiteSummary struct {
	Name    string `json:"site"`
	Segment int64  `json:"segment"`
	Nodes   int    `json:"nodes"` // data nodes
	// Arbitrators are the site's arbitrators (garbd), when known by name
	// (a sandbox); they count in Primary like the nodes.
	Arbitrators int `json:"arbitrators"`
	Primary     int `json:"primary"`
	// ReplicatedBytesPerSec and ReceivedBytesPerSec are the site's
	// write-set traffic as Galera counts it (wsrep_replicated_bytes,
	// wsrep_received_bytes), summed over its nodes; what crosses the WAN
	// is the links' wire traffic, counted apart.
	ReplicatedBytesPerSec float64 `json:"replicated_bytes_per_sec"`
	ReceivedBytesPerSec   float64 `json:"received_bytes_per_sec"`
	// ReplLatency is the largest average group latency a node of the
	// site last measured (seconds), ReplLatencyAt when (nil: none
	// measured yet).
	ReplLatency   *float64   `json:"repl_latency_s"`
	ReplLatencyAt *time.Time `json:"repl_latency_at,omitempty"`
	Delayed       []string   `json:"delayed,omitempty"`
	Rows          []int      `json:"-"` // indexes of its rows
	ArbRows       []int      `json:"-"` // indexes of its arbitrators' rows
	at            time.Time  // the rows' time
}

// Sites groups rows (and the arbitrators known by name) by site (by
// gmcast.segment for members of no known site), in order of first
// appearance; it returns nil when every member is in one group.
func Sites(rows []Row, arbs []ArbitratorRow) []SiteSummary {
	var out []SiteSummary
	idx := map[string]int{}
	group := func(site string, seg int64) *SiteSummary {
		name := site
		if name == "" {
			name = fmt.Sprintf("segment %d", seg)
		}
		k, ok := idx[name]
		if !ok {
			k = len(out)
			idx[name] = k
			out = append(out, SiteSummary{Name: name, Segment: seg})
		}
		return &out[k]
	}
	for i, r := range rows {
		s := group(r.Site, r.Segment)
		s.Rows = append(s.Rows, i)
		s.Nodes++
		s.at = r.Time
		if !r.Up {
			continue
		}
		if r.ClusterStatus == "Primary" {
			s.Primary++
		}
		s.ReceivedBytesPerSec += r.InBytesPerSec
		s.ReplicatedBytesPerSec += r.OutBytesPerSec
		if r.ReplLatencyAt != nil && (s.ReplLatency == nil || r.ReplLatencyAvg > *s.ReplLatency) {
			v := r.ReplLatencyAvg
			s.ReplLatency, s.ReplLatencyAt = &v, r.ReplLatencyAt
		}
		if r.Delayed != "" && !slices.Contains(s.Delayed, r.Delayed) {
			s.Delayed = append(s.Delayed, r.Delayed)
		}
	}
	for i, a := range arbs {
		s := group(a.Site, a.Segment)
		s.ArbRows = append(s.ArbRows, i)
		s.Arbitrators++
		if a.ClusterStatus == "Primary" {
			s.Primary++
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// Line renders a site's summary above its members' lines.
func (s SiteSummary) Line() string {
	members := fmt.Sprintf("%d of %d Primary", s.Primary, s.Nodes+s.Arbitrators)
	switch {
	case s.Nodes == 0:
		members = fmt.Sprintf("arbitrator only, %d of %d Primary", s.Primary, s.Arbitrators)
	case s.Arbitrators > 0:
		members += fmt.Sprintf(" (%d arbitrator)", s.Arbitrators)
	}
	name := fmt.Sprintf("%s (segment %d)", s.Name, s.Segment)
	if s.Name == fmt.Sprintf("segment %d", s.Segment) {
		name = s.Name // grouped by segment: no site name to add it to
	}
	line := fmt.Sprintf("── %s: %s", name, members)
	if s.Nodes == 0 {
		return line
	}
	line += " · repl latency " + latencyText(s.ReplLatency, s.ReplLatencyAt, s.at) +
		fmt.Sprintf(" · write-sets replicated %sB/s received %sB/s", Human(s.ReplicatedBytesPerSec), Human(s.ReceivedBytesPerSec))
	if len(s.Delayed) > 0 {
		line += " · delayed: " + strings.Join(s.Delayed, "; ")
	}
	return line
}

// latencyText is a latency in ms with its age when it is not from now:
// "40.1 ms", "40.1 ms, 12s ago", or "-" when none was ever measured.
func latencyText(v *float64, at *time.Time, now time.Time) string {
	if v == nil || at == nil {
		return "-"
	}
	ms := 1000 * *v
	t := fmt.Sprintf("%.1f ms", ms)
	if ms < 0.1 {
		// A lone member (a cut-off site) delivers to itself in µs: a
		// true figure, not a 0.
		t = fmt.Sprintf("%.3f ms", ms)
	}
	if age := now.Sub(*at); age >= time.Second {
		t += fmt.Sprintf(", %s ago", age.Round(time.Second))
	}
	return t
}

// ArbitratorRow is an arbitrator (garbd) as a sandbox knows it: it has
// no SQL, so its state is its process and the last component it logged.
type ArbitratorRow struct {
	Name          string    `json:"name"`
	Time          time.Time `json:"time"`
	Site          string    `json:"site,omitempty"`
	Segment       int64     `json:"segment"`
	Address       string    `json:"address"`
	Process       string    `json:"process"`                  // running, paused, stopped
	ClusterStatus string    `json:"cluster_status,omitempty"` // Primary, non-Primary: the last component it logged
	Size          int64     `json:"size,omitempty"`
}

// Line renders an arbitrator in the columns of the nodes' lines.
func (a ArbitratorRow) Line() string {
	ts := a.Time.Format("15:04:05")
	if a.Process != "running" {
		return fmt.Sprintf("%-8s %-16s %-4s  arbitrator (garbd) %s", ts, trunc(a.Name, 16), strings.ToUpper(a.Process), a.Address)
	}
	p := "?"
	switch a.ClusterStatus {
	case "Primary":
		p = "P"
	case "non-Primary":
		p = "N"
	}
	size := "-"
	if a.Size > 0 {
		size = fmt.Sprint(a.Size)
	}
	return fmt.Sprintf("%-8s %-16s %1s %4s %2s %3s %-11s | arbitrator (garbd) %s: votes, holds no data", ts, trunc(a.Name, 16), p, "-", size, "-", "arbitrator", a.Address)
}

// Durability lists the nodes whose settings let a crash of every node
// lose acknowledged commits, one line per distinct risk: "── durability:
// node1, node2: innodb_flush_log_at_trx_commit=2: …".
func Durability(rows []Row) []string {
	var risks []string
	nodes := map[string][]string{}
	for _, r := range rows {
		if r.Up && r.DurabilityRisk != "" {
			if nodes[r.DurabilityRisk] == nil {
				risks = append(risks, r.DurabilityRisk)
			}
			nodes[r.DurabilityRisk] = append(nodes[r.DurabilityRisk], r.Node)
		}
	}
	var out []string
	for _, risk := range risks {
		out = append(out, fmt.Sprintf("── durability: %s: %s", strings.Join(nodes[risk], ", "), risk))
	}
	return out
}

// Unnamed describes the arbitrators the data nodes count but nobody
// named (a cluster given as --nodes): "" when there are none, else
// "1 arbitrator (a member without an address) in the component of
// dc1-1 (3 members)".
func Unnamed(rows []Row) string {
	for _, r := range rows {
		if r.Up && r.ClusterStatus == "Primary" && r.Arbitrators > 0 {
			word := "arbitrators"
			if r.Arbitrators == 1 {
				word = "arbitrator"
			}
			return fmt.Sprintf("── %d %s (members without a client address: garbd) in the Primary component of %s (%d members)", r.Arbitrators, word, r.Node, r.Size)
		}
	}
	return ""
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

// Header is the two-line column header of the text view. Replicated
// and Received are write-set traffic as Galera counts it
// (wsrep_replicated*, wsrep_received*), not bytes on the wire.
func Header() string {
	return fmt.Sprintf("%-8s %-16s %1s %4s %2s %3s %-11s | %-18s | %-19s | %-9s | %-7s | %s\n",
		"", "", "", "", "", "", "", "Replicated", "Received", "FlowC", "Cnf", "Gcache Cert Appl") +
		fmt.Sprintf("%-8s %-16s %1s %4s %2s %3s %-11s | %6s %7s %3s | %6s %7s %4s | %5s %3s | %3s %3s | %7s %5s %4s",
			"time", "node", "P", "cnf", "#", "idx", "state", "ws/s", "B/s", "que", "ws/s", "B/s", "que", "pause", "snt", "lcf", "bfa", "ist", "idx", "%ef")
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
	cnf := "-" // no configuration outside a Primary component
	if r.ConfID >= 0 {
		cnf = fmt.Sprint(r.ConfID)
	}
	return fmt.Sprintf("%-8s %-16s %1s %4s %2d %3d %-11s | %6s %7s %3d | %6s %7s %4d | %5s %3s | %3s %3s | %7s %5s %4.0f",
		ts, trunc(r.Node, 16), p, cnf, r.Size, r.LocalIndex, ShortState(r.State),
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
