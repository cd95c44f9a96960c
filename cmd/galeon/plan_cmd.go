package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/galeon-db/galeon/internal/quorum"
	"github.com/galeon-db/galeon/internal/sandbox"
)

// runPlan answers "which single failure stops writes, and what should I
// change?" for a multi-site layout, before anything is built.
func runPlan(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	dc := fs.String("dc", "", "sites and their members: dc1:2,dc2:2,dc3:garbd (SITE:N, SITE:garbd, SITE:N+garbd)")
	name := fs.String("name", "", "plan the layout of this (multi-site) sandbox instead of --dc")
	weights := fs.String("weight", "", "pc.weight of members: dc1-1=2,dc3-garbd=1 (default 1)")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	var l quorum.Layout
	var err error
	switch {
	case *name != "" && *dc == "":
		if l, err = sandboxLayout(*name); err != nil {
			return err
		}
	case *dc != "" && *name == "":
		if l, err = quorum.ParseLayout(*dc); err != nil {
			return fmt.Errorf("--dc: %w", err)
		}
	default:
		return errors.New("give the layout as --dc dc1:2,dc2:2,dc3:garbd, or a sandbox as --name NAME")
	}
	if *weights != "" {
		for _, kv := range strings.Split(*weights, ",") {
			name, v, ok := strings.Cut(kv, "=")
			w, err := strconv.Atoi(v)
			if !ok || err != nil {
				return fmt.Errorf("--weight %q: want MEMBER=N", kv)
			}
			if err := l.SetWeight(name, w); err != nil {
				return fmt.Errorf("--weight: %w", err)
			}
		}
	}
	r := quorum.Plan(l)
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printPlan(os.Stdout, r)
	return nil
}

// printPlan writes the plan as a table an operator reads top to bottom.
func printPlan(w io.Writer, r quorum.Report) {
	fmt.Fprintln(w, "layout:")
	for _, s := range r.Layout.Sites {
		var ms []string
		for _, m := range r.Layout.Members {
			if m.Site == s {
				d := m.Name
				if m.Weight != 1 {
					d += fmt.Sprintf(" (weight %d)", m.Weight)
				}
				ms = append(ms, d)
			}
		}
		seg := 0
		for _, m := range r.Layout.Members {
			if m.Site == s {
				seg = m.Segment
			}
		}
		fmt.Fprintf(w, "  %-8s segment %d: %s\n", s, seg, strings.Join(ms, ", "))
	}
	fmt.Fprintln(w, "\nfailure                      writes   primary component (others stop)")
	for _, o := range r.Outcomes {
		res := "STOP"
		if o.Writes {
			res = "ok"
		}
		var primary, others []string
		for _, c := range o.Components {
			if c.Primary {
				primary = append(primary, strings.Join(c.Members, " "))
			} else {
				others = append(others, strings.Join(c.Members, " "))
			}
		}
		line := strings.Join(primary, "")
		if line == "" {
			line = "(none)"
		}
		if len(others) > 0 {
			line += "   [" + strings.Join(others, "] [") + "]"
		}
		if o.Relay != "" {
			res = "pause"
			line += "   (relayed through " + o.Relay + " after a split of a few seconds)"
		}
		fmt.Fprintf(w, "  %-27s %-8s %s\n", o.Failure, res, line)
	}
	if len(r.Warnings)+len(r.Advice) > 0 {
		fmt.Fprintln(w)
	}
	for _, s := range r.Warnings {
		fmt.Fprintln(w, "warning: "+s)
	}
	for _, s := range r.Advice {
		fmt.Fprintln(w, "advice:  "+s)
	}
}

// sandboxLayout reads a multi-site sandbox's members: its nodes and
// arbitrators with their sites and segments.
func sandboxLayout(name string) (quorum.Layout, error) {
	sb, err := sandbox.Open(sandbox.DirFor(name), sandbox.Control{})
	if err != nil {
		return quorum.Layout{}, err
	}
	var ms []quorum.Member
	for _, n := range sb.Nodes {
		ms = append(ms, quorum.Member{Name: n.Name, Site: n.Site, Segment: n.Segment})
	}
	for _, a := range sb.Arbitrators {
		ms = append(ms, quorum.Member{Name: a.Name, Site: a.Site, Segment: a.Segment, Arbitrator: true})
	}
	l, err := quorum.NewLayout(ms)
	if err != nil {
		return quorum.Layout{}, fmt.Errorf("sandbox %s: %w (plan needs a sandbox made with --dc)", name, err)
	}
	return l, nil
}
