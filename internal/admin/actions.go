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
}

type actionRequest struct {
	Action string `json:"action"`
	Node   string `json:"node"`
}

type actionResult struct {
	OK        bool   `json:"ok"`
	Statement string `json:"statement"`
	Rows      uint64 `json:"rows"`
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
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad action body ("+err.Error()+"): want {\"action\": \"drain|undrain|switchover\", \"node\": \"NAME\"}")
		return
	}
	tmpl, ok := actionSQL[req.Action]
	if !ok {
		writeJSONError(w, http.StatusBadRequest, fmt.Sprintf("unknown action %q: use drain, undrain or switchover", req.Action))
		return
	}
	if !validNodeName(req.Node) {
		writeJSONError(w, http.StatusBadRequest, fmt.Sprintf("bad node name %q: letters, digits, '.', '_', ':' and '-', at most 64", req.Node))
		return
	}
	q := fmt.Sprintf(tmpl, req.Node)
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
