package config

import (
	"errors"
	"fmt"
	"strings"
)

// Weights are one node's hostgroup weights.
type Weights struct {
	Writer int `json:"writer"`
	Reader int `json:"reader"`
}

// Runtime is the part of a proxy's configuration that operators change
// while it runs and that all proxies of a cluster share: users, query
// rules, node weights, operator drains and the writer policy. The
// control plane keeps one copy for the whole cluster; the proxy imports and
// exports it (proxy.ExportRuntime, ApplyRuntime).
type Runtime struct {
	Users      []User
	QueryRules []QueryRule
	// Weights of every node by name (configured or discovered).
	Weights map[string]Weights
	// Drained lists the nodes under an operator drain.
	Drained            []string
	Failback           string
	WriterIsAlsoReader string
}

// Validate checks rt as the configuration file's loader would, naming the
// key of each problem.
func (rt Runtime) Validate() error {
	c := Config{Users: rt.Users, QueryRules: rt.QueryRules}
	var probs []string
	for _, p := range c.Validate() {
		if strings.HasPrefix(p, "users") || strings.HasPrefix(p, "query_rules") {
			probs = append(probs, p)
		}
	}
	if _, err := ParseFailback(rt.Failback); err != nil {
		probs = append(probs, "galera.failback: "+err.Error())
	}
	if err := checkReaderPolicy(rt.WriterIsAlsoReader); err != nil {
		probs = append(probs, "galera.writer_is_also_reader: "+err.Error())
	}
	for name, w := range rt.Weights {
		if w.Writer < 0 || w.Reader < 0 || w.Writer > 1_000_000 || w.Reader > 1_000_000 {
			probs = append(probs, fmt.Sprintf("weights.%s: use 0 to 1000000", name))
		}
	}
	if len(probs) > 0 {
		return errors.New(strings.Join(probs, "; "))
	}
	return nil
}

// checkReaderPolicy checks a galera.writer_is_also_reader value.
func checkReaderPolicy(v string) error {
	switch v {
	case "never", "always", "when_no_other_reader":
		return nil
	}
	return fmt.Errorf("%q: use never, always or when_no_other_reader", v)
}
