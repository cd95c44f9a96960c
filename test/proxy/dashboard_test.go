package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testDashboard loads the web dashboard from a real proxy, as a browser
// would (login, page, script, the chart library built in from npm), and
// drives its actions: drain and undrain a reader, switch the writer over
// and back. Each action must show in the admin tables.
func testDashboard(t *testing.T, pt *proxyUnderTest) {
	base := "http://" + pt.httpAddr
	client := &http.Client{Timeout: 30 * time.Second}
	do := func(method, path, body string, login bool, header map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if login {
			req.SetBasicAuth("admin", adminPassword)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, _ := do("GET", "/ui/", "", false, nil); code != 401 {
		t.Errorf("/ui/ without the admin login: %d, want 401", code)
	}
	for path, want := range map[string]string{"/ui/": "<title>galeon</title>", "/ui/app.js": "api/actions", "/ui/vendor/uPlot.iife.min.js": "uPlot"} {
		if code, body := do("GET", path, "", true, nil); code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, %d bytes; want 200 with %q (is the chart library built in? make build)", path, code, len(body), want)
		}
	}
	if out, err := exec.Command("node", "--check", filepath.Join(repoRoot, "internal/dashboard/assets/app.js")).CombinedOutput(); err != nil {
		t.Errorf("node --check app.js: %v\n%s", err, out)
	}
	browse(t, pt)

	adm := pt.adminDB(t)
	action := func(what, node string) {
		t.Helper()
		code, body := do("POST", "/api/actions", `{"action":"`+what+`","node":"`+node+`"}`, true,
			map[string]string{"Content-Type": "application/json", "X-Galeon-Action": "1"})
		var res struct {
			OK        bool
			Statement string
		}
		if code != 200 || json.Unmarshal([]byte(body), &res) != nil || !res.OK {
			t.Fatalf("%s %s: %d %s", what, node, code, body)
		}
	}
	action("drain", "node3")
	if got := str(t, adm, "SELECT admin_state FROM servers WHERE name = 'node3'"); got != "drain" {
		t.Errorf("after the dashboard drained node3, admin_state = %q", got)
	}
	action("undrain", "node3")
	if got := str(t, adm, "SELECT admin_state FROM servers WHERE name = 'node3'"); got != "active" {
		t.Errorf("after undrain, admin_state = %q", got)
	}
	action("switchover", "node2")
	waitWriter := func(node string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for str(t, adm, "SELECT node FROM writer") != node {
			if time.Now().After(deadline) {
				t.Fatalf("the writer did not move to %s after the dashboard's switchover", node)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitWriter("node2")
	action("switchover", "node1")
	waitWriter("node1")

	// A refused action changes nothing and says why.
	code, body := do("POST", "/api/actions", `{"action":"drain","node":"node9"}`, true,
		map[string]string{"Content-Type": "application/json", "X-Galeon-Action": "1"})
	if code != 404 || !strings.Contains(body, "no server named") {
		t.Errorf("drain of an unknown node: %d %s", code, body)
	}
}

// browse opens the dashboard in headless Chromium, logged in, lets its
// scripts poll the proxy, and checks the page they built: a card per node
// with the writer marked, the writer and epoch in the header, the charts
// drawn by the chart library, the events timeline, no error shown.
func browse(t *testing.T, pt *proxyUnderTest) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=6000", "--dump-dom",
		"http://admin:"+adminPassword+"@"+pt.httpAddr+"/ui/")
	// Chromium starts helper processes; on a timeout they all go.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // helpers that outlived the browser
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // the browser exited cleanly; a helper held the output open
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(stderr.String(), 20))
	}
	dom := string(out)
	for _, want := range []string{`<div class="name">node1</div>`, `<div class="name">node2</div>`, `<div class="name">node3</div>`,
		`<span class="role writer">writer</span>`, "writer: node1 · epoch", `class="uplot`, "Make writer"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the dashboard as Chromium built it lacks %s:\n%s", want, tail(dom, 60))
		}
	}
	if strings.Contains(dom, "cannot reach galeon") || !strings.Contains(dom, `id="charts-missing" class="notice" hidden`) {
		t.Errorf("the dashboard shows an error:\n%s", tail(dom, 60))
	}
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-lines):], "\n")
}
