// Command gomatrix is the driver-matrix scenario program for
// go-sql-driver/mysql (MATRIX_DRIVER=go-sql-driver). Protocol and
// scenarios: test/drivers/README.md. One JSON line per scenario on stdout;
// everything else goes to stderr.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
)

const scenarioTimeout = 60 * time.Second

var env = map[string]string{}

func mustEnv(keys ...string) {
	for _, k := range keys {
		v, ok := os.LookupEnv(k)
		if !ok {
			fmt.Fprintf(os.Stderr, "environment variable %s is not set (see test/drivers/README.md)\n", k)
			os.Exit(2)
		}
		env[k] = v
	}
}

// errUnsupported marks a feature the driver does not have.
type errUnsupported string

func (e errUnsupported) Error() string { return string(e) }

// measured is the wall time of a scenario's measured part (0: all of it).
var measured time.Duration

// detail is what a passing scenario says about how it used the driver.
var detail string

// open returns a database handle limited to one connection, so that every
// statement of a scenario runs in one session, with mod applied.
func open(mod func(*mysql.Config)) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = env["MATRIX_USER"], env["MATRIX_PASSWORD"], "tcp",
		env["MATRIX_HOST"]+":"+env["MATRIX_PORT"], env["MATRIX_DB"]
	cfg.Timeout = 10 * time.Second
	cfg.MaxAllowedPacket = 0 // ask the server
	if mod != nil {
		mod(cfg)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, nil
}

func table(ctx context.Context, db *sql.DB, name, cols string) (string, error) {
	t := env["MATRIX_PREFIX"] + name
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
		return "", err
	}
	_, err := db.ExecContext(ctx, "CREATE TABLE "+t+" ("+cols+")")
	return t, err
}

func one(ctx context.Context, db *sql.DB, q string, args ...any) (string, error) {
	var v sql.NullString
	err := db.QueryRowContext(ctx, q, args...).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "(no row)", nil
	}
	if !v.Valid {
		return "NULL", err
	}
	return v.String, err
}

// render is the canonical text of one fetched value: NULL, the text, or
// hex: and the bytes when they are not UTF-8.
func render(v []byte) string {
	switch {
	case v == nil:
		return "NULL"
	case !utf8.Valid(v):
		return "hex:" + hex.EncodeToString(v)
	}
	return string(v)
}

func sum256(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// rowsText renders every row of rs as "a|b|c\n".
func rowsText(rs *sql.Rows) (string, int, error) {
	cols, err := rs.Columns()
	if err != nil {
		return "", 0, err
	}
	var sb strings.Builder
	n := 0
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return "", 0, err
		}
		for i, v := range vals {
			if i > 0 {
				sb.WriteByte('|')
			}
			sb.WriteString(render(v))
		}
		sb.WriteByte('\n')
		n++
	}
	return sb.String(), n, rs.Err()
}

func connect(ctx context.Context) (string, error) {
	// The driver's defaults: only address, user, password and database.
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = env["MATRIX_USER"], env["MATRIX_PASSWORD"], "tcp",
		env["MATRIX_HOST"]+":"+env["MATRIX_PORT"], env["MATRIX_DB"]
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return "", err
	}
	defer db.Close()
	v, err := one(ctx, db, "SELECT 1+1")
	detail = "go-sql-driver/mysql " + driverVersion() + " (pure Go), database/sql"
	return "select=" + v, err
}

// driverVersion is the go-sql-driver/mysql module version built in.
func driverVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/go-sql-driver/mysql" {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}

func preparedTypes(ctx context.Context) (string, error) {
	db, err := open(nil) // go-sql-driver prepares on the server by default
	if err != nil {
		return "", err
	}
	defer db.Close()
	t, err := table(ctx, db, "types", "id INT PRIMARY KEY, ti TINYINT, i INT, bu BIGINT UNSIGNED, de DECIMAL(20,6), fl FLOAT,"+
		" du DOUBLE, da DATE, dt DATETIME(6), tm TIME, ts TIMESTAMP NULL, vc VARCHAR(64) CHARACTER SET utf8mb4,"+
		" tx TEXT CHARACTER SET utf8mb4, bl BLOB, js JSON, bi BIT(8), en ENUM('a','b','c')")
	if err != nil {
		return "", err
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	ins := "INSERT INTO " + t + " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
	if _, err := db.ExecContext(ctx, ins, 1, -128, math.MaxInt32, uint64(math.MaxUint64), "12345678901234.123456", 1.5, math.Pi,
		"2024-02-29", "2024-02-29 23:59:58.123456", "12:34:56", "2024-01-15 10:20:30", "héllo wörld 🚀",
		strings.Repeat("text åäö ", 200), all, `{"a": 1, "b": [true, null, "x"]}`, []byte{0xA5}, "b"); err != nil {
		return "", err
	}
	nulls := make([]any, 17)
	nulls[0] = 2
	if _, err := db.ExecContext(ctx, ins, nulls...); err != nil {
		return "", err
	}
	rs, err := db.QueryContext(ctx, "SELECT * FROM "+t+" WHERE id IN (?, ?) ORDER BY id", 1, 2)
	if err != nil {
		return "", err
	}
	defer rs.Close()
	out, n, err := rowsText(rs)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "prepared_types rendering:\n%s", out)
	want := strings.Join([]string{"1", "-128", "2147483647", "18446744073709551615", "12345678901234.123456", "1.5",
		"3.141592653589793", "2024-02-29", "2024-02-29 23:59:58.123456", "12:34:56", "2024-01-15 10:20:30",
		"héllo wörld 🚀", strings.Repeat("text åäö ", 200), "hex:" + hex.EncodeToString(all),
		`{"a": 1, "b": [true, null, "x"]}`, "hex:a5", "b"}, "|") + "\n2" + strings.Repeat("|NULL", 16) + "\n"
	if out != want {
		return "", fmt.Errorf("values read back differ from those inserted: %s", firstDiff(want, out))
	}
	detail = "server-side prepared statements (the default, interpolateParams=false)"
	return fmt.Sprintf("rows=%d sha256=%s", n, sum256([]byte(out))), nil
}

// firstDiff shows where got first differs from want.
func firstDiff(want, got string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	clip := func(s string) string {
		s = s[i:]
		if len(s) > 60 {
			s = s[:60]
		}
		return s
	}
	return fmt.Sprintf("at byte %d: want %q, got %q", i, clip(want), clip(got))
}

func batch(ctx context.Context) (string, error) {
	// database/sql has no batch API: a prepared INSERT executed 1,000
	// times inside one transaction, as Go programs do.
	db, err := open(nil)
	if err != nil {
		return "", err
	}
	defer db.Close()
	t, err := table(ctx, db, "batch", "id INT PRIMARY KEY, v INT")
	if err != nil {
		return "", err
	}
	start := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	st, err := tx.PrepareContext(ctx, "INSERT INTO "+t+" (id, v) VALUES (?, ?)")
	if err != nil {
		return "", err
	}
	for i := 1; i <= 1000; i++ {
		if _, err := st.ExecContext(ctx, i, i); err != nil {
			return "", err
		}
	}
	st.Close()
	if err := tx.Commit(); err != nil {
		return "", err
	}
	measured = time.Since(start)
	detail = "no batch API in database/sql: one prepared INSERT executed 1,000 times in a transaction"
	n, err := one(ctx, db, "SELECT COUNT(*) FROM "+t)
	if err != nil {
		return "", err
	}
	s, err := one(ctx, db, "SELECT SUM(v) FROM "+t)
	return "rows=" + n + " sum=" + s, err
}

func transactions(ctx context.Context) (string, error) {
	db, err := open(nil)
	if err != nil {
		return "", err
	}
	defer db.Close()
	t, err := table(ctx, db, "trx", "id INT PRIMARY KEY")
	if err != nil {
		return "", err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	for _, q := range []string{"INSERT INTO " + t + " VALUES (1)", "SAVEPOINT sp1", "INSERT INTO " + t + " VALUES (2)", "ROLLBACK TO SAVEPOINT sp1"} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return "", err
		}
	}
	if err := tx.Commit(); err != nil {
		return "", err
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+t+" VALUES (3)"); err != nil {
		return "", err
	}
	if err := tx.Rollback(); err != nil {
		return "", err
	}
	v, err := one(ctx, db, "SELECT IFNULL(GROUP_CONCAT(id ORDER BY id), '') FROM "+t)
	return "rows=" + v, err
}

func multiStatement(ctx context.Context) (string, error) {
	db, err := open(func(c *mysql.Config) { c.MultiStatements = true })
	if err != nil {
		return "", err
	}
	defer db.Close()
	t := env["MATRIX_PREFIX"] + "multi"
	rs, err := db.QueryContext(ctx, "DROP TABLE IF EXISTS "+t+"; CREATE TABLE "+t+" (id INT PRIMARY KEY);"+
		" INSERT INTO "+t+" VALUES (1),(2),(3); SELECT COUNT(*) AS n FROM "+t+";"+
		" SELECT 'x' AS b, 2 AS c UNION ALL SELECT 'y', 3; UPDATE "+t+" SET id = id + 10 WHERE id > 1;"+
		" SELECT SUM(id) FROM "+t)
	if err != nil {
		return "", err
	}
	defer rs.Close()
	var parts []string
	for {
		out, _, err := rowsText(rs)
		if err != nil {
			return "", err
		}
		if out != "" {
			parts = append(parts, strings.TrimSpace(strings.ReplaceAll(out, "\n", ";")))
		}
		if !rs.NextResultSet() {
			break
		}
	}
	detail = "multiStatements=true, Rows.NextResultSet()"
	return "sets=[" + strings.Join(parts, "] [") + "]", rs.Err()
}

func procedureOut(ctx context.Context) (string, error) {
	// go-sql-driver has no OUT parameters: CALL p(?, @b, @x), then SELECT.
	db, err := open(nil)
	if err != nil {
		return "", err
	}
	defer db.Close()
	p := env["MATRIX_PREFIX"] + "proc"
	for _, q := range []string{"DROP PROCEDURE IF EXISTS " + p, "CREATE PROCEDURE " + p + "(IN a INT, OUT b INT, INOUT x INT) BEGIN" +
		" SET b = a * 2; SET x = x + a; SELECT a AS a, 'first' AS s; SELECT seq FROM seq_1_to_3; END", "SET @x = 10"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return "", err
		}
	}
	rs, err := db.QueryContext(ctx, "CALL "+p+"(?, @b, @x)", 5)
	if err != nil {
		return "", err
	}
	var parts []string
	for {
		out, _, err := rowsText(rs)
		if err != nil {
			rs.Close()
			return "", err
		}
		if out != "" {
			parts = append(parts, strings.TrimSpace(strings.ReplaceAll(out, "\n", ";")))
		}
		if !rs.NextResultSet() {
			break
		}
	}
	rs.Close()
	out, err := one(ctx, db, "SELECT CONCAT(@b, ' ', @x)")
	detail = "no OUT parameters in database/sql: CALL p(?, @b, @x), then SELECT @b, @x"
	return "sets=[" + strings.Join(parts, "] [") + "] b_x=" + out, err
}

// pseudoRandom returns deterministic bytes (xorshift32), the same in both runs.
func pseudoRandom(n int, seed uint32) []byte {
	b := make([]byte, n)
	x := max(seed, 1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func large(mib int) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		data := pseudoRandom(mib<<20, uint32(mib))
		db, err := open(nil)
		if err != nil {
			return "", err
		}
		defer db.Close()
		t, err := table(ctx, db, fmt.Sprintf("large%d", mib), "id INT PRIMARY KEY, b LONGBLOB")
		if err != nil {
			return "", err
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO "+t+" VALUES (?, ?)", 1, data); err != nil {
			return "", err
		}
		var back []byte
		if err := db.QueryRowContext(ctx, "SELECT b FROM "+t+" WHERE id = ?", 1).Scan(&back); err != nil {
			return "", err
		}
		detail = "one []byte parameter of a server-side prepared INSERT"
		return fmt.Sprintf("len=%d sha256=%s same=%v", len(back), sum256(back), string(back) == string(data)), nil
	}
}

func stream(ctx context.Context) (string, error) {
	db, err := open(nil) // rows are read from the socket as Next asks for them
	if err != nil {
		return "", err
	}
	defer db.Close()
	rs, err := db.QueryContext(ctx, "SELECT seq, MD5(seq) FROM seq_1_to_200000")
	if err != nil {
		return "", err
	}
	defer rs.Close()
	h := sha256.New()
	n := 0
	var a, b string
	for rs.Next() {
		if err := rs.Scan(&a, &b); err != nil {
			return "", err
		}
		io.WriteString(h, a+","+b+"\n")
		n++
	}
	detail = "Rows.Next() reads each row from the socket as it is asked for (the driver never buffers a result)"
	return fmt.Sprintf("rows=%d sha256=%s", n, hex.EncodeToString(h.Sum(nil))), rs.Err()
}

func cursorFetch(context.Context) (string, error) {
	return "", errUnsupported("go-sql-driver has no server-side cursor (COM_STMT_FETCH)")
}

func errorsScenario(ctx context.Context) (string, error) {
	db, err := open(nil)
	if err != nil {
		return "", err
	}
	defer db.Close()
	t, err := table(ctx, db, "err", "id INT PRIMARY KEY")
	if err != nil {
		return "", err
	}
	for _, q := range []string{"INSERT INTO " + t + " VALUES (1)", "SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO'"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return "", err
		}
	}
	var out []string
	for _, bad := range []string{"SELEC 1", "INSERT INTO " + t + " VALUES (1)", "INSERT INTO " + t + " VALUES (1/0)"} {
		code := "no error"
		if _, err := db.ExecContext(ctx, bad); err != nil {
			var me *mysql.MySQLError
			if !errors.As(err, &me) {
				return "", err
			}
			code = fmt.Sprintf("%d/%s", me.Number, string(me.SQLState[:]))
		}
		v, err := one(ctx, db, "SELECT 1")
		if err != nil {
			return "", err
		}
		out = append(out, code+" then "+v)
	}
	return strings.Join(out, "; "), nil
}

func warnings(ctx context.Context) (string, error) {
	db, err := open(nil)
	if err != nil {
		return "", err
	}
	defer db.Close()
	t, err := table(ctx, db, "ai", "id INT AUTO_INCREMENT PRIMARY KEY, v INT")
	if err != nil {
		return "", err
	}
	var out []string
	add := func(label, q string) error {
		v, err := one(ctx, db, q)
		out = append(out, label+"="+v)
		return err
	}
	if err := add("cast", "SELECT CAST('abc' AS SIGNED)"); err != nil {
		return "", err
	}
	// go-sql-driver has no warnings API: SHOW WARNINGS on the same connection.
	rs, err := db.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		return "", err
	}
	var codes []string
	for rs.Next() {
		var level, code, msg string
		if err := rs.Scan(&level, &code, &msg); err != nil {
			rs.Close()
			return "", err
		}
		codes = append(codes, code)
	}
	rs.Close()
	out = append(out, "warnings=["+strings.Join(codes, ",")+"]")
	if err := add("warning_count", "SELECT @@warning_count"); err != nil {
		return "", err
	}
	res, err := db.ExecContext(ctx, "INSERT INTO "+t+" (v) VALUES (10)")
	if err != nil {
		return "", err
	}
	id, err := one(ctx, db, "SELECT id FROM "+t) // the plain SELECT
	if err != nil {
		return "", err
	}
	var lid, rc string
	if err := db.QueryRowContext(ctx, "SELECT LAST_INSERT_ID(), ROW_COUNT()").Scan(&lid, &rc); err != nil {
		return "", err
	}
	drv, _ := res.LastInsertId()
	if lid == id && fmt.Sprint(drv) == id {
		out = append(out, "last_insert_id=inserted id")
	} else {
		out = append(out, fmt.Sprintf("last_insert_id=%s (driver %d) but the row has id %s", lid, drv, id))
	}
	out = append(out, "row_count="+rc)
	if _, err := one(ctx, db, "SELECT SQL_CALC_FOUND_ROWS seq FROM seq_1_to_50 LIMIT 1"); err != nil {
		return "", err
	}
	err = add("found_rows", "SELECT FOUND_ROWS()")
	detail = "no warnings API in go-sql-driver: SHOW WARNINGS on the same (only) connection"
	return strings.Join(out, " "), err
}

func sessionVars(ctx context.Context) (string, error) {
	db, err := open(nil)
	if err != nil {
		return "", err
	}
	defer db.Close()
	for _, q := range []string{"SET time_zone = '+03:00'", "SET sql_mode = 'ANSI_QUOTES,STRICT_ALL_TABLES'",
		"SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci", "SET @matrix_uv = 42"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return "", err
		}
	}
	var out []string
	for _, v := range []string{"@@time_zone", "@@sql_mode", "@@character_set_connection", "@@collation_connection", "@matrix_uv"} {
		s, err := one(ctx, db, "SELECT "+v)
		if err != nil {
			return "", err
		}
		out = append(out, v+"="+s)
	}
	return strings.Join(out, " "), nil
}

func compression(ctx context.Context) (string, error) {
	db, err := open(func(c *mysql.Config) { _ = c.Apply(mysql.EnableCompression(true)) })
	if err != nil {
		return "", err
	}
	defer db.Close()
	t, err := table(ctx, db, "compress", "id INT PRIMARY KEY, tx LONGTEXT")
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "line %d of a compressible text\n", i)
	}
	text := sb.String()[:1<<20]
	if _, err := db.ExecContext(ctx, "INSERT INTO "+t+" VALUES (1, ?)", text); err != nil {
		return "", err
	}
	back, err := one(ctx, db, "SELECT tx FROM "+t+" WHERE id = 1")
	if err != nil {
		return "", err
	}
	rs, err := db.QueryContext(ctx, "SELECT seq FROM seq_1_to_1000")
	if err != nil {
		return "", err
	}
	defer rs.Close()
	n, sum := 0, 0
	for rs.Next() {
		var v int
		if err := rs.Scan(&v); err != nil {
			return "", err
		}
		n++
		sum += v
	}
	detail = "mysql.EnableCompression(true) (the DSN's compress=true, new in v1.9)"
	return fmt.Sprintf("text_len=%d text_sha256=%s same=%v rows=%d sum=%d", len(back), sum256([]byte(back)), back == text, n, sum), rs.Err()
}

func loadDataLocal(ctx context.Context) (string, error) {
	csv := filepath.Join(env["MATRIX_TMP"], env["MATRIX_PREFIX"]+"load.csv")
	var sb strings.Builder
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&sb, "%d,%d\n", i, 2*i)
	}
	if err := os.WriteFile(csv, []byte(sb.String()), 0o600); err != nil {
		return "", err
	}
	defer os.Remove(csv)
	mysql.RegisterLocalFile(csv)
	db, err := open(nil)
	if err != nil {
		return "", err
	}
	defer db.Close()
	t, err := table(ctx, db, "load", "id INT PRIMARY KEY, v INT")
	if err != nil {
		return "", err
	}
	res, err := db.ExecContext(ctx, "LOAD DATA LOCAL INFILE '"+csv+"' INTO TABLE "+t+" FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n' (id, v)")
	if err != nil {
		return "", err
	}
	affected, _ := res.RowsAffected()
	detail = "mysql.RegisterLocalFile(path)"
	n, err := one(ctx, db, "SELECT COUNT(*) FROM "+t)
	if err != nil {
		return "", err
	}
	s, err := one(ctx, db, "SELECT SUM(v) FROM "+t)
	return fmt.Sprintf("affected=%d rows=%s sum=%s", affected, n, s), err
}

func resetChangeUser(context.Context) (string, error) {
	// v1.9.3's ResetSession (run when database/sql hands out a pooled
	// connection again) only checks that the connection is alive: the
	// driver never sends COM_RESET_CONNECTION, and it has no change-user
	// API. Conn.Raw exposes only the unexported connection type.
	return "", errUnsupported("go-sql-driver/mysql " + driverVersion() + " sends neither COM_RESET_CONNECTION " +
		"(its ResetSession only checks liveness; session state survives the pool) nor COM_CHANGE_USER")
}

func tlsScenario(ctx context.Context) (string, error) {
	pem, err := os.ReadFile(env["MATRIX_SSL_CA"])
	if err != nil {
		return "", err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return "", fmt.Errorf("%s: no certificate", env["MATRIX_SSL_CA"])
	}
	var state *tls.ConnectionState
	tc := &tls.Config{RootCAs: pool, ServerName: env["MATRIX_HOST"], MinVersion: tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error { state = &cs; return nil }}
	if err := mysql.RegisterTLSConfig("matrix", tc); err != nil {
		return "", err
	}
	db, err := open(func(c *mysql.Config) { c.TLSConfig = "matrix" })
	if err != nil {
		return "", err
	}
	defer db.Close()
	v, err := one(ctx, db, "SELECT 1")
	detail = "mysql.RegisterTLSConfig with RootCAs from MATRIX_SSL_CA; TLS seen by crypto/tls's VerifyConnection callback"
	return fmt.Sprintf("tls=%v select=%s", state != nil && len(state.PeerCertificates) > 0, v), err
}

// report is one JSON line on stdout, fields in the README's order.
type report struct {
	Scenario string  `json:"scenario"`
	Status   string  `json:"status"`
	Result   string  `json:"result"`
	Detail   string  `json:"detail"`
	MS       float64 `json:"ms"`
}

type scenario struct {
	name string
	run  func(context.Context) (string, error)
}

func main() {
	mustEnv("MATRIX_DRIVER", "MATRIX_HOST", "MATRIX_PORT", "MATRIX_USER", "MATRIX_PASSWORD", "MATRIX_DB",
		"MATRIX_USER2", "MATRIX_PASSWORD2", "MATRIX_SSL_CA", "MATRIX_PREFIX", "MATRIX_TMP")
	if env["MATRIX_DRIVER"] != "go-sql-driver" {
		fmt.Fprintf(os.Stderr, "MATRIX_DRIVER must be go-sql-driver, not %s\n", env["MATRIX_DRIVER"])
		os.Exit(2)
	}
	_ = mysql.SetLogger(log{})
	only := map[string]bool{}
	for _, s := range strings.Split(os.Getenv("MATRIX_SCENARIOS"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			only[s] = true
		}
	}
	enc := json.NewEncoder(os.Stdout)
	for _, sc := range []scenario{
		{"connect", connect}, {"prepared_types", preparedTypes}, {"batch", batch}, {"transactions", transactions},
		{"multi_statement", multiStatement}, {"procedure_out", procedureOut}, {"large_20mib", large(20)},
		{"large_40mib", large(40)}, {"stream_200k", stream}, {"cursor_fetch", cursorFetch}, {"errors", errorsScenario},
		{"warnings", warnings}, {"session_vars", sessionVars}, {"compression", compression},
		{"load_data_local", loadDataLocal}, {"reset_change_user", resetChangeUser}, {"tls", tlsScenario},
	} {
		if len(only) > 0 && !only[sc.name] {
			continue
		}
		measured, detail = 0, ""
		ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
		start := time.Now()
		result, err := sc.run(ctx)
		took := time.Since(start)
		cancel()
		if measured > 0 {
			took = measured
		}
		line := report{Scenario: sc.name, Status: "pass", Result: result, Detail: detail,
			MS: math.Round(float64(took.Microseconds())/100) / 10}
		var unsup errUnsupported
		switch {
		case errors.As(err, &unsup):
			line.Status, line.Result, line.Detail = "unsupported", "", err.Error()
		case err != nil:
			line.Status, line.Result, line.Detail = "fail", "", err.Error()
			fmt.Fprintf(os.Stderr, "%s: %v\n", sc.name, err)
		}
		_ = enc.Encode(line)
	}
}

// log sends the driver's own messages to stderr.
type log struct{}

func (log) Print(v ...any) { fmt.Fprintln(os.Stderr, v...) }
