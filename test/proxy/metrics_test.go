package proxy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/galeon-db/galeon/internal/proxy"
)

// repoRoot is the checkout, two levels above this package.
const repoRoot = "../.."

// promtool is unpacked from Debian's prometheus package by make deps.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(repoRoot, ".cache/bin/promtool"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("promtool missing (%v): run `make deps`", err)
	}
	return p
}

// testMetrics scrapes the proxy's /metrics after traffic and checks it the
// way Prometheus will (promtool check metrics), then checks the shipped
// alert rules (promtool check rules, and their unit tests) and the Grafana
// dashboard, and that every series they use is one the proxy exposes.
func testMetrics(t *testing.T, pt *proxyUnderTest) {
	db := pt.db(t, nil)
	const writes, reads = 7, 20
	for i := 0; i < writes; i++ {
		mustExec(t, db, "INSERT INTO app.w (node, v) VALUES (@@wsrep_node_name, ?)", i)
	}
	for i := 0; i < reads; i++ {
		str(t, db, "SELECT COUNT(*) FROM app.w")
	}

	// An asynchronous replica and its binary log archive as its agent
	// reports them through the control plane (this proxy has none): the
	// alert rules use their series, which exist only while a replica is
	// registered.
	pt.p.SetReplicas([]proxy.Replica{{Name: "dr1", Address: "127.0.0.1:9", SourceNode: "node1", Up: true, IORunning: true, SQLRunning: true, State: "keep",
		Archive: &proxy.Archive{Dir: "/var/lib/galeon/archive", Files: 1, Bytes: 4096, Streaming: true}}})
	defer pt.p.SetReplicas(nil)

	// The monitor's first checks of every node come within a second or two;
	// a statement is counted once its reply is sent, which the client can
	// see first.
	var page []byte
	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + pt.httpAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		page, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("/metrics: %d %s", resp.StatusCode, page)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		if fams, err = parser.TextToMetricFamilies(bytes.NewReader(page)); err != nil {
			t.Fatalf("/metrics does not parse: %v\n%s", err, page)
		}
		if bytes.Count(page, []byte("\ngaleon_wsrep_local_state{")) == len(pt.sb.Nodes) &&
			statementCount(fams, "writer") >= writes && statementCount(fams, "reader") >= reads {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("after 30s, /metrics lacks a Galera check of every node, or counts fewer statements than this test sent (writer %d of %d, reader %d of %d):\n%s",
				statementCount(fams, "writer"), writes, statementCount(fams, "reader"), reads, page)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Figures: scrape time (median of 20) and the number of series.
	series := 0
	for _, f := range fams {
		series += len(f.GetMetric())
	}
	var took []time.Duration
	for range 20 {
		start := time.Now()
		resp, err := http.Get("http://" + pt.httpAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("FIGURE /metrics: %d families, %d series, %d bytes; scrape %.2f ms median, %.2f ms max of 20",
		len(fams), series, len(page), float64(took[10].Microseconds())/1000, float64(took[19].Microseconds())/1000)

	// The Go runtime and process collectors, the series galeon had before
	// client_golang (same names), and the new ones.
	for _, name := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
		"galeon_client_connections", "galeon_client_connections_total", "galeon_writer_epoch", "galeon_server_online", "galeon_server_writer",
		"galeon_backend_connections", "galeon_backend_queries_total", "galeon_retries_total", "galeon_aborted_total", "galeon_writer_changes_total",
		"galeon_monitor_check_seconds", "galeon_wsrep_local_recv_queue", "galeon_wsrep_flow_control_paused_seconds_total",
		"galeon_wsrep_local_cert_failures_total", "galeon_statement_duration_seconds", "galeon_writer_change_pause_seconds"} {
		if fams[name] == nil {
			t.Errorf("/metrics has no %s", name)
		}
	}
	if v := gaugeOf(fams, "galeon_server_writer", "server", "node1"); v != 1 {
		t.Errorf(`galeon_server_writer{server="node1"} = %v, want 1`, v)
	}
	t.Logf("statement histogram counts writer %d, reader %d; this test alone sent %d writes and %d reads", statementCount(fams, "writer"), statementCount(fams, "reader"), writes, reads)

	// promtool lints the page as Prometheus would scrape it.
	lint := exec.Command(promtool(t), "check", "metrics")
	lint.Stdin = bytes.NewReader(page)
	if out, err := lint.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	rules := filepath.Join(repoRoot, "deploy/prometheus/galeon-alerts.yml")
	if out, err := exec.Command(promtool(t), "check", "rules", rules).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
	unit := exec.Command(promtool(t), "test", "rules", "galeon-alerts.test.yml")
	unit.Dir = filepath.Join(repoRoot, "deploy/prometheus")
	if out, err := unit.CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}

	exprs := dashboardExprs(t, filepath.Join(repoRoot, "deploy/grafana/galeon-dashboard.json"))
	ruleText, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	exprs = append(exprs, string(ruleText))
	for _, name := range seriesNames(exprs) {
		if fams[name] == nil && fams[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")] == nil {
			t.Errorf("the dashboard or the alert rules use %s, which /metrics does not expose", name)
		}
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func gaugeOf(fams map[string]*dto.MetricFamily, family, key, value string) float64 {
	for _, m := range fams[family].GetMetric() {
		if label(m, key) == value {
			return m.GetGauge().GetValue()
		}
	}
	return -1
}

var seriesName = regexp.MustCompile(`\b(?:galeon|go|process)_[a-z0-9_]+`)

// seriesNames lists the series names the PromQL in exprs uses.
func seriesNames(exprs []string) []string {
	seen := map[string]bool{}
	var names []string
	for _, e := range exprs {
		for _, n := range seriesName.FindAllString(e, -1) {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}

// dashboardExprs checks the dashboard's structure — what Grafana needs to
// import it: a uid and title, panels with unique ids and a place on the
// grid, queries through the dashboard's data-source variable — and
// returns every query expression in it.
func dashboardExprs(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	}
	var d struct {
		UID           string `json:"uid"`
		Title         string `json:"title"`
		SchemaVersion int    `json:"schemaVersion"`
		Templating    struct {
			List []struct {
				Name, Type string
			} `json:"list"`
		} `json:"templating"`
		Annotations struct {
			List []struct {
				Expr string `json:"expr"`
			} `json:"list"`
		} `json:"annotations"`
		Panels []struct {
			ID      int                      `json:"id"`
			Type    string                   `json:"type"`
			Title   string                   `json:"title"`
			GridPos struct{ X, Y, W, H int } `json:"gridPos"`
			Targets []target                 `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 30 || len(d.Panels) == 0 {
		t.Fatalf("%s: uid %q, title %q, schemaVersion %d, %d panels: not an importable dashboard", path, d.UID, d.Title, d.SchemaVersion, len(d.Panels))
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" {
		t.Errorf("%s: no datasource variable; panels must not name a data source of the author's Grafana", path)
	}
	var exprs []string
	ids := map[int]bool{}
	known := map[string]bool{"row": true, "stat": true, "timeseries": true, "state-timeline": true, "table": true, "bargauge": true, "gauge": true}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("%s: panel id %d used twice", path, p.ID)
		}
		ids[p.ID] = true
		if !known[p.Type] {
			t.Errorf("%s: panel %q has type %q", path, p.Title, p.Type)
		}
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: panel %q off the 24-column grid: %+v", path, p.Title, p.GridPos)
		}
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", path, p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Expr == "" || tg.RefID == "" || tg.Datasource.UID != "${datasource}" {
				t.Errorf("%s: panel %q: query %+v needs refId, expr and the ${datasource} variable", path, p.Title, tg)
			}
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, a := range d.Annotations.List {
		exprs = append(exprs, a.Expr)
	}
	return exprs
}

// statementCount is galeon_statement_duration_seconds's count for a
// hostgroup.
func statementCount(fams map[string]*dto.MetricFamily, hostgroup string) uint64 {
	for _, m := range fams["galeon_statement_duration_seconds"].GetMetric() {
		if label(m, "hostgroup") == hostgroup {
			return m.GetHistogram().GetSampleCount()
		}
	}
	return 0
}
