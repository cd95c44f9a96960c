package quorum

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// outcome renders a prediction compactly: "writes: dc1-1,dc1-2,dc3-garbd* | dc2-1,dc2-2"
// (* marks the Primary component).
func outcome(o Outcome) string {
	var parts []string
	for _, c := range o.Components {
		s := strings.Join(c.Members, ",")
		if c.Primary {
			s += "*"
		}
		parts = append(parts, s)
	}
	w := "stops"
	if o.Writes {
		w = "writes"
	}
	if o.Relay != "" {
		w += " via " + o.Relay
	}
	return w + ": " + strings.Join(parts, " | ")
}

func TestPredict(t *testing.T) {
	for _, tc := range []struct {
		layout  string
		weights map[string]int
		failure Failure
		want    string
	}{
		{"dc1:3", nil, Failure{Kind: NodeDown, Node: "dc1-1"}, "writes: dc1-2,dc1-3*"},
		{"dc1:2", nil, Failure{Kind: NodeDown, Node: "dc1-2"}, "stops: dc1-1"},
		{"dc1:2,dc2:2", nil, Failure{Kind: NodeDown, Node: "dc2-1"}, "writes: dc1-1,dc1-2,dc2-2*"},
		{"dc1:2,dc2:2", nil, Failure{Kind: SiteDown, Site: "dc1"}, "stops: dc2-1,dc2-2"},
		{"dc1:2,dc2:2", nil, Failure{Kind: LinkCut, A: "dc1", B: "dc2"}, "stops: dc1-1,dc1-2 | dc2-1,dc2-2"},
		{"dc1:2,dc2:2,dc3:garbd", nil, Failure{Kind: SiteDown, Site: "dc2"}, "writes: dc1-1,dc1-2,dc3-garbd*"},
		{"dc1:2,dc2:2,dc3:garbd", nil, Failure{Kind: SiteDown, Site: "dc3"}, "writes: dc1-1,dc1-2,dc2-1,dc2-2*"},
		{"dc1:2,dc2:2,dc3:garbd", nil, Failure{Kind: SiteCut, Site: "dc2"}, "writes: dc1-1,dc1-2,dc3-garbd* | dc2-1,dc2-2"},
		{"dc1:2,dc2:2", nil, Failure{Kind: SiteCut, Site: "dc1"}, "stops: dc1-1,dc1-2 | dc2-1,dc2-2"},
		{"dc1:2,dc2:2,dc3:garbd", nil, Failure{Kind: LinkCut, A: "dc1", B: "dc2"}, "writes via dc3: dc1-1,dc1-2,dc2-1,dc2-2,dc3-garbd*"},
		{"dc1:3,dc2:2", nil, Failure{Kind: LinkCut, A: "dc2", B: "dc1"}, "writes: dc1-1,dc1-2,dc1-3* | dc2-1,dc2-2"},
		{"dc1:3,dc2:2", nil, Failure{Kind: SiteDown, Site: "dc1"}, "stops: dc2-1,dc2-2"},
		{"dc1:2,dc2:2", map[string]int{"dc2-1": 2}, Failure{Kind: LinkCut, A: "dc1", B: "dc2"}, "writes: dc2-1,dc2-2* | dc1-1,dc1-2"},
		{"dc1:2,dc2:1,dc3:1", nil, Failure{Kind: SiteDown, Site: "dc1"}, "stops: dc2-1,dc3-1"},
		{"dc1:1,dc2:garbd,dc3:garbd", nil, Failure{Kind: SiteDown, Site: "dc1"}, "stops: dc2-garbd,dc3-garbd*"},
	} {
		l, err := ParseLayout(tc.layout)
		if err != nil {
			t.Fatalf("%s: %v", tc.layout, err)
		}
		for n, w := range tc.weights {
			if err := l.SetWeight(n, w); err != nil {
				t.Fatal(err)
			}
		}
		if got := outcome(Predict(l, tc.failure)); got != tc.want {
			t.Errorf("%s %v, %s:\n got %s\nwant %s", tc.layout, tc.weights, tc.failure, got, tc.want)
		}
	}
}

func TestPlanWarnsAndAdvises(t *testing.T) {
	for _, tc := range []struct {
		layout       string
		warn, advice []string // substrings, each must appear
		quiet        bool     // no warnings at all
	}{
		{layout: "dc1:2,dc2:2", warn: []string{"total weight is even (4)", "two sites", "site dc1 holds 2 of 4 votes"}, advice: []string{"add an arbitrator (garbd) in a third site"}},
		{layout: "dc1:2,dc2:2,dc3:garbd", quiet: true},
		{layout: "dc1:3", warn: []string{"one site"}},
		{layout: "dc1:2,dc2:1,dc3:1", warn: []string{"site dc1 holds 2 of 4 votes"}, advice: []string{"these stop writes: lose site dc1"}},
		{layout: "dc1:2+garbd,dc2:2", warn: []string{"arbitrator in dc1 shares its site"}},
		{layout: "dc1:3,dc2:3,dc3:3", quiet: true},
	} {
		l, err := ParseLayout(tc.layout)
		if err != nil {
			t.Fatal(err)
		}
		r := Plan(l)
		warn, advice := strings.Join(r.Warnings, "\n"), strings.Join(r.Advice, "\n")
		if tc.quiet && (warn != "" || len(r.Advice) != 1 || !strings.Contains(advice, "WAN profile")) {
			t.Errorf("%s: unexpected warnings %q / advice %q (want only the WAN profile)", tc.layout, warn, advice)
		}
		for _, w := range tc.warn {
			if !strings.Contains(warn, w) {
				t.Errorf("%s: warnings lack %q:\n%s", tc.layout, w, warn)
			}
		}
		for _, a := range tc.advice {
			if !strings.Contains(advice, a) {
				t.Errorf("%s: advice lacks %q:\n%s", tc.layout, a, advice)
			}
		}
	}
	// Every member, every site and every link of a three-site layout.
	l, _ := ParseLayout("dc1:2,dc2:2,dc3:garbd")
	if n := len(Plan(l).Outcomes); n != 5+3+3 {
		t.Errorf("%d scenarios, want 11", n)
	}
}

func TestParseLayoutErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                 "empty layout",
		"dc1":              "want SITE:N",
		"dc1:0":            "at least one node",
		"dc1:x":            "node count",
		"dc1:2,dc1:1":      "listed twice",
		"dc1:garbd":        "no data node",
		"d c:1":            "site \"d c\"",
		"dc1:2,dc2:2,:1":   "want SITE:N",
		"dc1:10":           "node count",
		"dc1:2+garbd+garb": "node count",
	} {
		if _, err := ParseLayout(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseLayout(%q) = %v, want an error with %q", spec, err, want)
		}
	}
	l, _ := ParseLayout("dc1:2")
	if err := l.SetWeight("dc9-1", 2); err == nil || !strings.Contains(err.Error(), "members: dc1-1, dc1-2") {
		t.Errorf("SetWeight of an unknown member: %v", err)
	}
	if err := l.SetWeight("dc1-1", 300); err == nil {
		t.Error("weight 300 accepted")
	}
}

func TestNewLayoutMatchesTheNotation(t *testing.T) {
	parsed, _ := ParseLayout("dc1:2,dc2:1+garbd")
	built, err := NewLayout([]Member{
		{Name: "dc1-1", Site: "dc1"}, {Name: "dc1-2", Site: "dc1"},
		{Name: "dc2-1", Site: "dc2", Segment: 1}, {Name: "dc2-garbd", Site: "dc2", Segment: 1, Arbitrator: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(built) != fmt.Sprint(parsed) {
		t.Errorf("NewLayout %v\nParseLayout %v", built, parsed)
	}
	if _, err := NewLayout([]Member{{Name: "a", Site: "dc1"}, {Name: "a", Site: "dc2"}}); err == nil {
		t.Error("a member listed twice was accepted")
	}
	if _, err := NewLayout([]Member{{Name: "a"}}); err == nil {
		t.Error("a member without a site was accepted")
	}
}

// TestMeasuredRoundTrips: measured links decide the WAN advice (and
// replace the general one), and a link that cannot be measured is
// reported.
func TestMeasuredRoundTrips(t *testing.T) {
	l, err := ParseLayout("dc1:2,dc2:2,dc3:garbd")
	if err != nil {
		t.Fatal(err)
	}
	near := Plan(l)
	near.Measured([]RTT{{From: "dc1", To: "dc2", RTT: 800 * time.Microsecond}, {From: "dc1", To: "dc3", RTT: time.Millisecond}})
	all := strings.Join(near.Advice, "\n")
	if strings.Contains(all, wanAdvice) || !strings.Contains(all, "LAN failure detection") {
		t.Errorf("sites 1 ms apart: advice %q", all)
	}
	far := Plan(l)
	far.Measured([]RTT{{From: "dc1", To: "dc2", RTT: 30 * time.Millisecond}, {From: "dc2", To: "dc3", Err: "i/o timeout"}})
	all = strings.Join(far.Advice, "\n")
	if strings.Count(all, wanAdvice) != 1 || !strings.Contains(all, "at least 30 ms") {
		t.Errorf("sites 30 ms apart: advice %q", all)
	}
	if !strings.Contains(strings.Join(far.Warnings, "\n"), "dc2-dc3 could not be measured") {
		t.Errorf("a failed measurement is not reported: %v", far.Warnings)
	}
	none := Plan(l)
	none.Measured([]RTT{{From: "dc1", To: "dc2", Err: "i/o timeout"}})
	if !strings.Contains(strings.Join(none.Advice, "\n"), wanAdvice) {
		t.Errorf("nothing measured: the general WAN advice is gone: %v", none.Advice)
	}
}

// TestLayoutFile: the file form reads like --dc with weights and
// comments, and its errors name the line.
func TestLayoutFile(t *testing.T) {
	l, err := ParseLayoutText("# prod\ndc1: 2   # main\ndc2:2, dc3:garbd\n\nweight dc1-1 = 2\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Sites) != 3 || len(l.Members) != 5 || l.Members[0].Weight != 2 || l.Members[1].Weight != 1 {
		t.Fatalf("layout %+v", l)
	}
	for text, want := range map[string]string{
		"dc1:2\nweight dc9-1=2": "line 2: no member dc9-1",
		"dc1:2\nweight dc1-1":   "line 2",
		"dc1:0":                 "at least one node",
		"# nothing":             "empty layout",
		"dc1:2\ndc1:1":          "listed twice",
	} {
		if _, err := ParseLayoutText(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", text, err, want)
		}
	}
}
