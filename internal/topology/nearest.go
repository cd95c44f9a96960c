package topology

import (
	"slices"
	"time"
)

// AutoSite is proxy.site's value for "the site this proxy runs in,
// learned from how fast the nodes answer".
const AutoSite = "auto"

// NearestSite picks the site a proxy runs in from the round trips of its
// health checks, by site: the site whose median is at most a third of
// every other site's. Nodes in the proxy's own data centre answer in
// well under a millisecond and remote ones in several, so the rule finds
// it at once across a WAN, and declines (ok false) where every site is
// as near as any other — a proxy beside all of them, which then keeps
// reading from every site. With one site it is that site.
func NearestSite(latencies map[string][]time.Duration) (string, bool) {
	type med struct {
		site string
		d    time.Duration
	}
	var meds []med
	for site, ds := range latencies {
		if site == "" || len(ds) == 0 {
			continue
		}
		s := slices.Clone(ds)
		slices.Sort(s)
		meds = append(meds, med{site, s[len(s)/2]})
	}
	if len(meds) == 0 {
		return "", false
	}
	slices.SortFunc(meds, func(a, b med) int { return int(a.d - b.d) })
	if len(meds) == 1 || 3*meds[0].d <= meds[1].d {
		return meds[0].site, true
	}
	return "", false
}
