package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// parseInterleaved parses flags that may come before, between or after
// positional arguments (`sandbox remove node2 --name demo`), which the
// standard flag package alone does not allow.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// keyValues is a repeatable KEY=VALUE flag.
type keyValues map[string]string

func (kv keyValues) String() string {
	parts := make([]string, 0, len(kv))
	for k, v := range kv {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q: want KEY=VALUE", s)
	}
	kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

// newLogger builds the process logger: logfmt (slog's text handler, one
// key=value line per record) by default, JSON for log shippers that want
// it. Every routing event is one record with kind, node, epoch and cause.
func newLogger(format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "", "text", "logfmt":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text (logfmt) or json", format)
}
