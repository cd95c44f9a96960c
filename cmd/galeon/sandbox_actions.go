package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/galeon-db/galeon/internal/sandbox"
)

// sandboxAction is one `galeon sandbox ACTION`: its usage, the flags it
// accepts and what it does. The usage texts (galeon sandbox --help,
// galeon sandbox ACTION --help) are made from the table of these
// (sandboxActions), so they list exactly the flags each action accepts.
type sandboxAction struct {
	name string
	arg  string // the one positional argument, as the usage shows it (NODE, SITE); "" for none
	help string // what the action does; the usage wraps it
	// internal actions are started by the sandbox itself: they are left
	// out of the usage and take no --name or --dir.
	internal bool
	// setup registers the action's own flags on fs; it returns the
	// values they fill in (for tests) and the function that runs the
	// action once they are parsed.
	setup func(fs *flag.FlagSet) (opts any, run func(ctx context.Context, c *sandboxCall) error)
}

// sandboxCall is one parsed `galeon sandbox ACTION ...`.
type sandboxCall struct {
	action *sandboxAction
	name   string   // --name
	dir    string   // --dir, or the directory of --name
	args   []string // the positional arguments: none, or the action's arg
	opts   any      // the action's own flag values (*upFlags, *latencyFlags, ...)
	run    func(ctx context.Context, c *sandboxCall) error
	start  time.Time       // when the command started (progress lines are timed from it)
	ctl    sandbox.Control // how the CLI runs the sandbox (cliControl)
}

// open opens the sandbox the call names.
func (c *sandboxCall) open() (*sandbox.Sandbox, error) { return sandbox.Open(c.dir, c.ctl) }

// arg is the call's positional argument (NODE, SITE); parseSandbox
// checked it is there.
func (c *sandboxCall) arg() string { return c.args[0] }

// withFlags builds a sandboxAction whose own flags (registered by flags,
// which may be nil) fill in a T that run then gets.
func withFlags[T any](name, arg, help string, flags func(o *T, fs *flag.FlagSet), run func(ctx context.Context, c *sandboxCall, o *T) error) sandboxAction {
	return sandboxAction{name: name, arg: arg, help: help,
		setup: func(fs *flag.FlagSet) (any, func(context.Context, *sandboxCall) error) {
			o := new(T)
			if flags != nil {
				flags(o, fs)
			}
			return o, func(ctx context.Context, c *sandboxCall) error { return run(ctx, c, o) }
		}}
}

// onSandbox is an action without flags of its own on an existing sandbox.
func onSandbox(name, help string, run func(ctx context.Context, c *sandboxCall, sb *sandbox.Sandbox) error) sandboxAction {
	return withFlags(name, "", help, nil, func(ctx context.Context, c *sandboxCall, _ *struct{}) error {
		sb, err := c.open()
		if err != nil {
			return err
		}
		return run(ctx, c, sb)
	})
}

// onNode is an action without flags of its own on one NODE of an
// existing sandbox.
func onNode(name, help string, run func(ctx context.Context, c *sandboxCall, sb *sandbox.Sandbox, node string) error) sandboxAction {
	a := onSandbox(name, help, func(ctx context.Context, c *sandboxCall, sb *sandbox.Sandbox) error {
		return run(ctx, c, sb, c.arg())
	})
	a.arg = "NODE"
	return a
}

// argExamples are what the errors about a missing argument suggest.
var argExamples = map[string]string{"NODE": "node2", "SITE": "dc2"}

// findSandboxAction returns the action called name, or nil.
func findSandboxAction(name string) *sandboxAction {
	for _, a := range sandboxActions() {
		if a.name == name {
			return &a
		}
	}
	return nil
}

// commonSandboxFlags registers the flags every action (but the internal
// ones) takes: which sandbox.
func commonSandboxFlags(fs *flag.FlagSet, name, dir *string) {
	fs.StringVar(name, "name", sandbox.DefaultName, "the sandbox's `NAME`")
	fs.StringVar(dir, "dir", "", "the sandbox directory `DIR` (default /var/tmp/galeon/NAME)")
}

// errUnknownSandboxAction is parseSandbox's error for an action that does
// not exist.
var errUnknownSandboxAction = errors.New("unknown action")

// parseSandbox parses `galeon sandbox ACTION [ARG] [flags]`: flags may
// come before or after the argument. For -h/--help it returns the call
// (to show its action's usage) and flag.ErrHelp.
func parseSandbox(args []string) (*sandboxCall, error) {
	if len(args) == 0 {
		return nil, errors.New("an action is required")
	}
	a := findSandboxAction(args[0])
	if a == nil {
		return nil, fmt.Errorf("%w %q", errUnknownSandboxAction, args[0])
	}
	c := &sandboxCall{action: a}
	fs := flag.NewFlagSet("sandbox "+a.name, flag.ContinueOnError)
	// Errors and usage are reported by the caller, once, with the action's flags.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if !a.internal {
		commonSandboxFlags(fs, &c.name, &c.dir)
	}
	c.opts, c.run = a.setup(fs)
	pos, err := parseInterleaved(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return c, err
	}
	if err != nil {
		if undefined, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
			return nil, fmt.Errorf("%s does not take %s; its flags: %s (galeon sandbox %s --help)",
				a.name, "--"+strings.TrimLeft(undefined, "-"), strings.Join(flagNames(fs), " "), a.name)
		}
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	switch {
	case a.arg == "" && len(pos) > 0:
		return nil, fmt.Errorf("%s takes no argument, got %q (name the sandbox with --name)", a.name, strings.Join(pos, " "))
	case a.arg != "" && len(pos) != 1:
		return nil, fmt.Errorf("%s needs exactly one %s argument (e.g. %s)", a.name, a.arg, argExamples[a.arg])
	}
	c.args = pos
	if c.dir == "" && !a.internal {
		c.dir = sandbox.DirFor(c.name)
	}
	return c, nil
}

// flagNames lists the flags of fs as --NAME.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	return names
}

// Usage layout: actions and flags indented by two, their descriptions
// starting at column helpColumn, lines wrapped at usageWidth.
const (
	helpColumn = 22
	usageWidth = 78
)

// printSandboxUsage writes `galeon sandbox --help`.
func printSandboxUsage(w io.Writer) {
	fmt.Fprint(w, "usage: galeon sandbox ACTION [NODE|SITE] [flags]\n\nactions:\n")
	for _, a := range sandboxActions() {
		if !a.internal {
			printEntry(w, actionSynopsis(&a, false, 2), a.help)
		}
	}
	fmt.Fprint(w, "\nflags of every action:\n")
	var name, dir string
	common := flag.NewFlagSet("common", flag.ContinueOnError)
	commonSandboxFlags(common, &name, &dir)
	printFlags(w, common)
	fmt.Fprint(w, "\n`galeon sandbox ACTION --help` shows one action and its flags.\n")
}

// printActionUsage writes `galeon sandbox ACTION --help`.
func printActionUsage(w io.Writer, a *sandboxAction) {
	const prefix = "usage: galeon sandbox "
	fmt.Fprintf(w, "%s%s\n\n", prefix, actionSynopsis(a, true, len(prefix))[len(prefix):])
	fmt.Fprintln(w, wrap(a.help, 2, 2))
	own := flag.NewFlagSet(a.name, flag.ContinueOnError)
	a.setup(own)
	if !a.internal {
		var name, dir string
		commonSandboxFlags(own, &name, &dir)
	}
	fmt.Fprint(w, "\nflags:\n")
	printFlags(w, own)
}

// actionSynopsis is "NAME [ARG] [--flag VALUE] ...", wrapped, its first
// line indented by indent; with common, the flags every action takes
// are in it too.
func actionSynopsis(a *sandboxAction, common bool, indent int) string {
	fs := flag.NewFlagSet(a.name, flag.ContinueOnError)
	a.setup(fs)
	if common && !a.internal {
		var name, dir string
		commonSandboxFlags(fs, &name, &dir)
	}
	words := []string{a.name}
	if a.arg != "" {
		words = append(words, a.arg)
	}
	fs.VisitAll(func(f *flag.Flag) { words = append(words, "["+flagSynopsis(f)+"]") })
	return wrap(strings.Join(words, " "), indent, indent+len(a.name)+1)
}

// glue joins words that wrap must keep on one line; it prints as a space.
const glue = "\x00"

// flagSynopsis is "--name VALUE" for one flag, "--name VALUE ..." for a
// repeatable one, "--name" for a boolean one, its words glued.
func flagSynopsis(f *flag.Flag) string {
	s := "--" + f.Name
	if value, _ := flag.UnquoteUsage(f); value != "" {
		s += glue + value
	}
	if _, ok := f.Value.(keyValues); ok {
		s += glue + "..."
	}
	return s
}

// printFlags writes one entry per flag of fs: its synopsis, its usage and
// its default unless that is the zero value.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		switch f.DefValue {
		case "", "false", "0", "0s":
		default:
			usage += " (default " + f.DefValue + ")"
		}
		printEntry(w, wrap(flagSynopsis(f), 2, 2), usage)
	})
}

// printEntry writes a synopsis (wrapped and indented already) and its
// help from helpColumn on: on the synopsis' line if it leaves room.
func printEntry(w io.Writer, synopsis, help string) {
	body := wrap(help, helpColumn, helpColumn)
	if !strings.Contains(synopsis, "\n") && len(synopsis) < helpColumn {
		fmt.Fprintf(w, "%s%s\n", synopsis, body[len(synopsis):])
		return
	}
	fmt.Fprintf(w, "%s\n%s\n", synopsis, body)
}

// wrap fills text's words into lines of at most usageWidth columns, the
// first indented by first spaces, the others by rest. Glued words stay
// on one line, with a space between them.
func wrap(text string, first, rest int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", first))
	col := first
	for i, word := range strings.Fields(text) {
		word = strings.ReplaceAll(word, glue, " ")
		n := utf8.RuneCountInString(word)
		if i > 0 {
			if col+1+n > usageWidth {
				b.WriteString("\n" + strings.Repeat(" ", rest))
				col = rest
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}

// optDuration is a duration flag that knows whether it was given.
type optDuration struct {
	d   time.Duration
	set bool
}

func (o *optDuration) String() string {
	if o == nil || !o.set {
		return ""
	}
	return o.d.String()
}

func (o *optDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("%s: a delay cannot be negative", s)
	}
	o.d, o.set = d, true
	return nil
}
