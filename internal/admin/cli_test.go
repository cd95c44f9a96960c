package admin

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The real command-line client, where installed: it is what operators
// use, and it sends its own preamble queries, relies on COM_FIELD_LIST
// for completion, and prints what the server's metadata says.

func cliPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"mariadb", "mysql"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no mariadb or mysql client installed: run `make deps` (package mariadb-client)")
	return ""
}

// runCLI runs the client with the given arguments against s and returns
// stdout, stderr and the exit error.
func runCLI(t *testing.T, s *Server, password string, args ...string) (string, string, error) {
	t.Helper()
	port := s.SQLAddr().(*net.TCPAddr).Port
	base := []string{"--no-defaults", "-h127.0.0.1", "-P" + strconv.Itoa(port), "-u" + testUser, "-p" + password, "--connect-timeout=5"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliPath(t), append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func TestCLI(t *testing.T) {
	cliPath(t)
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table(), statsTable()}, nil)

	out, stderr, err := runCLI(t, s, testPassword, "-e", "SELECT * FROM servers ORDER BY hostname")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	want := "hostgroup\thostname\tport\tweight\tstatus\tcomment\tmax_lag\n" +
		"10\tdb1\t3306\t100\tONLINE\tprimary\t1.5\n" +
		"10\tdb2\t3306\t50\tONLINE\tNULL\tNULL\n" +
		"20\tdb3\t3307\t1\tOFFLINE_SOFT\tit's \"quoted\"\\tand tabbed\t0.25\n"
	if out != want {
		t.Errorf("batch output:\n%s\nwant:\n%s", out, want)
	}

	out, stderr, err = runCLI(t, s, testPassword, "--table", "main", "-e",
		"UPDATE servers SET weight = 7, status = 'OFFLINE_SOFT' WHERE hostname = 'db2'; SELECT hostname, weight, status FROM servers WHERE hostgroup = 10; SELECT COUNT(*) FROM servers")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	want = `+----------+--------+--------------+
| hostname | weight | status       |
+----------+--------+--------------+
| db1      |    100 | ONLINE       |
| db2      |      7 | OFFLINE_SOFT |
+----------+--------+--------------+
+----------+
| COUNT(*) |
+----------+
|        3 |
+----------+
`
	if out != want {
		t.Errorf("table output:\n%s\nwant:\n%s", out, want)
	}

	out, stderr, err = runCLI(t, s, testPassword, "-D", "main", "-e",
		"SHOW DATABASES; SHOW TABLES; DESCRIBE stats; SELECT @@version_comment LIMIT 1; SELECT DATABASE(); SHOW WARNINGS; SET NAMES utf8mb4")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	want = "Database\nmain\n" +
		"Tables_in_main\nservers\nstats\n" +
		"Field\tType\tNull\tKey\tDefault\tExtra\nname\ttext\tNO\t\tNULL\t\nvalue\tbigint\tNO\t\tNULL\t\nratio\tdouble\tNO\t\tNULL\t\n" +
		"@@version_comment\ngaleon admin interface\n" +
		"DATABASE()\nmain\n"
	if out != want {
		t.Errorf("metadata output:\n%s\nwant:\n%s", out, want)
	}

	for _, tc := range []struct{ sql, msg string }{
		{"SELECT * FROM nope", "ERROR 1146 (42S02) at line 1: Table 'main.nope' doesn't exist; tables: servers, stats"},
		{"UPDATE servers SET weight = 'abc'", "ERROR 1366 (22007) at line 1: Incorrect integer value: 'abc' for column 'weight'"},
		{"UPDATE servers SET status = 'X'", "ERROR 1105 (HY000) at line 1: status must be ONLINE, OFFLINE_SOFT or OFFLINE_HARD, not X"},
		{"SELECT nope FROM servers", "ERROR 1054 (42S22) at line 1: Unknown column 'nope'; columns of servers: hostgroup"},
		{"SELEC 1", "ERROR 1064 (42000) at line 1: 'SELEC 1' is not supported on the admin interface: it runs SELECT"},
	} {
		_, stderr, err := runCLI(t, s, testPassword, "-e", tc.sql)
		if err == nil || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%s: %v %s", tc.sql, err, stderr)
		}
	}

	_, stderr, err = runCLI(t, s, "wrong", "-e", "SELECT 1")
	if err == nil || !strings.Contains(stderr, "ERROR 1045 (28000): Access denied for user 'admin'@'127.0.0.1' (using password: YES)") {
		t.Errorf("wrong password: %v %s", err, stderr)
	}
}

func TestCLITLS(t *testing.T) {
	cliPath(t)
	fs := newFakeServers()
	s := startServer(t, Config{TLS: selfSignedTLS(t)}, []Table{fs.table()}, nil)
	out, stderr, err := runCLI(t, s, testPassword, "--ssl", "--skip-ssl-verify-server-cert", "-e", "status; SELECT COUNT(*) FROM servers")
	if err != nil {
		// Older clients lack --skip-ssl-verify-server-cert.
		out, stderr, err = runCLI(t, s, testPassword, "--ssl", "-e", "status; SELECT COUNT(*) FROM servers")
	}
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if !strings.Contains(out, "Cipher in use is") || !strings.HasSuffix(out, "COUNT(*)\n3\n") {
		t.Errorf("TLS session:\n%s", out)
	}
}
