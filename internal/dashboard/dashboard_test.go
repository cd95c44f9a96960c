package dashboard

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// Every file the page loads is embedded (the chart library only when the
// build fetched it), and served with the headers that keep the page from
// being framed or running foreign scripts.
func TestThePageAndWhatItLoads(t *testing.T) {
	h := Handler()
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	page := get("/")
	if page.Code != 200 || page.Header().Get("X-Frame-Options") != "DENY" || !strings.Contains(page.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("/: %d %v", page.Code, page.Header())
	}
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page.Body.String(), -1) {
		ref := m[1]
		if strings.HasPrefix(ref, "vendor/") && !HasCharts() {
			continue
		}
		if _, err := fs.Stat(assets, "assets/"+ref); err != nil {
			t.Errorf("index.html loads %s, which is not embedded: %v", ref, err)
		}
		if rec := get("/" + ref); rec.Code != 200 {
			t.Errorf("GET /%s: %d", ref, rec.Code)
		}
	}
}
