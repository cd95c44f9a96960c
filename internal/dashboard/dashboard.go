// Package dashboard is galeon's web dashboard: a single page, embedded in
// the binary, that shows the cluster at a glance — nodes with their state
// and role, the writer and its epoch, state transfers, the proxies and the
// controller — with live charts, the events timeline, and the drain and
// switchover actions.
//
// The page only reads the admin HTTP API (/api/tables/...) and posts the
// actions to /api/actions, so everything it shows or does is also
// available to scripts and goes through the admin engine's validation and
// audit trail. Its chart library (uPlot) is fetched from npm at build
// time, pinned in web/package-lock.json, and copied into assets/vendor by
// scripts/build-web.sh; a binary built without that step serves the page
// without charts and says so.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed all:assets
var assets embed.FS

// Handler serves the dashboard's files from the root of the URL it is
// mounted at (strip the mount prefix first).
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	files := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The page holds no secret, but it must not be framed by another
		// site (clickjacking the drain and switchover buttons), and the
		// browser must run only our own scripts.
		h := w.Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// HasCharts reports whether the chart library was built in.
func HasCharts() bool {
	_, err := fs.Stat(assets, "assets/vendor/uPlot.iife.min.js")
	return err == nil
}
