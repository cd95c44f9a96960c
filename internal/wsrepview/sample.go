package wsrepview

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"
)

// Sample is one reading of a node's SHOW GLOBAL STATUS LIKE 'wsrep%'.
type Sample struct {
	Node string
	Time time.Time
	Vars map[string]string // lower-case names
	Err  error             // set when the node could not be read
}

// Fetch reads one sample from db within ctx.
func Fetch(ctx context.Context, node string, db *sql.DB) Sample {
	s := Sample{Node: node, Time: time.Now(), Vars: map[string]string{}}
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS LIKE 'wsrep%'")
	if err != nil {
		s.Err = err
		return s
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			s.Err = err
			return s
		}
		s.Vars[strings.ToLower(k)] = v
	}
	s.Err = rows.Err()
	if s.Err == nil && len(s.Vars) == 0 {
		s.Err = errNotGalera
	}
	if s.Err == nil {
		// The settings that decide what a crash of every node loses
		// (galera.DurabilityRisk); an account that cannot read them
		// leaves them out.
		var flush, sync, logBin sql.NullString
		if db.QueryRowContext(ctx, "SELECT @@global.innodb_flush_log_at_trx_commit, @@global.sync_binlog, IF(@@global.log_bin, 'ON', 'OFF')").Scan(&flush, &sync, &logBin) == nil {
			s.Vars["innodb_flush_log_at_trx_commit"], s.Vars["sync_binlog"], s.Vars["log_bin"] = flush.String, sync.String, logBin.String
		}
	}
	return s
}

type notGalera struct{}

func (notGalera) Error() string {
	return "no wsrep status variables: is this a Galera node (wsrep_on=ON, wsrep_provider set)?"
}

var errNotGalera error = notGalera{}

func (s Sample) int(name string) int64 {
	v, _ := strconv.ParseInt(s.Vars[name], 10, 64)
	return v
}

func (s Sample) float(name string) float64 {
	v, _ := strconv.ParseFloat(s.Vars[name], 64)
	return v
}
