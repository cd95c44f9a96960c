package quorum

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// SiteHoldDown is the galera.site_hold_down the plan advises for a layout
// with more than one data site: long enough that a short cut or a
// latency spike pauses writes instead of moving the writer across the
// WAN, short enough that a site really lost costs half a minute.
const SiteHoldDown = 30 * time.Second

// review fills Warnings and Advice from the layout and the outcomes, so
// that each one holds for this layout: a warning names the failures that
// really do what it says.
func (r *Report) review(o Options) {
	l := r.Layout
	total := l.weight(l.Members)
	if len(l.Sites) == 1 {
		r.Warnings = append(r.Warnings, "every member is in one site: losing it stops the cluster")
	}
	if len(l.Sites) > 1 {
		r.Advice = append(r.Advice, wanAdvice+" if the sites are more than a few milliseconds apart (measure: galeon plan --name SANDBOX or --discovery)")
	}
	// Each site lost (its members down) and cut off (its members run on).
	reported := map[string]bool{} // splits already explained, by key
	for _, s := range l.Sites {
		if len(l.Sites) == 1 {
			break
		}
		w := l.weight(l.inSite(s))
		var parts []string
		if down, ok := r.Find(Failure{Kind: SiteDown, Site: s}); ok && !down.Writes {
			parts = append(parts, "lost (its members down), writes stop everywhere: "+r.why(down))
		}
		if cut, ok := r.Find(Failure{Kind: SiteCut, Site: s}); ok {
			reported[splitKey(cut)] = true
			switch {
			case !cut.Writes:
				parts = append(parts, "cut off (its members running), writes stop on every side: "+r.why(cut))
			case len(parts) > 0 && primaryIn(l, cut, s):
				parts = append(parts, fmt.Sprintf("cut off (its members running), %s keeps writing as the majority side and the other sites stop", s))
			}
		}
		if len(parts) == 0 {
			continue
		}
		share := "a majority"
		switch {
		case 2*w == total:
			share = "exactly half"
		case 2*w < total:
			share = "not a majority"
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("site %s holds %d of %d votes, %s: %s", s, w, total, share, strings.Join(parts, "; ")))
	}
	// Link cuts that split the cluster in a way no site cut did.
	for _, out := range r.Outcomes {
		if out.Failure.Kind != LinkCut || out.Writes || reported[splitKey(out)] {
			continue
		}
		reported[splitKey(out)] = true
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s stops writes on every side: %s", out.Failure, r.why(out)))
	}
	for _, s := range l.Sites {
		var data, garbd bool
		for _, m := range l.inSite(s) {
			data = data || !m.Arbitrator
			garbd = garbd || m.Arbitrator
		}
		if data && garbd {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the arbitrator in %s shares its site with data nodes: it does not help when %s fails", s, s))
		}
	}
	segs := map[string]int{}
	for _, m := range l.Members {
		if seg, ok := segs[m.Site]; ok && seg != m.Segment {
			r.Warnings = append(r.Warnings, fmt.Sprintf("site %s spans segments %d and %d: give a site one gmcast.segment", m.Site, seg, m.Segment))
		}
		segs[m.Site] = m.Segment
	}
	for _, a := range l.Sites {
		for _, b := range l.Sites {
			if a < b && segs[a] == segs[b] {
				r.Warnings = append(r.Warnings, fmt.Sprintf("sites %s and %s share gmcast.segment %d: traffic between them is not relayed once per site, and donors are not preferred locally", a, b, segs[a]))
			}
		}
	}
	var stops []string
	for _, out := range r.Outcomes {
		if !out.Writes && (len(l.Sites) == 1 || out.Failure.Kind != NodeDown) {
			stops = append(stops, out.Failure.String())
		}
	}
	if len(stops) > 0 && len(l.Sites) > 1 {
		fix := "put data nodes in more sites: after a site failure the side that keeps quorum must hold data, and arbitrators alone cannot serve"
		for _, s := range l.Sites {
			if 2*l.weight(l.inSite(s)) >= total {
				fix = "add a node or an arbitrator so that no single site holds half the votes or more"
			}
		}
		if spec, what, ok := suggest(l); ok {
			fix = fmt.Sprintf("%s so that no single site holds half the votes (e.g. --dc %s: no single failure of it stops writes)", what, spec)
		}
		r.Advice = append(r.Advice, fmt.Sprintf("these stop writes: %s; %s", strings.Join(stops, ", "), fix))
	}
	if len(stops) > 0 && len(l.Sites) == 1 && l.dataNodes(l.Members) < 3 {
		r.Advice = append(r.Advice, "run at least 3 nodes (or 2 and an arbitrator) to survive one failure")
	}
	r.siteAdvice(o)
}

// why says why an outcome leaves no Primary component with data.
func (r *Report) why(o Outcome) string {
	total := r.Layout.weight(r.Layout.Members)
	var primary *Component
	for i := range o.Components {
		if o.Components[i].Primary {
			primary = &o.Components[i]
		}
	}
	switch {
	case primary != nil:
		return fmt.Sprintf("the side that keeps quorum (%s) is arbitrators only, which hold no data", strings.Join(primary.Members, " "))
	case len(o.Components) == 1:
		return fmt.Sprintf("the members left (%s) hold %d of %d votes, not more than half", strings.Join(o.Components[0].Members, " "), o.Components[0].Weight, total)
	case len(o.Components) == 2 && o.Components[0].Weight == o.Components[1].Weight:
		return fmt.Sprintf("an even split, %d and %d votes", o.Components[0].Weight, o.Components[1].Weight)
	}
	var ws []string
	for _, c := range o.Components {
		ws = append(ws, fmt.Sprint(c.Weight))
	}
	return fmt.Sprintf("no side holds more than half of %d votes (%s)", total, strings.Join(ws, ", "))
}

// splitKey names the components of an outcome, to tell whether two
// failures split the cluster the same way.
func splitKey(o Outcome) string {
	var parts []string
	for _, c := range o.Components {
		ms := slices.Clone(c.Members)
		slices.Sort(ms)
		parts = append(parts, strings.Join(ms, ","))
	}
	slices.Sort(parts)
	return strings.Join(parts, "|")
}

// primaryIn says whether o's Primary component holds a data node of site.
func primaryIn(l Layout, o Outcome, site string) bool {
	for _, c := range o.Components {
		if !c.Primary {
			continue
		}
		for _, m := range l.inSite(site) {
			if !m.Arbitrator && slices.Contains(c.Members, m.Name) {
				return true
			}
		}
	}
	return false
}

// siteAdvice names the writer site and the hold-down for a layout with
// more than one data site.
func (r *Report) siteAdvice(o Options) {
	l := r.Layout
	var data []string
	for _, s := range l.Sites {
		if l.dataNodes(l.inSite(s)) > 0 {
			data = append(data, s)
		}
	}
	if len(data) < 2 {
		return
	}
	// The writer site is the one that leaves the Primary component after
	// the fewest single failures that keep writes somewhere.
	best, bestMoves := "", []Outcome(nil)
	for _, s := range data {
		var moves []Outcome
		for _, out := range r.Outcomes {
			if out.Writes && !primaryIn(l, out, s) {
				moves = append(moves, out)
			}
		}
		if best == "" || len(moves) < len(bestMoves) {
			best, bestMoves = s, moves
		}
	}
	total, w := l.weight(l.Members), l.weight(l.inSite(best))
	if len(bestMoves) == 0 {
		why := fmt.Sprintf("every single failure that leaves writes anywhere leaves them in %s", best)
		if 2*w > total {
			why = fmt.Sprintf("%s holds %d of %d votes, the majority side: cut off, it keeps writing; every single failure that leaves writes anywhere leaves them in %s, and losing it stops writes everywhere", best, w, total, best)
		}
		r.Advice = append(r.Advice, fmt.Sprintf("set galera.writer_site = %q in every proxy: the writer never has to leave it, since %s", best, why))
	} else {
		var names, to []string
		for _, out := range bestMoves {
			names = append(names, out.Failure.String())
			for _, s := range data {
				if primaryIn(l, out, s) && !slices.Contains(to, s) {
					to = append(to, s)
				}
			}
		}
		r.Advice = append(r.Advice, fmt.Sprintf("set galera.writer_site = %q in every proxy: no site holds a majority of the %d votes, and the writer stays in %s through every single failure but %s (then it moves to %s)",
			best, total, best, strings.Join(names, ", "), strings.Join(to, " or ")))
	}
	def := "the default"
	if o.DefaultHoldDown != SiteHoldDown {
		def = fmt.Sprintf("set it: this galeon's default is %s", o.DefaultHoldDown)
	}
	r.Advice = append(r.Advice, fmt.Sprintf("galera.site_hold_down = %q (%s): when the writer's site has no fit node (lost, or on the losing side of a cut), writes pause up to that long before the writer moves to another site, so a short cut or a latency spike does not send every write across the WAN; 0 moves it at once",
		SiteHoldDown.String(), def))
}

// suggest finds a small change of l after which no single site loss, site
// cut or link cut stops writes, checked with Plan: an arbitrator in a
// site of its own; the data sites balanced; both. It returns the new
// layout in the --dc notation and what the change is. Layouts with
// weights other than 1, or two arbitrators in a site, get no suggestion.
func suggest(l Layout) (spec, what string, ok bool) {
	type site struct {
		name  string
		nodes int
		garbd bool
	}
	var sites []site
	most := 0
	for _, s := range l.Sites {
		st := site{name: s}
		for _, m := range l.inSite(s) {
			if m.Weight != 1 || m.Arbitrator && st.garbd {
				return "", "", false
			}
			if m.Arbitrator {
				st.garbd = true
			} else {
				st.nodes++
			}
		}
		most = max(most, st.nodes)
		sites = append(sites, st)
	}
	newSite := "arb"
	for k := len(l.Sites) + 1; ; k++ {
		if n := fmt.Sprintf("dc%d", k); !slices.Contains(l.Sites, n) {
			newSite = n
			break
		}
	}
	render := func(ss []site) string {
		var parts []string
		for _, s := range ss {
			switch {
			case s.nodes == 0:
				parts = append(parts, s.name+":garbd")
			case s.garbd:
				parts = append(parts, fmt.Sprintf("%s:%d+garbd", s.name, s.nodes))
			default:
				parts = append(parts, fmt.Sprintf("%s:%d", s.name, s.nodes))
			}
		}
		return strings.Join(parts, ",")
	}
	balanced := slices.Clone(sites)
	for i := range balanced {
		if balanced[i].nodes > 0 {
			balanced[i].nodes = most
		}
	}
	arb := site{name: newSite, garbd: true}
	var apart []site // balanced, arbitrators out of the data sites
	for _, s := range balanced {
		if s.nodes > 0 {
			apart = append(apart, site{name: s.name, nodes: s.nodes})
		}
	}
	for _, c := range []struct {
		sites []site
		what  string
	}{
		{append(slices.Clone(sites), arb), "add an arbitrator (garbd) in a site of its own, " + newSite + ","},
		{balanced, fmt.Sprintf("give every data site %d nodes", most)},
		{append(slices.Clone(balanced), arb), fmt.Sprintf("give every data site %d nodes and add an arbitrator (garbd) in a site of its own, %s,", most, newSite)},
		{append(apart, arb), fmt.Sprintf("give every data site %d nodes and run one arbitrator (garbd) in a site of its own, %s, instead of beside data nodes,", most, newSite)},
	} {
		s := render(c.sites)
		cand, err := ParseLayout(s)
		if err != nil {
			continue
		}
		good := true
		for _, out := range outcomes(cand) {
			if !out.Writes && out.Failure.Kind != NodeDown {
				good = false
			}
		}
		if good {
			return s, c.what, true
		}
	}
	return "", "", false
}
