package admin

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"testing"
)

// testMetrics stands for the process's Prometheus handler: the admin
// server only routes /metrics to it, without authentication.
var testMetrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = io.WriteString(w, wantExposition)
})

const wantExposition = "# TYPE galeon_up gauge\ngaleon_up 1\n"

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

	// ?limit=N: the first N rows.
	if resp, body := httpGet(t, client, base+"/api/tables/servers?limit=1", testUser, testPassword); resp.StatusCode != 200 || strings.Count(body, "hostgroup") != 1 || !strings.Contains(body, "primary") {
		t.Errorf("?limit=1: %d %s", resp.StatusCode, body)
	}
	if resp, body := httpGet(t, client, base+"/api/tables/servers?limit=x", testUser, testPassword); resp.StatusCode != 400 || !strings.Contains(body, "limit=x") {
		t.Errorf("?limit=x: %d %s", resp.StatusCode, body)
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
		{"/nope", 404, "not found"},
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
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(string(body), "change settings with SQL") {
			t.Errorf("POST %s: %d %s", path, resp.StatusCode, body)
		}
	}
}

func TestHTTPHandlerRecoversPanics(t *testing.T) {
	s := NewServer(Config{Logger: testLogger(t)}, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("metrics exploded") }))
	rec := httptest.NewRecorder()
	s.httpHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "internal error") {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
	// A server without metrics says so.
	s = NewServer(Config{Logger: testLogger(t)}, nil, nil)
	rec = httptest.NewRecorder()
	s.httpHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "no metrics") {
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

// TestHTTPProfile: /api/profile needs the admin account, checks its
// seconds, takes GET only, answers a pprof CPU profile (gzip-compressed
// protobuf), and is refused while a profile is being taken.
func TestHTTPProfile(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table()}, testMetrics)
	base := "http://" + s.HTTPAddr().String()
	client := &http.Client{}
	defer client.CloseIdleConnections()

	if resp, _ := httpGet(t, client, base+"/api/profile?seconds=1", "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the admin account: %d, want 401", resp.StatusCode)
	}
	for _, v := range []string{"0", "61", "x", "1.5"} {
		resp, body := httpGet(t, client, base+"/api/profile?seconds="+v, testUser, testPassword)
		if resp.StatusCode != 400 || !strings.Contains(body, "from 1 to 60") {
			t.Errorf("seconds=%s: %d %s", v, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest(http.MethodHead, base+"/api/profile?seconds=1", nil)
	req.SetBasicAuth(testUser, testPassword)
	if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("HEAD: %v %v, want 405", resp, err)
	} else {
		resp.Body.Close()
	}

	// A profile being taken (as with --cpuprofile): refused.
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Skipf("a CPU profile is already on (go test -cpuprofile?): %v", err)
	}
	resp, body := httpGet(t, client, base+"/api/profile?seconds=1", testUser, testPassword)
	pprof.StopCPUProfile()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "already being taken") {
		t.Errorf("while profiling: %d %s, want 409 saying one is being taken", resp.StatusCode, body)
	}

	resp, body = httpGet(t, client, base+"/api/profile?seconds=1", testUser, testPassword)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(body, "\x1f\x8b") {
		t.Errorf("profile: %d %q %q..., want a gzip-compressed pprof profile", resp.StatusCode, resp.Header.Get("Content-Type"), body[:min(len(body), 20)])
	}
}
