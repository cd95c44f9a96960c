// Package drivers_test runs every driver's scenario program against one
// real 3-node Galera sandbox, directly against node1 and through an
// in-process galeon proxy, and requires both runs to agree
// (test/drivers/README.md).
package drivers_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// scenarios in the order every program reports them.
var scenarios = []string{
	"connect", "prepared_types", "batch", "transactions", "multi_statement", "procedure_out",
	"large_20mib", "large_40mib", "stream_200k", "cursor_fetch", "errors", "warnings",
	"session_vars", "compression", "load_data_local", "reset_change_user", "tls",
}

// programTimeout bounds one run of one program (all its scenarios).
const programTimeout = 8 * time.Minute

// installHint is what to run when a driver's program or runtime is missing.
const installHint = "run `make drivers` (scripts/install-drivers.sh)"

// driver is one MATRIX_DRIVER value and how to run its program.
type driver struct {
	name string
	// command returns the program and its arguments (run from the
	// repository root), or an error saying what is missing.
	command func(h *harness) ([]string, error)
}

var drivers = []driver{
	{"mysql-connector-j", javaCommand},
	{"mariadb-connector-j", javaCommand},
	{"mysql-connector-python", pythonCommand},
	{"pymysql", pythonCommand},
	{"mysql2", nodeCommand},
	{"mysqli", phpCommand},
	{"pdo-mysql", phpCommand},
	{"go-sql-driver", goCommand},
}

// harness is the cluster, the proxy in front of it and what the programs
// need to reach both.
type harness struct {
	root       string // repository root
	sb         *sandbox.Sandbox
	user2, pw2 string
	proxyAddr  string
	tmp        string

	goOnce sync.Once
	goBin  string
	goErr  error
}

// newHarness starts the sandbox (TLS on, 128 MiB packets, causal reads),
// creates the second account and starts the proxy; all of it is torn down
// when t ends.
func newHarness(t *testing.T) *harness {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.New(t, sandbox.Options{
		Nodes: 3,
		TLS:   true,
		ServerOptions: map[string]string{
			"max_allowed_packet": "128M",
			// Causal reads: a read the proxy sends to another node right
			// after a write sees that write.
			"wsrep_sync_wait": "1",
		},
	})
	h := &harness{root: root, sb: sb, user2: "app2", pw2: randomHex(12), tmp: t.TempDir()}
	h.createUser2(t)
	h.startProxy(t)
	return h
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// createUser2 creates app2 with the grants of app, for change-user.
func (h *harness) createUser2(t *testing.T) {
	t.Helper()
	db, err := h.sb.DB("node1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, host := range []string{"%", "localhost", "127.0.0.1"} {
		acct := fmt.Sprintf("'%s'@'%s'", h.user2, host)
		for _, q := range []string{
			"CREATE USER " + acct + " IDENTIFIED BY '" + h.pw2 + "'",
			"GRANT ALL ON `app`.* TO " + acct,
			"GRANT ALL ON `sbtest`.* TO " + acct,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// startProxy runs galeon in this process: writes to node1, reads to node2
// and node3, both accounts, 128 MiB packets, TLS with the nodes' certificate.
func (h *harness) startProxy(t *testing.T) {
	t.Helper()
	cfg := proxytest.Config(h.sb)
	cfg.Proxy.MaxPacketSize = 128 << 20
	_, cert, key := h.sb.TLSFiles()
	cfg.Proxy.TLSCert, cfg.Proxy.TLSKey = cert, key
	cfg.Proxy.NoBackendWait = config.Duration(2 * time.Second)
	cfg.Pool.HealthInterval = config.Duration(200 * time.Millisecond)
	c := h.sb.Credentials
	cfg.Users = []config.User{{Name: c.AppUser, Password: c.AppPassword}, {Name: h.user2, Password: h.pw2}}
	_, h.proxyAddr = proxytest.Start(t, cfg, nil)
}

// ---- the programs ----------------------------------------------------

func (h *harness) path(rel string) string { return filepath.Join(h.root, rel) }

// need fails with the install hint unless every file exists.
func need(files ...string) error {
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s is missing: %s", f, installHint)
		}
	}
	return nil
}

func needCommand(name string) error {
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("%s is not installed: %s", name, installHint)
	}
	return nil
}

func javaCommand(h *harness) ([]string, error) {
	class, src := h.path(".cache/java-classes/Matrix.class"), h.path("test/drivers/clients/java/Matrix.java")
	if err := errors.Join(needCommand("java"), need(class, h.path(".cache/java-lib"))); err != nil {
		return nil, err
	}
	if cs, ss := modTime(class), modTime(src); ss.After(cs) {
		return nil, fmt.Errorf("%s is older than %s: %s", class, src, installHint)
	}
	return []string{"java", "-cp", h.path(".cache/java-classes") + ":" + h.path(".cache/java-lib") + "/*", "Matrix"}, nil
}

func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

func pythonCommand(h *harness) ([]string, error) {
	py, prog := h.path(".cache/venv/bin/python"), h.path("test/drivers/clients/python/matrix.py")
	if err := need(py, prog); err != nil {
		return nil, err
	}
	return []string{py, prog}, nil
}

func nodeCommand(h *harness) ([]string, error) {
	if err := errors.Join(needCommand("node"), need(h.path("test/drivers/clients/node/node_modules/mysql2"))); err != nil {
		return nil, err
	}
	return []string{"node", h.path("test/drivers/clients/node/matrix.js")}, nil
}

func phpCommand(h *harness) ([]string, error) {
	prog := h.path("test/drivers/clients/php/matrix.php")
	if err := errors.Join(needCommand("php"), need(prog)); err != nil {
		return nil, err
	}
	out, err := exec.Command("php", "-r", `echo extension_loaded("mysqli") && extension_loaded("pdo_mysql") ? "ok" : "no";`).Output()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		return nil, fmt.Errorf("php has no mysqli/pdo_mysql extension (package php-mysql): %s", installHint)
	}
	return []string{"php", prog}, nil
}

// goCommand builds the Go program once per test run.
func goCommand(h *harness) ([]string, error) {
	h.goOnce.Do(func() {
		pkg := "./test/drivers/clients/gomatrix"
		if h.goErr = need(h.path(pkg)); h.goErr != nil {
			return
		}
		h.goBin = filepath.Join(h.tmp, "gomatrix")
		cmd := exec.Command("go", "build", "-o", h.goBin, pkg)
		cmd.Dir = h.root
		if out, err := cmd.CombinedOutput(); err != nil {
			h.goErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	return []string{h.goBin}, h.goErr
}

// report is one JSON line of a program.
type report struct {
	Scenario string  `json:"scenario"`
	Status   string  `json:"status"`
	Result   string  `json:"result"`
	Detail   string  `json:"detail"`
	MS       float64 `json:"ms"`
}

// run is the outcome of one program run: the reports by scenario, and
// what went wrong with the program itself (exit status, bad lines).
type run struct {
	reports map[string]report
	problem string
	log     string // path of its stderr
}

// runProgram runs a driver's program against addr, bounded by
// programTimeout (the whole process group is killed on timeout).
func (h *harness) runProgram(d driver, argv []string, mode, addr, logDir string) run {
	host, port, _ := net.SplitHostPort(addr)
	tmp, err := os.MkdirTemp(h.tmp, mode)
	if err != nil {
		return run{problem: err.Error()}
	}
	ca, _, _ := h.sb.TLSFiles()
	c := h.sb.Credentials
	ctx, cancel := context.WithTimeout(context.Background(), programTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = h.root
	cmd.Env = append(os.Environ(),
		"MATRIX_DRIVER="+d.name, "MATRIX_HOST="+host, "MATRIX_PORT="+port,
		"MATRIX_USER="+c.AppUser, "MATRIX_PASSWORD="+c.AppPassword, "MATRIX_DB=app",
		"MATRIX_USER2="+h.user2, "MATRIX_PASSWORD2="+h.pw2, "MATRIX_SSL_CA="+ca,
		"MATRIX_PREFIX=m_"+strings.NewReplacer("-", "_").Replace(d.name)+"_"+mode+"_", "MATRIX_TMP="+tmp)
	if only := os.Getenv("MATRIX_SCENARIOS"); only != "" {
		cmd.Env = append(cmd.Env, "MATRIX_SCENARIOS="+only)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout bytes.Buffer
	logPath := filepath.Join(logDir, d.name+"-"+mode+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return run{problem: err.Error()}
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = &stdout, logFile
	runErr := cmd.Run()
	r := run{reports: map[string]report{}, log: logPath}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var rep report
		if err := json.Unmarshal([]byte(line), &rep); err != nil || rep.Scenario == "" {
			r.problem += fmt.Sprintf("not a scenario line on stdout: %.200q; ", line)
			continue
		}
		r.reports[rep.Scenario] = rep
	}
	switch {
	case ctx.Err() != nil:
		r.problem += fmt.Sprintf("killed after %s; ", programTimeout)
	case runErr != nil:
		r.problem += fmt.Sprintf("exit: %v; ", runErr)
	}
	if r.problem != "" {
		r.problem += "stderr (" + logPath + "): " + tail(logPath, 15)
	}
	return r
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
