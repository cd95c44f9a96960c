package admin

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func testMetrics() []Metric {
	return []Metric{
		{Name: "galeon_queries_total", Help: "Queries routed.", Type: "counter", Labels: map[string]string{"hostgroup": "10", "backend": "db1:3306"}, Value: 42},
		{Name: "galeon_backend_up", Help: "Whether the backend is up.\nSecond line with \\ backslash.", Type: "gauge", Labels: map[string]string{"backend": "db1:3306"}, Value: 1},
		{Name: "galeon_queries_total", Help: "ignored duplicate help", Type: "gauge", Labels: map[string]string{"hostgroup": "20", "backend": "db\"3\"\n\\x"}, Value: 1.5e+06},
		{Name: "galeon_backend_up", Labels: map[string]string{"backend": "db2:3306"}, Value: 0},
		{Name: "galeon_lag_seconds", Type: "gauge", Value: math.NaN()},
		{Name: "galeon_lag_seconds", Type: "gauge", Labels: map[string]string{"bad-label": "x"}, Value: math.Inf(1)},
		{Name: "9bad name", Type: "weird", Value: -0.5},
		{Name: "", Value: 1},
	}
}

const wantExposition = `# HELP galeon_queries_total Queries routed.
# TYPE galeon_queries_total counter
galeon_queries_total{backend="db1:3306",hostgroup="10"} 42
galeon_queries_total{backend="db\"3\"\n\\x",hostgroup="20"} 1.5e+06
# HELP galeon_backend_up Whether the backend is up.\nSecond line with \\ backslash.
# TYPE galeon_backend_up gauge
galeon_backend_up{backend="db1:3306"} 1
galeon_backend_up{backend="db2:3306"} 0
# TYPE galeon_lag_seconds gauge
galeon_lag_seconds NaN
galeon_lag_seconds{bad_label="x"} +Inf
# TYPE _bad_name untyped
_bad_name -0.5
`

func TestExposition(t *testing.T) {
	got := string(appendExposition(nil, testMetrics()))
	if got != wantExposition {
		t.Errorf("exposition:\n%s\nwant:\n%s", got, wantExposition)
	}
	if got := string(appendExposition(nil, nil)); got != "" {
		t.Errorf("no metrics: %q", got)
	}
}

func httpGet(t *testing.T, client *http.Client, url, user, pw string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pw)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

func TestHTTPEndpoints(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table(), statsTable()}, testMetrics)
	base := "http://" + s.HTTPAddr().String()
	client := &http.Client{}
	defer client.CloseIdleConnections()

	resp, body := httpGet(t, client, base+"/metrics", "", "")
	if resp.StatusCode != 200 || body != wantExposition {
		t.Errorf("/metrics: %d\n%s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("/metrics content type %q", ct)
	}

	resp, body = httpGet(t, client, base+"/api/health", "", "")
	if resp.StatusCode != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Errorf("/api/health: %d %s", resp.StatusCode, body)
	}

	for _, path := range []string{"/api/tables", "/api/tables/servers", "/api/tables/nope", "/api/other", "/api"} {
		for _, cred := range [][2]string{{"", ""}, {testUser, "wrong"}, {"root", testPassword}} {
			resp, body := httpGet(t, client, base+path, cred[0], cred[1])
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `"error"`) {
				t.Errorf("%s as %q: %d %s", path, cred[0], resp.StatusCode, body)
			}
			if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
				t.Errorf("%s: no WWW-Authenticate", path)
			}
		}
	}

	resp, body = httpGet(t, client, base+"/api/tables", testUser, testPassword)
	var list []tableInfo
	if err := json.Unmarshal([]byte(body), &list); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/api/tables: %d %s %v", resp.StatusCode, body, err)
	}
	if len(list) != 2 || list[0].Name != "servers" || len(list[0].Columns) != 7 || list[0].Columns[5] != (columnInfo{"comment", "text", true}) ||
		strings.Join(list[0].Privileges, ",") != "select,update,insert,delete" || strings.Join(list[1].Privileges, ",") != "select" {
		t.Errorf("/api/tables: %s", body)
	}

	resp, body = httpGet(t, client, base+"/api/tables/SERVERS", testUser, testPassword)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/api/tables/servers: %d %s", resp.StatusCode, body)
	}
	// Keys stay in column order.
	if !strings.HasPrefix(body, `[{"hostgroup":10,"hostname":"db1","port":3306,"weight":100,"status":"ONLINE","comment":"primary","max_lag":1.5},`) {
		t.Errorf("row order or encoding: %s", body)
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var rows []map[string]any
	if err := dec.Decode(&rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1]["comment"] != nil || rows[2]["comment"] != "it's \"quoted\"\tand tabbed" || rows[2]["max_lag"] != json.Number("0.25") {
		t.Errorf("rows: %v", rows)
	}

	resp, body = httpGet(t, client, base+"/api/tables/stats", testUser, testPassword)
	if resp.StatusCode != 200 || !strings.Contains(body, `{"name":"short row","value":null,"ratio":null}`) {
		t.Errorf("stats: %s", body)
	}

	for _, tc := range []struct {
		path string
		code int
		msg  string
	}{
		{"/api/tables/nope", 404, "tables: servers, stats"},
		{"/api/tables/servers/x", 404, "not found"},
		{"/api/nope", 404, "not found"},
		{"/", 404, "not found"},
		{"/metricsx", 404, "not found"},
	} {
		resp, body := httpGet(t, client, base+tc.path, testUser, testPassword)
		var e map[string]string
		if resp.StatusCode != tc.code || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e["error"], tc.msg) {
			t.Errorf("%s: %d %s", tc.path, resp.StatusCode, body)
		}
	}

	for _, path := range []string{"/metrics", "/api/health", "/api/tables", "/api/tables/servers"} {
		req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader([]byte("{}")))
		req.SetBasicAuth(testUser, testPassword)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(string(body), "read-only") {
			t.Errorf("POST %s: %d %s", path, resp.StatusCode, body)
		}
	}
}

func TestHTTPHandlerRecoversPanics(t *testing.T) {
	s := NewServer(Config{Logger: testLogger(t)}, nil, func() []Metric { panic("metrics exploded") })
	rec := httptest.NewRecorder()
	s.httpHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "internal error") {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
	// A server without metrics serves an empty page.
	s = NewServer(Config{Logger: testLogger(t)}, nil, nil)
	rec = httptest.NewRecorder()
	s.httpHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != 200 || rec.Body.Len() != 0 {
		t.Errorf("nil metrics: %d %q", rec.Code, rec.Body)
	}
}

func TestHTTPJSONSpecialFloats(t *testing.T) {
	b := appendJSONRow(nil, []Column{{Name: "a", Kind: Float}, {Name: "b", Kind: Float}, {Name: "c", Kind: Float}, {Name: "d", Kind: Text}},
		[]any{math.NaN(), math.Inf(-1), 1e21, "\x00<>&"})
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if m["a"] != "NaN" || m["b"] != "-Inf" || m["c"] != 1e21 || m["d"] != "\x00<>&" {
		t.Errorf("%s", b)
	}
}

func TestHTTPSWithTLS(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{TLS: selfSignedTLS(t)}, []Table{fs.table()}, testMetrics)
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	resp, body := httpGet(t, client, "https://"+s.HTTPAddr().String()+"/api/tables/servers", testUser, testPassword)
	if resp.StatusCode != 200 || resp.TLS == nil || !strings.Contains(body, "db1") {
		t.Errorf("HTTPS: %d %s", resp.StatusCode, body)
	}
}
