package quorum

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/galera"
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
		// A majority site cut off runs on as the Primary component; lost,
		// it stops everything.
		{"dc1:3,dc2:1", nil, Failure{Kind: SiteCut, Site: "dc1"}, "writes: dc1-1,dc1-2,dc1-3* | dc2-1"},
		{"dc1:3,dc2:1", nil, Failure{Kind: SiteDown, Site: "dc1"}, "stops: dc2-1"},
		{"dc1:2,dc2:1", nil, Failure{Kind: SiteCut, Site: "dc2"}, "writes: dc1-1,dc1-2* | dc2-1"},
		{"dc1:2,dc2:1,dc3:1", nil, Failure{Kind: SiteCut, Site: "dc1"}, "stops: dc1-1,dc1-2 | dc2-1,dc3-1"},
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
		not          []string // substrings no warning or advice may hold
		quiet        bool     // no warnings, and no advice but the WAN profile and the sites'
	}{
		{layout: "dc1:2,dc2:2",
			warn: []string{
				"site dc1 holds 2 of 4 votes, exactly half: lost (its members down), writes stop everywhere",
				"cut off (its members running), writes stop on every side: an even split, 2 and 2 votes",
				"site dc2 holds 2 of 4 votes"},
			advice: []string{"add an arbitrator (garbd) in a site of its own, dc3,", "--dc dc1:2,dc2:2,dc3:garbd"}},
		// 3+1: no split is even; losing dc1 stops writes, cutting it off
		// does not (dc1 keeps writing).
		{layout: "dc1:3,dc2:1",
			warn: []string{"site dc1 holds 3 of 4 votes, a majority: lost (its members down), writes stop everywhere: the members left (dc2-1) hold 1 of 4 votes",
				"cut off (its members running), dc1 keeps writing as the majority side and the other sites stop"},
			advice: []string{"these stop writes: lose site dc1;", "--dc dc1:3,dc2:3,dc3:garbd", `galera.writer_site = "dc1"`, "the majority side"},
			not:    []string{"even", "site dc2 holds", "cut off site dc1"}},
		{layout: "dc1:2,dc2:2,dc3:garbd", quiet: true,
			advice: []string{`galera.writer_site = "dc1"`, "no site holds a majority of the 5 votes", "every single failure but lose site dc1, cut off site dc1 (then it moves to dc2)"}},
		{layout: "dc1:3", warn: []string{"one site"}, not: []string{"writer_site", "even"}},
		{layout: "dc1:2", advice: []string{"run at least 3 nodes"}},
		{layout: "dc1:2,dc2:1,dc3:1",
			warn:   []string{"site dc1 holds 2 of 4 votes, exactly half", "an even split, 2 and 2 votes"},
			advice: []string{"these stop writes: lose site dc1, cut off site dc1;", "--dc dc1:2,dc2:1,dc3:1,dc4:garbd"}},
		{layout: "dc1:2+garbd,dc2:2", warn: []string{"arbitrator in dc1 shares its site", "site dc1 holds 3 of 5 votes, a majority"},
			advice: []string{"instead of beside data nodes", "--dc dc1:2,dc2:2,dc3:garbd"}},
		{layout: "dc1:1,dc2:garbd,dc3:garbd", warn: []string{"site dc1 holds 1 of 3 votes, not a majority", "arbitrators only, which hold no data"},
			advice: []string{"put data nodes in more sites"}, not: []string{"writer_site", "half the votes"}},
		{layout: "dc1:3,dc2:3,dc3:3", quiet: true},
	} {
		l, err := ParseLayout(tc.layout)
		if err != nil {
			t.Fatal(err)
		}
		r := Plan(l)
		warn, advice := strings.Join(r.Warnings, "\n"), strings.Join(r.Advice, "\n")
		if tc.quiet {
			var other []string
			for _, a := range r.Advice {
				if !strings.Contains(a, "WAN profile") && !strings.Contains(a, "galera.writer_site") && !strings.Contains(a, "galera.site_hold_down") {
					other = append(other, a)
				}
			}
			if warn != "" || len(other) > 0 {
				t.Errorf("%s: unexpected warnings %q / advice %q", tc.layout, warn, other)
			}
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
		for _, n := range tc.not {
			if strings.Contains(warn+"\n"+advice, n) {
				t.Errorf("%s: %q is said, but does not hold:\n%s\n%s", tc.layout, n, warn, advice)
			}
		}
		// A suggested layout must keep writes through every single site
		// loss, site cut and link cut, as the advice says.
		if _, rest, ok := strings.Cut(advice, "--dc "); ok {
			spec, _, _ := strings.Cut(rest, ": ")
			fixed, err := ParseLayout(spec)
			if err != nil {
				t.Fatalf("%s: the suggested layout: %v", tc.layout, err)
			}
			for _, o := range Plan(fixed).Outcomes {
				if !o.Writes && o.Failure.Kind != NodeDown {
					t.Errorf("%s: the suggested %v stops writes on %s", tc.layout, fixed.Sites, o.Failure)
				}
			}
		}
	}
	// Every member, every site lost and cut off, and every link of a
	// three-site layout.
	l, _ := ParseLayout("dc1:2,dc2:2,dc3:garbd")
	if n := len(Plan(l).Outcomes); n != 5+3+3+3 {
		t.Errorf("%d scenarios, want 14", n)
	}
}

// TestPlanRows: the plan prints a row for each site lost and each site
// cut off, and for a majority site the two differ (3+1: lost stops
// everything, cut off keeps dc1 writing, as the sandbox shows).
func TestPlanRows(t *testing.T) {
	for _, tc := range []struct {
		layout  string
		failure Failure
		want    string // the row as printed, spaces squeezed
	}{
		{"dc1:3,dc2:1", Failure{Kind: SiteDown, Site: "dc1"}, "lose site dc1 STOP (none) [dc2-1]"},
		{"dc1:3,dc2:1", Failure{Kind: SiteCut, Site: "dc1"}, "cut off site dc1 ok dc1-1 dc1-2 dc1-3 [dc2-1]"},
		{"dc1:3,dc2:1", Failure{Kind: SiteCut, Site: "dc2"}, "cut off site dc2 ok dc1-1 dc1-2 dc1-3 [dc2-1]"},
		{"dc1:3,dc2:1", Failure{Kind: LinkCut, A: "dc2", B: "dc1"}, "cut dc1 <-> dc2 ok dc1-1 dc1-2 dc1-3 [dc2-1]"},
		{"dc1:2,dc2:1", Failure{Kind: SiteCut, Site: "dc1"}, "cut off site dc1 ok dc1-1 dc1-2 [dc2-1]"},
		{"dc1:2,dc2:2", Failure{Kind: SiteCut, Site: "dc2"}, "cut off site dc2 STOP (none) [dc1-1 dc1-2] [dc2-1 dc2-2]"},
		{"dc1:2,dc2:2,dc3:garbd", Failure{Kind: SiteCut, Site: "dc1"}, "cut off site dc1 ok dc2-1 dc2-2 dc3-garbd [dc1-1 dc1-2]"},
		{"dc1:2,dc2:2,dc3:garbd", Failure{Kind: SiteCut, Site: "dc3"}, "cut off site dc3 ok dc1-1 dc1-2 dc2-1 dc2-2 [dc3-garbd]"},
		{"dc1:2,dc2:2,dc3:garbd", Failure{Kind: LinkCut, A: "dc1", B: "dc2"}, "cut dc1 <-> dc2 pause dc1-1 dc1-2 dc2-1 dc2-2 dc3-garbd (relayed through dc3 after a split of a few seconds)"},
		{"dc1:1,dc2:garbd,dc3:garbd", Failure{Kind: SiteCut, Site: "dc1"}, "cut off site dc1 STOP dc2-garbd dc3-garbd [dc1-1]"},
	} {
		l, err := ParseLayout(tc.layout)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := Plan(l).Find(tc.failure)
		if !ok {
			t.Errorf("%s: the plan has no row for %s", tc.layout, tc.failure)
			continue
		}
		if got := strings.Join(strings.Fields(o.Row().String()), " "); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.layout, tc.failure, got, tc.want)
		}
	}
}

// TestHoldDownAdvice: the advised hold-down is called the default only
// when it is this galeon's default.
func TestHoldDownAdvice(t *testing.T) {
	l, _ := ParseLayout("dc1:2,dc2:2,dc3:garbd")
	for _, tc := range []struct {
		def  time.Duration
		want string
	}{
		{SiteHoldDown, `galera.site_hold_down = "30s" (the default)`},
		{0, `galera.site_hold_down = "30s" (set it: this galeon's default is 0s)`},
	} {
		if advice := strings.Join(PlanFor(l, Options{DefaultHoldDown: tc.def}).Advice, "\n"); !strings.Contains(advice, tc.want) {
			t.Errorf("default %s: advice lacks %q:\n%s", tc.def, tc.want, advice)
		}
	}
	one, _ := ParseLayout("dc1:2,dc2:garbd")
	if advice := strings.Join(Plan(one).Advice, "\n"); strings.Contains(advice, "site_hold_down") || strings.Contains(advice, "writer_site") {
		t.Errorf("one data site: advice on the writer's site: %s", advice)
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
// replace the general one), the advice says how the timeout the nodes
// run compares with what it advises, and a link that cannot be measured
// is reported.
func TestMeasuredRoundTrips(t *testing.T) {
	l, err := ParseLayout("dc1:2,dc2:2,dc3:garbd")
	if err != nil {
		t.Fatal(err)
	}
	near := []RTT{{From: "dc1", To: "dc2", RTT: 800 * time.Microsecond}, {From: "dc1", To: "dc3", RTT: time.Millisecond}}
	far := []RTT{{From: "dc1", To: "dc2", RTT: 30 * time.Millisecond}, {From: "dc2", To: "dc3", Err: "i/o timeout"}}
	for _, tc := range []struct {
		rtts      []RTT
		run       Running
		want, not []string
	}{
		{near, Running{}, []string{"LAN failure detection fits (Galera's default, evs.suspect_timeout PT5S)"}, []string{wanAdvice, "the nodes run"}},
		// The sandbox runs PT2S: the advice says so rather than let PT5S
		// pass for what it runs.
		{near, Running{SuspectTimeout: "PT2S"}, []string{"(Galera's default, evs.suspect_timeout PT5S; the nodes run PT2S)"}, []string{wanAdvice}},
		{near, Running{SuspectTimeout: "PT5S"}, []string{"PT5S, which the nodes run"}, nil},
		{near, Running{SuspectTimeout: "PT30S"}, []string{"the nodes run PT30S, the WAN profile's"}, nil},
		{far, Running{}, []string{wanAdvice, "at least 30 ms"}, []string{"LAN failure", "the nodes run"}},
		{far, Running{SuspectTimeout: "PT2S"}, []string{"(the nodes run evs.suspect_timeout PT2S now)"}, nil},
		{near, Running{SuspectTimeout: "PT2S", Why: "the sandbox's loopback tuning"}, []string{"the nodes run PT2S, the sandbox's loopback tuning)"}, nil},
		{far, Running{SuspectTimeout: "PT30S"}, []string{"(the nodes run evs.suspect_timeout PT30S already)"}, nil},
		{[]RTT{{From: "dc1", To: "dc2", Err: "i/o timeout"}}, Running{SuspectTimeout: "PT2S"}, []string{wanAdvice}, []string{"LAN failure"}},
	} {
		r := Plan(l)
		r.Measured(tc.rtts, tc.run)
		all := strings.Join(r.Advice, "\n")
		if n := strings.Count(all, wanAdvice); n > 1 {
			t.Errorf("%v %v: the WAN advice %d times", tc.rtts, tc.run, n)
		}
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%v %v: advice lacks %q:\n%s", tc.rtts, tc.run, w, all)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(all, n) {
				t.Errorf("%v %v: advice holds %q:\n%s", tc.rtts, tc.run, n, all)
			}
		}
	}
	r := Plan(l)
	r.Measured(far, Running{})
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "dc2-dc3 could not be measured") {
		t.Errorf("a failed measurement is not reported: %v", r.Warnings)
	}
	// The advice's figures are the WAN profile's.
	for k, v := range galera.WANProfile() {
		if strings.HasPrefix(k, "evs.suspect") && !strings.Contains(wanAdvice, k+"="+v) {
			t.Errorf("the WAN advice does not give %s=%s: %s", k, v, wanAdvice)
		}
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
