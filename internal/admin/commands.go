package admin

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	mp "github.com/galeon-db/galeon/internal/mysqlproto"
)

// Command-phase handling. After any error the session stays open, except
// where the byte stream itself can no longer be trusted (oversized,
// misnumbered or empty packets).

const (
	// COM_SET_OPTION values.
	optionMultiStatementsOn  = 0
	optionMultiStatementsOff = 1

	// prepareRefused is the answer to COM_STMT_PREPARE.
	prepareRefused = "prepared statements are not supported on the admin interface; use plain queries"
)

// commands reads and answers commands until the client quits or the
// connection fails.
func (sc *sqlConn) commands() error {
	for {
		sc.c.ResetSeq()
		sc.c.ReleaseLargeBuffer()
		pkt, err := sc.c.ReadPacket()
		if err != nil {
			return sc.readFailed(err, sc.caps)
		}
		if len(pkt) == 0 {
			return sc.fatal(mp.NewSQLError(mp.ErMalformedPacket, "Malformed communication packet: empty command"), sc.caps)
		}
		quit, err := sc.command(mp.Command(pkt[0]), pkt)
		if err != nil || quit {
			return err
		}
		if err := sc.c.Flush(); err != nil {
			return err
		}
	}
}

// command answers one command. pkt is only valid until the next read.
func (sc *sqlConn) command(cmd mp.Command, pkt []byte) (quit bool, err error) {
	switch cmd {
	case mp.ComQuit:
		return true, nil
	case mp.ComPing, mp.ComResetConnection:
		return false, sc.ok(0, mp.ServerStatusAutocommit)
	case mp.ComInitDB:
		sc.sess.db = string(pkt[1:])
		return false, sc.ok(0, mp.ServerStatusAutocommit)
	case mp.ComQuery:
		q, err := mp.QueryText(pkt, sc.caps)
		if err != nil {
			return true, sc.fatal(mp.NewSQLError(mp.ErMalformedPacket, "Malformed communication packet"), sc.caps)
		}
		return false, sc.query(string(q))
	case mp.ComFieldList:
		return false, sc.fieldList(pkt[1:])
	case mp.ComStmtPrepare:
		return false, sc.sendErr(sqlErr(erUnsupportedPS, prepareRefused))
	case mp.ComStmtExecute, mp.ComStmtFetch, mp.ComStmtReset:
		return false, sc.sendErr(sqlErr(mp.ErUnknownStmtHandler, "Unknown prepared statement handler: %s", prepareRefused))
	case mp.ComStmtClose, mp.ComStmtSendLongData:
		return false, nil // no response, by protocol
	case mp.ComSetOption:
		if len(pkt) >= 3 {
			switch int(pkt[1]) | int(pkt[2])<<8 {
			case optionMultiStatementsOn:
				sc.caps |= mp.ClientMultiStatements
			case optionMultiStatementsOff:
				sc.caps &^= mp.ClientMultiStatements
			}
		}
		return false, sc.c.WriteEOF(0, mp.ServerStatusAutocommit, sc.caps)
	case mp.ComStatistics:
		st := (&env{eng: sc.srv.eng, sess: &sc.sess}).status()
		var b strings.Builder
		for i, r := range st {
			if i > 0 {
				b.WriteString("  ")
			}
			fmt.Fprintf(&b, "%s: %s", strings.ReplaceAll(r[0].(string), "_", " "), r[1])
		}
		return false, sc.c.WritePacket([]byte(b.String()))
	}
	return false, sc.sendErr(sqlErr(mp.ErUnknownComError, "Unknown command %s on the admin interface", cmd))
}

// query splits and runs a COM_QUERY. Several statements need
// CLIENT_MULTI_STATEMENTS; each then gets its own response, flagged
// SERVER_MORE_RESULTS_EXISTS except the last, and the first error ends
// the batch, as with MySQL.
func (sc *sqlConn) query(q string) error {
	stmts, err := splitQuery(q)
	if err != nil {
		return sc.sendErr(err)
	}
	if len(stmts) > 1 && sc.caps&mp.ClientMultiStatements == 0 {
		return sc.sendErr(sqlErr(mp.ErParseError,
			"You have an error in your SQL syntax: %d statements in one query need the multi-statements option (go-sql-driver: multiStatements=true); send them one at a time", len(stmts)))
	}
	for i, st := range stmts {
		res, err := sc.run(st, q)
		if isWrite(st) {
			sc.audit(st.src, st, res, err)
		}
		if err != nil {
			return sc.sendErr(err)
		}
		status := mp.ServerStatusAutocommit
		if i < len(stmts)-1 {
			status |= mp.ServerMoreResultsExists
		}
		if res.isSet() {
			if sc.buf, err = writeResultSet(sc.c, sc.buf, res, sc.caps, status); err != nil {
				return err
			}
		} else if err := sc.ok(res.affected, status); err != nil {
			return err
		}
	}
	return nil
}

// run executes one statement, turning a panic in a table function into
// an error for the operator and a log line with the stack, so one bad
// table cannot take down the proxy.
func (sc *sqlConn) run(st *statement, q string) (res *result, err error) {
	defer func() {
		if r := recover(); r != nil {
			sc.log.Error("admin statement panicked", "panic", r, "stack", string(debug.Stack()))
			res, err = nil, internalErr(r)
		}
	}()
	return sc.srv.eng.exec(&sc.sess, st, q)
}

// fieldList answers COM_FIELD_LIST (table name, NUL, column wildcard),
// which the mysql and mariadb clients send to complete column names.
func (sc *sqlConn) fieldList(body []byte) error {
	name, wild, _ := bytes.Cut(body, []byte{0})
	t := sc.srv.eng.cat.lookup(string(name))
	if t == nil {
		return sc.sendErr(sc.srv.eng.cat.unknownTable(string(name)))
	}
	for _, c := range t.Columns {
		if len(wild) > 0 && !likeMatch(c.Name, string(wild)) {
			continue
		}
		col := resultCol{name: c.Name, table: t.Name, orgName: c.Name, kind: c.Kind}
		sc.buf = appendColumnDef(sc.buf[:0], col, minTextLength, true)
		if err := sc.c.WritePacket(sc.buf); err != nil {
			return err
		}
	}
	return sc.c.WriteEOF(0, mp.ServerStatusAutocommit, sc.caps)
}

func (sc *sqlConn) ok(affected uint64, status mp.StatusFlag) error {
	return sc.c.WriteOK(&mp.OKPacket{AffectedRows: affected, Status: status}, sc.caps)
}

// sendErr sends an error and keeps the session open. Errors that are not
// already SQL errors are internal and reported as 1105.
func (sc *sqlConn) sendErr(err error) error {
	var se *mp.SQLError
	if !errors.As(err, &se) {
		se = sqlErr(mp.ErUnknownError, "%s", err.Error())
	}
	return sc.c.WriteErr(se, sc.caps)
}
