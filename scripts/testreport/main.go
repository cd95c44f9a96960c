// Command testreport turns `go test -json` into a readable CI log.
//
// CI shows only the tail of a failing run, and a long -v log of real
// clusters starting pushes the one line that says why a test failed out of
// that tail. testreport therefore streams a short progress log (test starts,
// results, and lines written by t.Log/t.Error) and, when anything failed,
// ends with a FAILURES section that repeats, for each failing test, its own
// output. The full log is written to the file named by -log.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// progress selects the lines worth streaming: starts, results, and messages
// written from test code (file.go:NN:).
var progress = regexp.MustCompile(`^\s*(=== RUN|--- (PASS|FAIL|SKIP)|PASS$|FAIL|ok\s|panic:)|\.go:\d+: `)

// briefProgress is progress for long runs of quick tests.
var briefProgress = regexp.MustCompile(`^\s*(--- FAIL|FAIL|ok\s|panic:)`)

// message matches a line written by t.Log/t.Error (file.go:NN: ...).
var message = regexp.MustCompile(`\.go:\d+: `)

// diagnostics matches the first line of what a test prints after it failed
// to help find why (sandboxtest's error log tails): the message that says
// why it failed comes before it.
var diagnostics = regexp.MustCompile(`\.go:\d+: .* error log tail:`)

// maxFailureLines bounds what the FAILURES section repeats per test, and
// maxDiagnosticLines the share of it given to diagnostics.
const (
	maxFailureLines    = 80
	maxDiagnosticLines = 24
)

// splitDiagnostics parts a test's output at its first diagnostics line.
func splitDiagnostics(lines []string) (own, diag []string) {
	for i, l := range lines {
		if diagnostics.MatchString(l) {
			return lines[:i], lines[i:]
		}
	}
	return lines, nil
}

// lastMessage is the last line written by test code, outside diagnostics
// when there is one there.
func lastMessage(lines []string) string {
	own, diag := splitDiagnostics(lines)
	for _, part := range [][]string{own, diag} {
		for i := len(part) - 1; i >= 0; i-- {
			if message.MatchString(part[i]) {
				return strings.TrimSpace(part[i])
			}
		}
	}
	return ""
}

func main() {
	logPath := flag.String("log", "", "write the full test output to this file")
	brief := flag.Bool("brief", false, "stream only package results and failures")
	flag.Parse()
	if *brief {
		progress = briefProgress
	}
	var full io.Writer = io.Discard
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
		defer f.Close()
		full = f
	}
	failed, err := report(os.Stdin, os.Stdout, full)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// report streams events from r and returns whether any test or package
// failed. Lines that are not JSON (build errors) are passed through.
func report(r io.Reader, out, full io.Writer) (bool, error) {
	type key struct{ pkg, test string }
	outputs := map[key][]string{}
	var failures []key
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintln(out, string(line))
			fmt.Fprintln(full, string(line))
			continue
		}
		k := key{ev.Package, ev.Test}
		switch ev.Action {
		case "output":
			fmt.Fprint(full, ev.Output)
			outputs[k] = append(outputs[k], ev.Output)
			if progress.MatchString(strings.TrimRight(ev.Output, "\n")) {
				fmt.Fprint(out, ev.Output)
			}
		case "fail":
			failures = append(failures, k)
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	if len(failures) == 0 {
		return false, nil
	}
	fmt.Fprintf(out, "\n==== FAILURES: each failing test's own output ====\n")
	for _, k := range failures {
		own, diag := splitDiagnostics(outputs[k])
		if len(diag) > maxDiagnosticLines {
			diag = append(diag[:maxDiagnosticLines:maxDiagnosticLines], fmt.Sprintf("    [… %d more lines of diagnostics in the full log]\n", len(diag)-maxDiagnosticLines))
		}
		fmt.Fprintf(out, "\n-- %s %s (%d lines", k.pkg, orPackage(k.test), len(outputs[k]))
		if keep := maxFailureLines - len(diag); len(own) > keep {
			fmt.Fprintf(out, ", the last %d before its diagnostics shown", keep)
			own = own[len(own)-keep:]
		}
		fmt.Fprintln(out, ")")
		for _, l := range slices.Concat(own, diag) {
			fmt.Fprint(out, l)
		}
	}
	// The last lines are what a CI page shows: one per failing test, with
	// the last message its code wrote before any diagnostics.
	fmt.Fprintf(out, "\n==== SUMMARY: %d failed ====\n", len(failures))
	for _, k := range failures {
		fmt.Fprintf(out, "FAIL %s %s: %s\n", k.pkg, orPackage(k.test), lastMessage(outputs[k]))
	}
	return true, nil
}

func orPackage(test string) string {
	if test == "" {
		return "(package)"
	}
	return test
}
