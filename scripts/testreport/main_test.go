package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestReportEndsWithTheFailingTestsAndTheirMessages(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"[ 1.0s] node1: synced\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA/sub","Output":"    a_test.go:12: got 3, want 4\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestA/sub"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    sandboxtest.go:114: destroy sandbox x: busy\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:40: login took 3s\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    sandboxtest.go:142: node1 error log tail:\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"        [Note] WSREP: a.go:1: x\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    sandboxtest.go:142: node2 error log tail:\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestC"}`,
		`{"Action":"fail","Package":"p","Test":"TestA"}`,
		`{"Action":"pass","Package":"p","Test":"TestB"}`,
		`{"Action":"fail","Package":"p"}`,
	}, "\n")
	var out, full bytes.Buffer
	failed, err := report(strings.NewReader(in), &out, &full)
	if err != nil || !failed {
		t.Fatalf("failed=%v err=%v, want a failure reported", failed, err)
	}
	if !strings.Contains(full.String(), "node1: synced") {
		t.Errorf("full log lost a line")
	}
	if strings.Contains(strings.SplitN(out.String(), "====", 2)[0], "node1: synced") {
		t.Errorf("progress log streamed a non-message line:\n%s", out.String())
	}
	summary := out.String()[strings.LastIndex(out.String(), "==== SUMMARY"):]
	for _, want := range []string{"FAIL p TestA/sub: a_test.go:12: got 3, want 4", "FAIL p TestA: sandboxtest.go:114: destroy sandbox x: busy", "FAIL p TestC: c_test.go:40: login took 3s", "FAIL p (package): "} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
}

func TestReportPassesCleanRuns(t *testing.T) {
	in := `{"Action":"output","Package":"p","Test":"TestB","Output":"--- PASS: TestB (0.00s)\n"}` + "\n" + `{"Action":"pass","Package":"p","Test":"TestB"}`
	var out bytes.Buffer
	failed, err := report(strings.NewReader(in), &out, &bytes.Buffer{})
	if err != nil || failed {
		t.Fatalf("failed=%v err=%v on a passing run", failed, err)
	}
	if !strings.Contains(out.String(), "--- PASS: TestB") || strings.Contains(out.String(), "FAILURES") {
		t.Errorf("unexpected output:\n%s", out.String())
	}
}
