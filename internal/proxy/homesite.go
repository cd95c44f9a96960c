package proxy

import (
	"context"
	"time"

	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/topology"
)

// learnHomeSite runs while proxy.site = "auto": it gathers the round
// trips of the Galera monitor's checks by site and, once every site has
// answered a few checks and one is clearly the nearest
// (topology.NearestSite), makes it the home site and stops. Until then,
// and for good where no site stands out (a proxy as near to every
// site), reads go to every site.
func (p *Proxy) learnHomeSite(ctx context.Context) {
	if p.galera.monitor == nil {
		p.log.Warn("proxy.site = \"auto\" learns the site from the Galera monitor's checks: set galera.monitor_user; reads go to every site")
		return
	}
	const keep, minSamples = 20, 3 // samples per site
	seen := map[string][]time.Duration{}
	last := map[string]time.Time{}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		snap := p.view.Load()
		for _, c := range p.GaleraChecks() {
			srv, ok := snap.Server(c.Node)
			if !ok || srv.Site == "" || c.Err != "" || !c.At.After(last[c.Node]) {
				continue
			}
			last[c.Node] = c.At
			s := append(seen[srv.Site], c.Latency)
			seen[srv.Site] = s[max(0, len(s)-keep):]
		}
		// Every site in the view must have answered a few times: a site
		// that is down (or whose nodes registered late) would otherwise
		// lose to a remote one for good.
		complete := true
		for _, srv := range snap.Servers {
			if srv.Site != "" && len(seen[srv.Site]) < minSamples {
				complete = false
			}
		}
		if !complete {
			continue
		}
		if site, ok := topology.NearestSite(seen); ok {
			p.view.SetHomeSite(site)
			p.events.Add(eventlog.HomeSite, "", "home site "+site+" (its nodes answer fastest: proxy.site = auto)")
			return
		}
	}
}
