package drivers_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// outcome is one driver's two runs.
type outcome struct {
	missing        string // why the program could not run at all
	direct, galeon run
}

// TestDrivers is the driver compatibility matrix: every driver's program
// runs directly against node1 and through galeon; for every scenario the
// direct run must pass (or the driver lack the feature) and galeon must
// report the same status and result.
func TestDrivers(t *testing.T) {
	h := newHarness(t)
	logDir := h.path("bench/results/driver-matrix-logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	node1 := h.sb.Nodes[0].Addr()
	outcomes := map[string]*outcome{}
	for _, d := range drivers {
		o := &outcome{}
		outcomes[d.name] = o
		t.Run(d.name, func(t *testing.T) {
			argv, err := d.command(h)
			if err != nil {
				o.missing = err.Error()
				t.Fatalf("%s cannot run: %v", d.name, err)
			}
			start := time.Now()
			o.direct = h.runProgram(d, argv, "direct", node1, logDir)
			o.galeon = h.runProgram(d, argv, "galeon", h.proxyAddr, logDir)
			t.Logf("%s: both runs in %s; logs %s, %s", d.name, time.Since(start).Round(time.Second), o.direct.log, o.galeon.log)
			for _, r := range []struct {
				mode string
				run  run
			}{{"direct", o.direct}, {"galeon", o.galeon}} {
				if r.run.problem != "" {
					t.Errorf("%s program (%s): %s", d.name, r.mode, r.run.problem)
				}
			}
			for _, s := range selected() {
				if msg := compare(o, s); msg != "" {
					t.Errorf("%s %s: %s", d.name, s, msg)
				}
			}
		})
	}
	report := matrixReport(outcomes)
	// One log call a line, so that every line of the matrix reaches a CI
	// log that keeps only the lines a test wrote (file:line: prefix).
	for _, line := range strings.Split(strings.TrimRight(report, "\n"), "\n") {
		if line != "" {
			t.Log(line)
		}
	}
	out := h.path("bench/results/driver-matrix.md")
	if err := os.WriteFile(out, []byte(report), 0o644); err != nil {
		t.Errorf("write %s: %v", out, err)
	} else {
		t.Logf("matrix written to %s", out)
	}
}

// selected are the scenarios of this run (MATRIX_SCENARIOS narrows them).
func selected() []string {
	only := os.Getenv("MATRIX_SCENARIOS")
	if only == "" {
		return scenarios
	}
	var out []string
	for _, s := range scenarios {
		for _, o := range strings.Split(only, ",") {
			if strings.TrimSpace(o) == s {
				out = append(out, s)
			}
		}
	}
	return out
}

// compare returns what is wrong with scenario s, or "".
func compare(o *outcome, s string) string {
	d, dok := o.direct.reports[s]
	g, gok := o.galeon.reports[s]
	switch {
	case !dok || !gok:
		return fmt.Sprintf("not reported (direct: %v, galeon: %v)", dok, gok)
	case d.Status != "pass" && d.Status != "unsupported":
		return fmt.Sprintf("fails directly against node1 (a program or driver problem, not galeon's): %s %q; detail: %s", d.Status, d.Result, d.Detail)
	case g.Status != d.Status || g.Result != d.Result:
		detail := g.Detail
		if detail == "" {
			detail = d.Detail
		}
		return fmt.Sprintf("direct %s %q, galeon %s %q; detail: %s", d.Status, d.Result, g.Status, g.Result, detail)
	}
	return ""
}

// cell is the matrix entry of scenario s for one driver.
func cell(o *outcome, s string) string {
	if o == nil || o.missing != "" {
		return "missing"
	}
	d, dok := o.direct.reports[s]
	if !dok {
		return "—"
	}
	if d.Status != "pass" && d.Status != "unsupported" {
		return "FAIL direct"
	}
	if compare(o, s) != "" {
		return "FAIL"
	}
	if d.Status == "unsupported" {
		return "n/a"
	}
	return "ok"
}

// matrixReport renders the matrix (scenarios × drivers) and the batch
// timings as Markdown.
func matrixReport(outcomes map[string]*outcome) string {
	var b strings.Builder
	rev, _ := exec.Command("git", "describe", "--always", "--dirty").Output()
	fmt.Fprintf(&b, "# Driver compatibility matrix\n\n%s, galeon %s. `ok`: same status and result directly against node1 and through galeon; "+
		"`n/a`: the driver has no such feature; `FAIL`: galeon differs; `FAIL direct`: the program fails against node1 itself; "+
		"`missing`: the driver is not installed (`make drivers`). Details: `go test -v ./test/drivers/` and bench/results/driver-matrix-logs/.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), strings.TrimSpace(string(rev)))
	b.WriteString("| scenario |")
	for _, d := range drivers {
		b.WriteString(" " + d.name + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(drivers)) + "\n")
	for _, s := range selected() {
		b.WriteString("| " + s + " |")
		for _, d := range drivers {
			b.WriteString(" " + cell(outcomes[d.name], s) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\nBatch insert of 1,000 rows (the `batch` scenario's measured part):\n\n| driver | direct ms | galeon ms | galeon/direct |\n|---|---|---|---|\n")
	for _, d := range drivers {
		o := outcomes[d.name]
		if o == nil || o.missing != "" {
			continue
		}
		dr, dok := o.direct.reports["batch"]
		gr, gok := o.galeon.reports["batch"]
		if !dok || !gok || dr.Status != "pass" || gr.Status != "pass" {
			continue
		}
		ratio := "—"
		if dr.MS > 0 {
			ratio = fmt.Sprintf("%.2f", gr.MS/dr.MS)
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %s |\n", d.name, dr.MS, gr.MS, ratio)
	}
	return b.String()
}
