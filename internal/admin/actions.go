package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"

	mp "github.com/galeon-db/galeon/internal/mysqlproto"
)

// POST /api/actions carries out what the dashboard's buttons ask for:
//
//	{"action": "drain",      "node": "node2"}  new transactions go elsewhere
//	{"action": "undrain",    "node": "node2"}
//	{"action": "switchover", "node": "node3"}  the writer role moves there
//	{"action": "plan",   "statement": "ALTER TABLE ...", "schema": "app", "method": "auto"}
//	                                           a schema change decided, not run
//	{"action": "run",    "id": "plan-1"}       run a plan, resume a stopped operation
//	{"action": "cancel", "id": "plan-1"}       forget a plan, stop or abandon an operation
//
// Each action is the SQL statement an operator would type at the admin
// prompt, run through the same engine: the tables' own validation decides,
// and the audit log records it with the user and "(http)". There is no
// second way to change anything.
//
// Browsers send a cached basic-auth login with any request to this
// origin, including a form another site posts. So a change also needs the
// X-Galeon-Action header and a JSON body, which a cross-site page cannot
// send without a CORS preflight this server never grants, and an Origin,
// when the browser sends one, of this very host.
var actionSQL = map[string]string{
	"drain":      "UPDATE servers SET admin_state = 'drain' WHERE name = '%s'",
	"undrain":    "UPDATE servers SET admin_state = 'active' WHERE name = '%s'",
	"switchover": "UPDATE writer SET node = '%s'",
	"run":        "UPDATE operations SET step = 'run' WHERE id = '%s'",
	"cancel":     "DELETE FROM operations WHERE id = '%s'",
}

// operationActions name an operation by id, not a node.
var operationActions = map[string]bool{"run": true, "cancel": true}

type actionRequest struct {
	Action string `json:"action"`
	Node   string `json:"node,omitempty"`
	// ID names a plan or an operation (run, cancel).
	ID string `json:"id,omitempty"`
	// Statement, Schema and Method are a schema change to plan.
	Statement string `json:"statement,omitempty"`
	Schema    string `json:"schema,omitempty"`
	Method    string `json:"method,omitempty"`
}

type actionResult struct {
	OK        bool   `json:"ok"`
	Statement string `json:"statement"`
	Rows      uint64 `json:"rows"`
}

// sqlString quotes s as a string literal of the admin SQL (MySQL's
// escapes): any text, a statement with quotes and backslashes included,
// reads back as itself.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// actionStatement is the statement an action runs, or a message saying
// what is wrong with the request.
func actionStatement(req actionRequest) (q, bad string) {
	if req.Action == "plan" {
		if strings.TrimSpace(req.Statement) == "" || len(req.Statement) > 16384 {
			return "", "plan: give the schema change in \"statement\" (at most 16 KiB)"
		}
		q = "INSERT INTO operations (statement, schema, method) VALUES (" + sqlString(req.Statement) + ", "
		if req.Schema == "" {
			q += "NULL"
		} else {
			q += sqlString(req.Schema)
		}
		return q + ", " + sqlString(orAuto(req.Method)) + ")", ""
	}
	tmpl, ok := actionSQL[req.Action]
	if !ok {
		return "", fmt.Sprintf("unknown action %q: use drain, undrain, switchover, plan, run or cancel", req.Action)
	}
	if operationActions[req.Action] {
		if !validNodeName(req.ID) {
			return "", fmt.Sprintf("bad operation id %q: see /api/tables/operations", req.ID)
		}
		return fmt.Sprintf(tmpl, req.ID), ""
	}
	if !validNodeName(req.Node) {
		return "", fmt.Sprintf("bad node name %q: letters, digits, '.', '_', ':' and '-', at most 64", req.Node)
	}
	return fmt.Sprintf(tmpl, req.Node), ""
}

func orAuto(m string) string {
	if m == "" {
		return "auto"
	}
	return m
}

func (s *Server) serveAction(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeJSONError(w, http.StatusMethodNotAllowed, "POST a JSON body {\"action\": \"drain|undrain|switchover\", \"node\": \"NAME\"}")
		return
	}
	if r.Header.Get("X-Galeon-Action") == "" {
		writeJSONError(w, http.StatusForbidden, "missing header X-Galeon-Action: send it with every action (cross-site pages cannot)")
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		writeJSONError(w, http.StatusUnsupportedMediaType, "send the action as Content-Type: application/json")
		return
	}
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || u.Host != r.Host {
			writeJSONError(w, http.StatusForbidden, "origin "+o+" may not act on this server")
			return
		}
	}
	var req actionRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 20000))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad action body ("+err.Error()+"): want {\"action\": \"drain|undrain|switchover\", \"node\": \"NAME\"}, {\"action\": \"plan\", \"statement\": \"ALTER TABLE ...\", \"schema\": \"DB\", \"method\": \"auto|toi|rsu\"} or {\"action\": \"run|cancel\", \"id\": \"ID\"}")
		return
	}
	q, bad := actionStatement(req)
	if bad != "" {
		writeJSONError(w, http.StatusBadRequest, bad)
		return
	}
	user, _, _ := r.BasicAuth()
	res, err := s.runAction(&session{user: user + " (http)", host: r.RemoteAddr}, q)
	switch {
	case err != nil:
		code := http.StatusConflict // the table refused it, as it would over SQL
		var se *mp.SQLError
		if !errors.As(err, &se) {
			code = http.StatusInternalServerError
		}
		writeJSONError(w, code, err.Error())
	case res.affected == 0 && operationActions[req.Action]:
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("no plan or operation %q: see /api/tables/operations", req.ID))
	case res.affected == 0:
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("no server named %q: see /api/tables/servers", req.Node))
	default:
		writeJSON(w, http.StatusOK, actionResult{OK: true, Statement: q, Rows: res.affected})
	}
}

// runAction runs one action's statement with the audit trail of a SQL
// session.
func (s *Server) runAction(sess *session, q string) (res *result, err error) {
	stmts, err := splitQuery(q)
	if err != nil || len(stmts) != 1 {
		return nil, fmt.Errorf("action statement %q does not split into one statement: %v", q, err)
	}
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("admin action panicked", "panic", v, "stack", string(debug.Stack()))
			res, err = nil, internalErr(v)
		}
		auditWrite(s.log, s.eng.cat, sess.user, q, stmts[0], res, err)
	}()
	return s.eng.exec(sess, stmts[0], q)
}

func validNodeName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	return strings.IndexFunc(n, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c))
	}) < 0
}
