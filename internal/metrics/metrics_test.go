package metrics

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func samples() []Sample {
	return []Sample{
		{Name: "galeon_queries_total", Help: "Queries routed.", Type: Counter, Labels: map[string]string{"hostgroup": "10", "backend": "db1:3306"}, Value: 42},
		{Name: "galeon_backend_up", Help: "Whether the backend is up.\nSecond line with \\ backslash.", Labels: map[string]string{"backend": "db1:3306"}, Value: 1},
		{Name: "galeon_queries_total", Help: "ignored: the family's first help counts", Type: Gauge, Labels: map[string]string{"hostgroup": "20", "backend": "db\"3\"\n\\x"}, Value: 1.5e+06},
		{Name: "galeon_backend_up", Labels: map[string]string{"backend": "db2:3306"}, Value: 0},
		{Name: "galeon_lag_seconds", Value: math.NaN()},
	}
}

// The exposition is client_golang's: families grouped under one HELP and
// TYPE whatever order the samples come in, values and labels escaped.
func TestSamplesAreExposedByFamily(t *testing.T) {
	want := `# HELP galeon_backend_up Whether the backend is up.\nSecond line with \\ backslash.
# TYPE galeon_backend_up gauge
galeon_backend_up{backend="db1:3306"} 1
galeon_backend_up{backend="db2:3306"} 0
# HELP galeon_lag_seconds galeon_lag_seconds
# TYPE galeon_lag_seconds gauge
galeon_lag_seconds NaN
# HELP galeon_queries_total Queries routed.
# TYPE galeon_queries_total counter
galeon_queries_total{backend="db\"3\"\n\\x",hostgroup="20"} 1.5e+06
galeon_queries_total{backend="db1:3306",hostgroup="10"} 42
`
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Func(samples))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// A bad series (a label value that is not UTF-8, a series given twice)
// is left out; the rest is still served.
func TestABadSeriesDoesNotBlindTheScrape(t *testing.T) {
	bad := func() []Sample {
		return append(samples(),
			Sample{Name: "galeon_backend_up", Labels: map[string]string{"backend": "db\xff"}, Value: 7},
			Sample{Name: "galeon_backend_up", Labels: map[string]string{"backend": "db2:3306"}, Value: 5})
	}
	reg, err := NewRegistry(Func(bad))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(reg, nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	for _, want := range []string{`galeon_queries_total{backend="db1:3306",hostgroup="10"} 42`, "go_goroutines ", "process_resident_memory_bytes "} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "} 7") || strings.Contains(page, "} 5") {
		t.Errorf("/metrics serves the invalid series:\n%s", page)
	}
}
