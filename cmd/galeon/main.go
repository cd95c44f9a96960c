// Command galeon is the high-availability connection layer and cluster
// manager for Galera clusters. One binary, one subcommand per job.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string) error
}

func commands() []command {
	return []command{
		{"sandbox", "run local MariaDB Galera clusters (up, status, stop, start, add, remove, kill, ...)", runSandbox},
		{"proxy", "MySQL-protocol proxy with read/write split, pooling and multiplexing", runProxy},
		{"status", "live wsrep view of a Galera cluster, one line per node per interval", runStatus},
		{"agent", "node agent: registers a Galera node in etcd, clustercheck endpoint for HAProxy", runAgent},
		{"plan", "predict which node, site or link failure stops writes in a multi-site layout, and what to change", runPlan},
		{"cluster", "manage a running cluster through its control plane (rolling-restart, stop, start, recover, add, remove, ddl, backup, restore)", runCluster},
		{"replica", "asynchronous replicas that follow the writer: list, add (sandbox)", runReplica},
		{"discovery", "the control plane's etcd members: list, add, remove, replace (member ACTION)", runDiscovery},
		{"version", "print the galeon version", func(context.Context, []string) error {
			fmt.Println("galeon", version)
			return nil
		}},
	}
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: galeon COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "\n`galeon COMMAND -h` shows a command's flags.\n")
}

// errSilentFailure ends a command with exit status 1 and no message: the
// status is the answer (galeon sandbox running NODE).
var errSilentFailure = errors.New("exit status 1")

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands() {
		if c.name == os.Args[1] {
			if err := c.run(ctx, os.Args[2:]); err != nil {
				if !errors.Is(err, errSilentFailure) {
					fmt.Fprintf(os.Stderr, "galeon %s: %v\n", c.name, err)
				}
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintf(os.Stderr, "galeon: unknown command %q\n\n", os.Args[1])
	usage()
	os.Exit(2)
}
