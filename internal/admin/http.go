package admin

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
)

// The HTTP endpoint:
//
//	GET /metrics              Prometheus text format, no auth (scrapers)
//	GET /api/health           {"status":"ok"}, no auth (load balancers)
//	GET /api/tables           the tables, their columns and what they accept
//	GET /api/tables/{name}    the rows as an array of objects (?limit=N: the first N)
//	POST /api/actions         drain, undrain, switchover (see actions.go)
//	GET /api/profile          a CPU profile over ?seconds=N (profile.go)
//	GET /ui/                  the web dashboard (package dashboard)
//
// /api/* except health, and /ui/, need basic auth with the admin account.
// Errors are JSON ({"error": "..."}) so scripts need one decoder.

func (s *Server) httpHandler() http.Handler {
	return http.HandlerFunc(s.route)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("admin HTTP handler panicked", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			writeJSONError(w, http.StatusInternalServerError, "internal error")
		}
	}()
	path := r.URL.Path
	switch {
	case path == "/metrics":
		if !allowGet(w, r) {
			return
		}
		if s.metrics == nil {
			writeJSONError(w, http.StatusNotFound, "this server exposes no metrics")
			return
		}
		s.metrics.ServeHTTP(w, r)
	case path == "/api/health":
		if allowGet(w, r) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		}
	case path == "/":
		http.Redirect(w, r, "/ui/", http.StatusFound)
	case path == "/ui" || strings.HasPrefix(path, "/ui/"):
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="galeon admin", charset="UTF-8"`)
			writeJSONError(w, http.StatusUnauthorized, "authentication required: use the admin user and password")
			return
		}
		if path == "/ui" {
			http.Redirect(w, r, "/ui/", http.StatusFound)
			return
		}
		if allowGet(w, r) {
			s.ui.ServeHTTP(w, r)
		}
	case path == "/api" || strings.HasPrefix(path, "/api/"):
		// Authenticate before routing, so that 404s do not tell an
		// unauthenticated caller which tables exist.
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="galeon admin", charset="UTF-8"`)
			writeJSONError(w, http.StatusUnauthorized, "authentication required: use the admin user and password")
			return
		}
		s.routeAPI(w, r, path)
	default:
		writeJSONError(w, http.StatusNotFound, "not found: try /ui/, /metrics, /api/health, /api/tables or /api/tables/{name}")
	}
}

func (s *Server) routeAPI(w http.ResponseWriter, r *http.Request, path string) {
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/api"), "/")
	switch {
	case rest == "actions":
		s.serveAction(w, r)
	case rest == "profile":
		s.serveProfile(w, r)
	case rest == "tables" || rest == "tables/":
		if allowGet(w, r) {
			s.serveTableList(w)
		}
	case strings.HasPrefix(rest, "tables/") && !strings.Contains(rest[len("tables/"):], "/"):
		name := rest[len("tables/"):]
		t := s.eng.cat.lookup(name)
		if t == nil {
			writeJSONError(w, http.StatusNotFound, "no table "+strconv.Quote(name)+"; tables: "+s.eng.cat.names())
			return
		}
		if allowGet(w, r) {
			s.serveRows(w, r, t)
		}
	default:
		writeJSONError(w, http.StatusNotFound, "not found: try /api/tables, /api/tables/{name}, /api/profile or POST /api/actions")
	}
}

// allowGet answers 405 for anything but GET and HEAD: apart from
// POST /api/actions, which runs SQL, the HTTP endpoint only reads;
// changes go through SQL where they are type-checked and audited.
func allowGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	writeJSONError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here: change settings with SQL on the admin port (the dashboard's actions are POST /api/actions)")
	return false
}

// authorized checks basic auth in constant time for both fields.
func (s *Server) authorized(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	u := subtle.ConstantTimeCompare([]byte(user), []byte(s.cfg.User))
	p := subtle.ConstantTimeCompare([]byte(pass), []byte(s.cfg.Password))
	return u&p == 1
}

// tableInfo is one entry of /api/tables.
type tableInfo struct {
	Name       string       `json:"name"`
	Columns    []columnInfo `json:"columns"`
	Privileges []string     `json:"privileges"`
}

type columnInfo struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

func (s *Server) serveTableList(w http.ResponseWriter) {
	out := make([]tableInfo, 0, len(s.eng.cat.tables))
	for _, t := range s.eng.cat.tables {
		ti := tableInfo{Name: t.Name, Privileges: privileges(t)}
		for _, c := range t.Columns {
			ti.Columns = append(ti.Columns, columnInfo{Name: c.Name, Type: c.Kind.String(), Nullable: c.Nullable})
		}
		out = append(out, ti)
	}
	writeJSON(w, http.StatusOK, out)
}

// serveRows writes t's rows; ?limit=N keeps only the first N, as SQL's
// LIMIT would (the newest of the events table, which lists newest first
// and which the dashboard polls).
func (s *Server) serveRows(w http.ResponseWriter, r *http.Request, t *Table) {
	rows := t.readRows()
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSONError(w, http.StatusBadRequest, "limit="+v+": want a number of rows, 0 or more")
			return
		}
		rows = rows[:min(n, len(rows))]
	}
	b := []byte{'['}
	for i, row := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONRow(b, t.Columns, row)
	}
	b = append(b, ']', '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// appendJSONRow writes one row as an object with keys in column order
// (encoding/json would sort map keys, and a struct needs fixed fields).
func appendJSONRow(b []byte, cols []Column, row []any) []byte {
	b = append(b, '{')
	for i, c := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(c.Name)
		b = append(b, k...)
		b = append(b, ':')
		b = appendJSONValue(b, row[i])
	}
	return append(b, '}')
}

// appendJSONValue writes a canonical value. NaN and infinities, which
// JSON cannot represent as numbers, are written as strings.
func appendJSONValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return append(b, `"NaN"`...)
		case math.IsInf(x, 1):
			return append(b, `"+Inf"`...)
		case math.IsInf(x, -1):
			return append(b, `"-Inf"`...)
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	s, _ := formatValue(v)
	enc, _ := json.Marshal(s)
	return append(b, enc...)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(v); err != nil {
		code = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"encoding failed"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

func writeJSONError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
