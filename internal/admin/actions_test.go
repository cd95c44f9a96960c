package admin

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// actionTables are a servers and a writer table that accept what the
// proxy's do: admin_state 'drain' or 'active', and writer.node.
type actionTables struct {
	mu     sync.Mutex
	states map[string]string
	writer string
	// planned: the statements inserted into operations; gone: the ids
	// deleted from it; ran: those set to run.
	planned   [][]any
	gone, ran []string
}

func (a *actionTables) tables() []Table {
	servers := Table{Name: "servers", Columns: []Column{{Name: "name", Kind: Text}, {Name: "admin_state", Kind: Text}},
		Rows: func() [][]any {
			a.mu.Lock()
			defer a.mu.Unlock()
			var rows [][]any
			for _, n := range []string{"node1", "node2"} {
				rows = append(rows, []any{n, a.states[n]})
			}
			return rows
		},
		Accepts: OpUpdate,
		Apply: func(changes []Change) error {
			for _, ch := range changes {
				if st := ch.New[1]; st != "drain" && st != "active" {
					return errors.New("admin_state is 'drain' or 'active'")
				}
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			for _, ch := range changes {
				a.states[ch.Old[0].(string)] = ch.New[1].(string)
			}
			return nil
		}}
	writer := Table{Name: "writer", Columns: []Column{{Name: "node", Kind: Text}},
		Rows:    func() [][]any { a.mu.Lock(); defer a.mu.Unlock(); return [][]any{{a.writer}} },
		Accepts: OpUpdate,
		Apply: func(changes []Change) error {
			node := changes[0].New[0].(string)
			if node != "node1" && node != "node2" {
				return sqlErr(1105, "%s cannot take the writer role now", node)
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			a.writer = node
			return nil
		}}
	ops := Table{Name: "operations", Columns: []Column{{Name: "id", Kind: Text}, {Name: "statement", Kind: Text},
		{Name: "schema", Kind: Text, Nullable: true}, {Name: "method", Kind: Text, Nullable: true}, {Name: "step", Kind: Text, Nullable: true}},
		Rows:    func() [][]any { return [][]any{{"plan-1", "ALTER TABLE t ADD INDEX k (a)", "app", "rsu", "planned"}} },
		Accepts: OpInsert | OpUpdate | OpDelete,
		Apply: func(changes []Change) error {
			a.mu.Lock()
			defer a.mu.Unlock()
			switch ch := changes[0]; ch.Op() {
			case OpInsert:
				a.planned = append(a.planned, ch.New)
			case OpDelete:
				a.gone = append(a.gone, ch.Old[0].(string))
			default:
				a.ran = append(a.ran, ch.Old[0].(string)+":"+ch.New[4].(string))
			}
			return nil
		}}
	return []Table{servers, writer, ops}
}

func TestDashboardActions(t *testing.T) {
	a := &actionTables{states: map[string]string{"node1": "active", "node2": "active"}, writer: "node1"}
	var logs bytes.Buffer
	s := NewServer(Config{User: testUser, Password: testPassword, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, a.tables(), nil)
	h := s.httpHandler()
	post := func(body string, mod func(*http.Request)) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:6080/api/actions", strings.NewReader(body))
		r.SetBasicAuth(testUser, testPassword)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-Galeon-Action", "1")
		if mod != nil {
			mod(r)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}

	rec := post(`{"action":"drain","node":"node2"}`, nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `UPDATE servers SET admin_state = 'drain' WHERE name = 'node2'`) || a.states["node2"] != "drain" {
		t.Fatalf("drain: %d %s; node2 is %q", rec.Code, rec.Body, a.states["node2"])
	}
	if !strings.Contains(logs.String(), `msg="admin change"`) || !strings.Contains(logs.String(), `user="admin (http)"`) {
		t.Errorf("the drain is not in the audit log:\n%s", logs.String())
	}
	if rec := post(`{"action":"undrain","node":"node2"}`, nil); rec.Code != 200 || a.states["node2"] != "active" {
		t.Errorf("undrain: %d %s", rec.Code, rec.Body)
	}
	if rec := post(`{"action":"switchover","node":"node2"}`, nil); rec.Code != 200 || a.writer != "node2" {
		t.Errorf("switchover: %d %s; writer %s", rec.Code, rec.Body, a.writer)
	}

	// A schema change to plan reaches the table as written, quotes and
	// backslashes included; run and cancel name the plan.
	stmt := `ALTER TABLE t ADD COLUMN c VARCHAR(9) DEFAULT 'it''s \\ \\%'`
	if rec := post(`{"action":"plan","statement":`+strconv.Quote(stmt)+`,"schema":"app"}`, nil); rec.Code != 200 || len(a.planned) != 1 ||
		a.planned[0][1] != stmt || a.planned[0][2] != "app" || a.planned[0][3] != "auto" {
		t.Errorf("plan: %d %s; the table got %q", rec.Code, rec.Body, a.planned)
	}
	if rec := post(`{"action":"run","id":"plan-1"}`, nil); rec.Code != 200 || len(a.ran) != 1 || a.ran[0] != "plan-1:run" {
		t.Errorf("run: %d %s; %q", rec.Code, rec.Body, a.ran)
	}
	if rec := post(`{"action":"cancel","id":"plan-1"}`, nil); rec.Code != 200 || len(a.gone) != 1 || a.gone[0] != "plan-1" {
		t.Errorf("cancel: %d %s; %q", rec.Code, rec.Body, a.gone)
	}

	for _, c := range []struct {
		what, body string
		mod        func(*http.Request)
		code       int
		says       string
	}{
		{"the table refuses", `{"action":"switchover","node":"node9"}`, nil, 409, "cannot take the writer role"},
		{"unknown node", `{"action":"drain","node":"node9"}`, nil, 404, `no server named`},
		{"SQL in the node name", `{"action":"drain","node":"x' OR '1'='1"}`, nil, 400, "bad node name"},
		{"unknown action", `{"action":"destroy","node":"node1"}`, nil, 400, "unknown action"},
		{"unknown plan", `{"action":"run","id":"plan-9"}`, nil, 404, "no plan or operation"},
		{"SQL in an id", `{"action":"cancel","id":"x' OR '1'='1"}`, nil, 400, "bad operation id"},
		{"plan without a statement", `{"action":"plan","schema":"app"}`, nil, 400, "give the schema change"},
		{"extra fields", `{"action":"drain","node":"node1","force":true}`, nil, 400, "bad action body"},
		{"no login", `{"action":"drain","node":"node1"}`, func(r *http.Request) { r.Header.Del("Authorization") }, 401, "authentication required"},
		{"wrong password", `{"action":"drain","node":"node1"}`, func(r *http.Request) { r.SetBasicAuth(testUser, "nope") }, 401, "authentication required"},
		{"a form posted by another site", `action=drain&node=node1`, func(r *http.Request) {
			r.Header.Del("X-Galeon-Action")
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}, 403, "X-Galeon-Action"},
		{"not JSON", `{"action":"drain","node":"node1"}`, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, 415, "application/json"},
		{"another origin", `{"action":"drain","node":"node1"}`, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, 403, "may not act"},
		{"GET", ``, func(r *http.Request) { r.Method = http.MethodGet }, 405, "POST"},
	} {
		rec := post(c.body, c.mod)
		if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.says) {
			t.Errorf("%s: %d %s; want %d saying %q", c.what, rec.Code, rec.Body, c.code, c.says)
		}
	}
	if a.states["node1"] != "active" || a.writer != "node2" {
		t.Errorf("a refused action changed something: node1 %q, writer %s", a.states["node1"], a.writer)
	}
}

func TestDashboardIsBehindTheLogin(t *testing.T) {
	s := NewServer(Config{User: testUser, Password: testPassword, Logger: testLogger(t)}, nil, nil)
	h := s.httpHandler()
	get := func(path string, login bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		if login {
			r.SetBasicAuth(testUser, testPassword)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	if rec := get("/ui/", false); rec.Code != 401 || rec.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("/ui/ without login: %d %v", rec.Code, rec.Header())
	}
	rec := get("/ui/", true)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<title>galeon</title>") || rec.Header().Get("X-Frame-Options") != "DENY" {
		t.Errorf("/ui/: %d %v %.200s", rec.Code, rec.Header(), rec.Body)
	}
	if rec := get("/ui/app.js", true); rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), "javascript") {
		t.Errorf("/ui/app.js: %d %v", rec.Code, rec.Header())
	}
	if rec := get("/", false); rec.Code != 302 || rec.Header().Get("Location") != "/ui/" {
		t.Errorf("/: %d %v", rec.Code, rec.Header())
	}
}
