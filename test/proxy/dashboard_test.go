package proxy_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/sandbox"
)

// testDashboard loads the web dashboard from a real proxy, as a browser
// would (login, page, script, the chart library built in from npm), and
// drives its actions: drain and undrain a reader, switch the writer over
// and back. Each action must show in the admin tables.
func testDashboard(t *testing.T, pt *proxyUnderTest, sb *sandbox.Sandbox) {
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

	browse(t, pt, sb)
}

// browse opens the dashboard in headless Chromium (driven over the
// DevTools protocol by chromedp), logged in, lets its scripts poll the
// proxy, and checks the page they built: a card per node, all Synced,
// with the writer marked, the writer and epoch in the header, the charts
// drawn by the chart library, no error shown. Then it works the page as an
// operator would: Drain and Undrain a node with the buttons and the
// confirmation dialog; kill the writer's mariadbd and watch its card turn
// red and the writer move. Screenshots are kept in .artifacts/.
func browse(t *testing.T, pt *proxyUnderTest, sb *sandbox.Sandbox) {
	t.Helper()
	// Chromium's helper processes (renderer, crashpad) can outlive the
	// browser for a moment and keep writing to the profile: the browser
	// gets a process group of its own, killed as a whole at the end, and
	// the profile is removed after that.
	profile, err := os.MkdirTemp("", "galeon-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	var browser *exec.Cmd
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath("chromium"), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(profile), chromedp.WindowSize(1366, 1200),
		// Its temporary files (org.chromium.*) go under the profile too,
		// which is removed at the end, not into /tmp.
		chromedp.Env("TMPDIR="+profile),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
			browser = cmd
		}))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer func() {
		cancelAlloc()
		if browser != nil && browser.Process != nil {
			_ = syscall.Kill(-browser.Process.Pid, syscall.SIGKILL)
		}
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 4*time.Minute)
	defer cancel()
	login := base64.StdEncoding.EncodeToString([]byte("admin:" + adminPassword))
	if err := chromedp.Run(ctx,
		network.Enable(),
		network.SetExtraHTTPHeaders(network.Headers{"Authorization": "Basic " + login}),
		chromedp.Navigate("http://"+pt.httpAddr+"/ui/"),
	); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	artifacts := filepath.Join(repoRoot, ".artifacts")
	shot := func(name string) {
		t.Helper()
		var png []byte
		if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			return
		}
		if err := os.MkdirAll(artifacts, 0o755); err == nil {
			if err := os.WriteFile(filepath.Join(artifacts, name), png, 0o644); err == nil {
				t.Logf("screenshot: %s (%d bytes)", filepath.Join("test/proxy", artifacts, name), len(png))
			}
		}
	}
	var page pageState
	waitPage := func(what string, ok func(pageState) bool) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			page = pageState{}
			err := chromedp.Run(ctx, chromedp.Evaluate(pageStateJS, &page))
			if err == nil && ok(page) {
				return time.Since(start)
			}
			if time.Since(start) > 45*time.Second || ctx.Err() != nil {
				shot("dashboard-failed.png")
				t.Fatalf("the dashboard never showed %s (%v); it shows %+v", what, err, page)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	waitPage("three Synced nodes, the writer and the charts", func(p pageState) bool {
		synced := 0
		for _, c := range p.Cards {
			if c.Class == "card ok" && strings.HasPrefix(c.State, "Synced") {
				synced++
			}
		}
		return synced == 3 && strings.HasPrefix(p.Writer, "writer: ") && p.Charts >= 5 && p.WriterCards == 1
	})
	if page.Notice != "" && !strings.HasPrefix(page.Notice, "done:") {
		t.Errorf("the dashboard shows a notice: %q", page.Notice)
	}
	writer := strings.Fields(page.Writer)[1]
	shot("dashboard-synced.png")
	var perf struct {
		Load  float64 `json:"load"`
		Bytes float64 `json:"bytes"`
		Files int     `json:"files"`
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { const n = performance.getEntriesByType('navigation')[0];
		const r = performance.getEntriesByType('resource').filter(e => !e.name.includes('/api/'));
		return {load: n.loadEventEnd - n.startTime, files: r.length + 1,
			bytes: n.encodedBodySize + r.reduce((s, e) => s + e.encodedBodySize, 0)}; })()`, &perf)); err == nil {
		t.Logf("FIGURE dashboard: %d files, %.0f KiB, loaded in %.0f ms", perf.Files, perf.Bytes/1024, perf.Load)
	}

	adm := pt.adminDB(t)
	click := func(node, button string) {
		t.Helper()
		var found bool
		js := fmt.Sprintf(`(() => { const c = [...document.querySelectorAll('#nodes .card')].find(c => c.querySelector('.name').textContent === %q);
			const b = c && [...c.querySelectorAll('button')].find(b => b.textContent === %q); if (b) b.click(); return !!b; })()`, node, button)
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, &found)); err != nil || !found {
			t.Fatalf("no %s button on %s's card (%v)", button, node, err)
		}
		if err := chromedp.Run(ctx,
			chromedp.WaitVisible(`#confirm`, chromedp.ByID),
			chromedp.Click(`#confirm button[value="ok"]`, chromedp.ByQuery)); err != nil {
			t.Fatalf("confirming %s %s: %v", button, node, err)
		}
	}
	reader := "node3"
	if writer == reader {
		reader = "node2"
	}
	click(reader, "Drain")
	waitPage(reader+" drained", func(p pageState) bool { return p.card(reader).has("Undrain") && p.card(reader).Class == "card warn" })
	if got := str(t, adm, "SELECT admin_state FROM servers WHERE name = '"+reader+"'"); got != "drain" {
		t.Errorf("after Drain on the page, admin_state = %q", got)
	}
	click(reader, "Undrain")
	waitPage(reader+" back in service", func(p pageState) bool { return p.card(reader).has("Drain") && p.card(reader).Class == "card ok" })

	// An operator's operation (a schema change) shows with its progress
	// while it is recorded, and goes with it. This proxy has no control
	// plane: the record is set as nodesync would.
	pt.p.SetOperation(&proxy.Operation{ID: "ddl-1", Kind: "schema-change", Method: "rsu", Statement: "ALTER TABLE `app`.`t` ADD INDEX k (a)",
		Current: reader, Step: "altering (RSU)", Done: 1, Total: 3, Started: time.Now()})
	waitPage("the schema change in progress", func(p pageState) bool {
		return strings.Contains(p.Operation, "ADD INDEX k") && strings.Contains(p.Operation, "1 of 3 nodes · "+reader+": altering (RSU)")
	})
	shot("dashboard-operation.png")
	pt.p.SetOperation(nil)
	waitPage("the schema change gone", func(p pageState) bool { return p.Operation == "" })

	// The schema-change form plans through the admin interface; this
	// proxy has no control plane, so the plan is refused, saying what the
	// proxy needs (test/control runs one to the end from a proxy that has).
	if err := chromedp.Run(ctx,
		chromedp.SetValue(`#ddl-statement`, "ALTER TABLE t ADD INDEX k (a)", chromedp.ByID),
		chromedp.SetValue(`#ddl-schema`, "app", chromedp.ByID),
		chromedp.Click(`#ddl-form button[type="submit"]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("the schema-change form: %v", err)
	}
	waitPage("the plan refused, saying why", func(p pageState) bool {
		return strings.HasPrefix(p.Notice, "not planned: ") && strings.Contains(p.Notice, "[operations] node_user")
	})

	// The writer's mariadbd dies: its card turns red and another node
	// takes the role, on the page.
	if err := sb.Kill(writer); err != nil {
		t.Fatal(err)
	}
	took := waitPage(writer+" down and the writer moved", func(p pageState) bool {
		return p.card(writer).Class == "card bad" && strings.HasPrefix(p.card(writer).State, "unreachable") &&
			p.Writer != "" && !strings.HasPrefix(p.Writer, "writer: "+writer+" ") &&
			!strings.HasPrefix(p.Writer, "writer: none") && p.WriterCards == 1
	})
	t.Logf("FIGURE dashboard shows the writer's crash and the new writer %.1f s after kill -9 (polls every 2 s)", took.Seconds())
	if !slices.Contains(page.Events, "writer_change") {
		t.Errorf("the events timeline shows no writer_change: %v", page.Events)
	}
	shot("dashboard-writer-down.png")
	sctx, scancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer scancel()
	if err := sb.StartNode(sctx, writer); err != nil {
		t.Fatalf("restart %s: %v", writer, err)
	}
	waitPage(writer+" Synced again", func(p pageState) bool {
		return p.card(writer).Class == "card ok" && strings.HasPrefix(p.card(writer).State, "Synced")
	})
}

// pageState is what the dashboard shows, read from its DOM.
type pageState struct {
	Writer      string      `json:"writer"`
	Notice      string      `json:"notice"`
	Charts      int         `json:"charts"`
	WriterCards int         `json:"writerCards"`
	Events      []string    `json:"events"`
	Cards       []cardState `json:"cards"`
	Operation   string      `json:"operation"`
}

type cardState struct {
	Name    string   `json:"name"`
	Class   string   `json:"class"`
	State   string   `json:"state"`
	Buttons []string `json:"buttons"`
}

func (p pageState) card(name string) cardState {
	for _, c := range p.Cards {
		if c.Name == name {
			return c
		}
	}
	return cardState{}
}

func (c cardState) has(button string) bool { return slices.Contains(c.Buttons, button) }

const pageStateJS = `(() => ({
	writer: document.getElementById('writer').textContent,
	notice: document.getElementById('notice').hidden ? '' : document.getElementById('notice').textContent,
	charts: document.querySelectorAll('.uplot').length,
	writerCards: document.querySelectorAll('#nodes .role.writer').length,
	events: [...document.querySelectorAll('#events tr')].map(r => r.className),
	operation: document.getElementById('operation').hidden ? '' : document.getElementById('operation').textContent,
	cards: [...document.querySelectorAll('#nodes .card')].map(c => ({
		name: c.querySelector('.name').textContent,
		class: c.className,
		state: c.querySelector('dd').textContent,
		buttons: [...c.querySelectorAll('button')].map(b => b.textContent),
	})),
}))()`
