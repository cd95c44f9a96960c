// Package quorum predicts what a Galera cluster spread over sites does
// when a node or a whole site is lost (down), a site is cut off (its
// members keep running, every link to it is cut) or the link between two
// sites fails: which members still form the Primary component (and take
// writes) and which stop. A site holding the majority of the votes shows
// why losses and cuts differ: lost, it stops writes everywhere; cut off,
// it keeps writing and the other sites stop. It is the planner behind `galeon plan`, and a pure function of a
// layout, so its predictions can be checked against a real cluster in the
// multi-site sandbox.
//
// # The rules it applies (Galera 4, pc and gmcast)
//
//   - A component stays Primary only with strictly more than half of the
//     weight (pc.weight, default 1) of the last Primary component. An
//     even split stops both halves. Members that left gracefully are not
//     counted; crashed and cut-off ones are.
//   - gmcast relays messages between members that cannot reach each other
//     directly through one that reaches both, so a component is every
//     member that can reach the others directly or through a relay: with
//     three sites, cutting one site-to-site link leaves the cluster whole.
//     Not at once: measured in the multi-site sandbox, the cluster first
//     splits when the direct link is suspected (every side non-Primary
//     for a few seconds: writes stop), then forms again through the
//     relay. Outcome.Relay names the site that relays.
//   - An arbitrator (garbd) votes like a node (weight 1 unless set) and
//     relays, but holds no data: a component made of arbitrators alone
//     cannot serve.
//
// Failures are evaluated one at a time from the healthy layout: the
// question a planner answers is "which single event stops writes?".
package quorum

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Member is one voting member of the cluster.
type Member struct {
	Name       string
	Site       string
	Weight     int  // pc.weight; 1 when not set
	Arbitrator bool // garbd: votes and relays, holds no data
	Segment    int  // gmcast.segment
}

// Layout is a cluster's members and the sites they are in, in order.
type Layout struct {
	Sites   []string
	Members []Member
}

// ParseLayout reads the --dc notation: comma-separated SITE:N (N data
// nodes) or SITE:garbd (an arbitrator), and SITE:N+garbd for both. Nodes
// are named SITE-1, SITE-2...; an arbitrator SITE-garbd. Each site gets
// its own segment, in order (0, 1, 2...), as Galera's multi-site advice
// has it.
func ParseLayout(spec string) (Layout, error) {
	var l Layout
	if strings.TrimSpace(spec) == "" {
		return l, fmt.Errorf("empty layout: give sites as SITE:N or SITE:garbd, e.g. dc1:2,dc2:2,dc3:garbd")
	}
	for i, part := range strings.Split(spec, ",") {
		site, what, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || site == "" || what == "" {
			return Layout{}, fmt.Errorf("%q: want SITE:N or SITE:garbd (e.g. dc1:2)", part)
		}
		if !validName(site) {
			return Layout{}, fmt.Errorf("site %q: use letters, digits, '-' and '_'", site)
		}
		if slices.Contains(l.Sites, site) {
			return Layout{}, fmt.Errorf("site %s is listed twice", site)
		}
		nodes, garbd := what, false
		if what == "garbd" {
			nodes, garbd = "0", true
		} else if n, ok := strings.CutSuffix(what, "+garbd"); ok {
			nodes, garbd = n, true
		}
		n, err := strconv.Atoi(nodes)
		if err != nil || n < 0 || n > 9 {
			return Layout{}, fmt.Errorf("%s:%s: the node count must be 0 to 9 (or garbd)", site, what)
		}
		if n == 0 && !garbd {
			return Layout{}, fmt.Errorf("%s:%s: a site needs at least one node or an arbitrator", site, what)
		}
		l.Sites = append(l.Sites, site)
		for k := 1; k <= n; k++ {
			l.Members = append(l.Members, Member{Name: fmt.Sprintf("%s-%d", site, k), Site: site, Weight: 1, Segment: i})
		}
		if garbd {
			l.Members = append(l.Members, Member{Name: site + "-garbd", Site: site, Weight: 1, Arbitrator: true, Segment: i})
		}
	}
	if l.dataNodes(l.Members) == 0 {
		return Layout{}, fmt.Errorf("%q has no data node: arbitrators alone hold no data", spec)
	}
	return l, nil
}

// NewLayout builds a layout from members (each with its Site and
// Segment), keeping the sites in the order they first appear; a weight
// of 0 is taken as the default 1.
func NewLayout(members []Member) (Layout, error) {
	var l Layout
	names := map[string]bool{}
	for _, m := range members {
		if names[m.Name] {
			return Layout{}, fmt.Errorf("member %s is listed twice", m.Name)
		}
		names[m.Name] = true
		if m.Site == "" {
			return Layout{}, fmt.Errorf("member %s has no site", m.Name)
		}
		if m.Weight == 0 {
			m.Weight = 1
		}
		if !slices.Contains(l.Sites, m.Site) {
			l.Sites = append(l.Sites, m.Site)
		}
		l.Members = append(l.Members, m)
	}
	if l.dataNodes(l.Members) == 0 {
		return Layout{}, errors.New("no data node")
	}
	return l, nil
}

// SetWeight sets pc.weight of a member (name=W in --weight).
func (l *Layout) SetWeight(name string, w int) error {
	if w < 0 || w > 255 {
		return fmt.Errorf("weight %d for %s: pc.weight is 0 to 255", w, name)
	}
	for i := range l.Members {
		if l.Members[i].Name == name {
			l.Members[i].Weight = w
			return nil
		}
	}
	return fmt.Errorf("no member %s (members: %s)", name, strings.Join(l.names(l.Members), ", "))
}

func validName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return s != "" && len(s) <= 32
}

// Kind is a kind of failure.
type Kind string

// Failures the planner considers.
const (
	NodeDown Kind = "node down" // one member crashes
	SiteDown Kind = "site down" // every member of one site
	SiteCut  Kind = "site cut"  // a site loses every link, its members run on
	LinkCut  Kind = "link cut"  // the network between two sites
)

// Failure is one event: a member (NodeDown), a site (SiteDown, SiteCut)
// or two sites (LinkCut).
type Failure struct {
	Kind Kind
	Node string
	Site string
	A, B string // LinkCut
}

func (f Failure) String() string {
	switch f.Kind {
	case NodeDown:
		return "lose " + f.Node
	case SiteDown:
		return "lose site " + f.Site
	case SiteCut:
		return "cut off site " + f.Site
	}
	return "cut " + f.A + " <-> " + f.B
}

// Component is a set of members that can talk to each other.
type Component struct {
	Members []string
	Weight  int
	Data    int  // data nodes in it
	Primary bool // keeps quorum (and serves, if Data > 0)
}

// Outcome is the predicted result of one failure.
type Outcome struct {
	Failure    Failure
	Components []Component // the members still running, by component; Primary first
	// Writes says whether a Primary component with data nodes remains:
	// the cluster keeps taking writes there.
	Writes bool
	// Relay names the site whose members relay between sites that lost
	// their direct link ("" if none was needed). Writes pause until the
	// relay is in place (seconds: the split is seen first).
	Relay string
}

// Predict returns what Galera does when f happens to the healthy layout l.
func Predict(l Layout, f Failure) Outcome {
	total := l.weight(l.Members)
	alive := make([]Member, 0, len(l.Members))
	for _, m := range l.Members {
		if f.Kind == NodeDown && m.Name == f.Node || f.Kind == SiteDown && m.Site == f.Site {
			continue
		}
		alive = append(alive, m)
	}
	// Sites are connected unless their link is cut; members of one site
	// always reach each other. A component is a connected group of sites
	// (gmcast relays through any member that reaches both sides).
	sites := []string{}
	for _, m := range alive {
		if !slices.Contains(sites, m.Site) {
			sites = append(sites, m.Site)
		}
	}
	linked := func(a, b string) bool {
		switch f.Kind {
		case LinkCut:
			return !(a == f.A && b == f.B || a == f.B && b == f.A)
		case SiteCut:
			return a != f.Site && b != f.Site
		}
		return true
	}
	group := map[string]int{}
	next := 0
	for _, s := range sites {
		if _, done := group[s]; done {
			continue
		}
		group[s] = next
		queue := []string{s}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, o := range sites {
				if _, done := group[o]; !done && linked(cur, o) {
					group[o] = next
					queue = append(queue, o)
				}
			}
		}
		next++
	}
	out := Outcome{Failure: f}
	for g := 0; g < next; g++ {
		var ms []Member
		for _, m := range alive {
			if group[m.Site] == g {
				ms = append(ms, m)
			}
		}
		c := Component{Members: l.names(ms), Weight: l.weight(ms), Data: l.dataNodes(ms)}
		c.Primary = 2*c.Weight > total
		if c.Primary && c.Data > 0 {
			out.Writes = true
		}
		out.Components = append(out.Components, c)
	}
	sort.SliceStable(out.Components, func(i, j int) bool { return out.Components[i].Primary && !out.Components[j].Primary })
	if f.Kind == LinkCut && next == 1 {
		for _, s := range sites {
			if s != f.A && s != f.B {
				out.Relay = s
				break
			}
		}
	}
	return out
}

// Report is a whole plan: every single failure, and what to change.
type Report struct {
	Layout   Layout
	Outcomes []Outcome
	// Warnings name what is wrong with the layout; Advice what to do.
	Warnings []string
	Advice   []string
	// RTTs are the round trips measured on a running cluster (see
	// Measured), if any.
	RTTs []RTT `json:",omitempty"`
	// Settings are each data node's [mariadbd] options for replicas and
	// ids (see Settings).
	Settings []NodeSettings `json:",omitempty"`
}

// wanAdvice opens the advice to use galera.WANProfile.
const wanAdvice = "between sites over a WAN, use the WAN profile (evs.suspect_timeout=PT30S, inactive/install PT1M, keepalive PT3S, send windows 512, gcs.fc_limit=128; galeon sandbox up --wan): a latency spike then never evicts a node"

// Plan predicts every single failure of l — each member lost; with more
// than one site, each site lost (its members down) and each site cut off
// (its members running, every link to it cut); each link between two
// sites cut — and reviews the layout. Its advice takes the site
// hold-down default to be SiteHoldDown; PlanFor says otherwise.
func Plan(l Layout) Report {
	return PlanFor(l, Options{DefaultHoldDown: SiteHoldDown})
}

// Options are what the advice needs to know of the galeon that will run
// the layout.
type Options struct {
	// DefaultHoldDown is galera.site_hold_down's default in this galeon.
	DefaultHoldDown time.Duration
	// MaxNodes is the most data nodes the cluster will have (the
	// AUTO_INCREMENT increment of Settings); 0: the layout's.
	MaxNodes int
}

// PlanFor is Plan with the defaults of the galeon at hand.
func PlanFor(l Layout, o Options) Report {
	r := Report{Layout: l, Outcomes: outcomes(l), Settings: Settings(l, o.MaxNodes)}
	r.review(o)
	return r
}

// outcomes predicts every single failure of l, in the plan's order.
func outcomes(l Layout) []Outcome {
	var out []Outcome
	for _, m := range l.Members {
		out = append(out, Predict(l, Failure{Kind: NodeDown, Node: m.Name}))
	}
	if len(l.Sites) > 1 {
		for _, s := range l.Sites {
			out = append(out, Predict(l, Failure{Kind: SiteDown, Site: s}))
		}
		for _, s := range l.Sites {
			out = append(out, Predict(l, Failure{Kind: SiteCut, Site: s}))
		}
		for i, a := range l.Sites {
			for _, b := range l.Sites[i+1:] {
				out = append(out, Predict(l, Failure{Kind: LinkCut, A: a, B: b}))
			}
		}
	}
	return out
}

// Find returns the plan's outcome for f (a LinkCut in either order).
func (r Report) Find(f Failure) (Outcome, bool) {
	for _, o := range r.Outcomes {
		g := o.Failure
		if g == f || f.Kind == LinkCut && g.Kind == LinkCut && g.A == f.B && g.B == f.A {
			return o, true
		}
	}
	return Outcome{}, false
}

func (l Layout) inSite(site string) []Member {
	var out []Member
	for _, m := range l.Members {
		if m.Site == site {
			out = append(out, m)
		}
	}
	return out
}

func (Layout) weight(ms []Member) int {
	w := 0
	for _, m := range ms {
		w += m.Weight
	}
	return w
}

func (Layout) dataNodes(ms []Member) int {
	n := 0
	for _, m := range ms {
		if !m.Arbitrator {
			n++
		}
	}
	return n
}

func (Layout) names(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// ParseLayoutText reads a layout file: the --dc notation spread over
// lines (one or more SITE:N, SITE:garbd or SITE:N+garbd per line,
// comma-separated), "weight MEMBER=N" lines for pc.weight, and comments
// from '#'. Errors name the line.
//
//	# two data sites and a tie-breaker
//	dc1:2
//	dc2:2
//	dc3:garbd
//	weight dc1-1=2
func ParseLayoutText(text string) (Layout, error) {
	var sites []string
	type weight struct {
		line   int
		member string
		w      int
	}
	var weights []weight
	for i, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "weight "):
			name, v, ok := strings.Cut(strings.TrimPrefix(line, "weight "), "=")
			w, err := strconv.Atoi(strings.TrimSpace(v))
			if !ok || err != nil {
				return Layout{}, fmt.Errorf("line %d: %q: want weight MEMBER=N", i+1, line)
			}
			weights = append(weights, weight{i + 1, strings.TrimSpace(name), w})
		default:
			for _, part := range strings.Split(line, ",") {
				if part = strings.TrimSpace(part); part != "" {
					sites = append(sites, strings.ReplaceAll(part, " ", ""))
				}
			}
		}
	}
	l, err := ParseLayout(strings.Join(sites, ","))
	if err != nil {
		return Layout{}, err
	}
	for _, w := range weights {
		if err := l.SetWeight(w.member, w.w); err != nil {
			return Layout{}, fmt.Errorf("line %d: %w", w.line, err)
		}
	}
	return l, nil
}

// Row is an outcome as the plan prints it, one line per failure.
type Row struct {
	Failure string     // "cut off site dc1"
	Writes  string     // "ok", "STOP", or "pause" (ok after a split of seconds)
	Primary []string   // the members of the Primary component (none: writes stop everywhere)
	Others  [][]string // the members of each other component: they stop
	Note    string     // the relay, if any
}

// Row renders o for the plan's table.
func (o Outcome) Row() Row {
	row := Row{Failure: o.Failure.String(), Writes: "STOP"}
	if o.Writes {
		row.Writes = "ok"
	}
	for _, c := range o.Components {
		if c.Primary {
			row.Primary = append(row.Primary, c.Members...)
		} else {
			row.Others = append(row.Others, c.Members)
		}
	}
	if o.Relay != "" {
		row.Writes = "pause"
		row.Note = "relayed through " + o.Relay + " after a split of a few seconds"
	}
	return row
}

// String is the row as `galeon plan` prints it.
func (row Row) String() string {
	line := strings.Join(row.Primary, " ")
	if line == "" {
		line = "(none)"
	}
	if len(row.Others) > 0 {
		var others []string
		for _, o := range row.Others {
			others = append(others, strings.Join(o, " "))
		}
		line += "   [" + strings.Join(others, "] [") + "]"
	}
	if row.Note != "" {
		line += "   (" + row.Note + ")"
	}
	return fmt.Sprintf("%-27s %-8s %s", row.Failure, row.Writes, line)
}
