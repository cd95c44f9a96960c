package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/transfer"
)

// controlView reads the control plane for `galeon status`: the
// registered nodes and their agents, the controller, the published
// writer decision and every proxy's view.
type controlView struct {
	store *discovery.Store
}

// openControlView connects to the control plane of the sandbox (or the
// given endpoints). Status works without it: nil when there is none or
// it does not answer (the reason is printed once).
func openControlView(ctx context.Context, endpoints, cluster string, fromSandbox bool, dir string) *controlView {
	if endpoints == "none" {
		return nil
	}
	if fromSandbox && (endpoints == "" || cluster == "") {
		if sb, err := sandbox.Open(dir, sandbox.Control{}); err == nil {
			if endpoints == "" {
				endpoints = sb.Discovery
			}
			if cluster == "" {
				cluster = sb.Name
			}
		}
	}
	if endpoints == "" {
		return nil
	}
	if cluster == "" {
		cluster = "galeon"
	}
	store, err := openControlStore(ctx, endpoints, cluster)
	if err != nil {
		fmt.Printf("control plane: %v\n", err)
		return nil
	}
	return &controlView{store: store}
}

func (c *controlView) Close() { c.store.Close() }

// controlPlane is one reading of the control plane.
type controlPlane struct {
	Endpoints  string                    `json:"endpoints"`
	Controller string                    `json:"controller"`
	Decision   *discovery.WriterDecision `json:"decision,omitempty"`
	Nodes      []discovery.NodeFacts     `json:"nodes"`
	Proxies    []discovery.ProxyFacts    `json:"proxies"`
	// Transfers are the state transfers in progress (joiners).
	Transfers []transfer.Progress `json:"transfers,omitempty"`
	// Operation is the operator's operation in progress (a schema change).
	Operation *discovery.Operation `json:"operation,omitempty"`
	// Replicas are the asynchronous replicas that follow the writer.
	Replicas []discovery.ReplicaFacts `json:"replicas,omitempty"`
	Error    string                   `json:"error,omitempty"`
}

func (c *controlView) read(ctx context.Context) *controlPlane {
	if c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cp := &controlPlane{Endpoints: strings.Join(c.store.Endpoints, ",")}
	var err error
	if cp.Controller, err = c.store.Controller(ctx); err != nil {
		cp.Error = err.Error()
		return cp
	}
	if u, err := c.store.ReadDecision(ctx); err == nil && u.Present {
		cp.Decision = &u.Decision
	} else if err == nil && u.Rejected != nil {
		cp.Error = u.Rejected.Error()
	}
	cp.Nodes, _ = c.store.Nodes(ctx)
	cp.Proxies, _ = c.store.Proxies(ctx)
	cp.Transfers = transfer.Estimate(cp.Nodes)
	cp.Operation, _ = c.store.ReadOperation(ctx)
	cp.Replicas, _ = c.store.Replicas(ctx)
	return cp
}

// text renders the reading for the terminal.
func (cp *controlPlane) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "control plane: etcd %s", cp.Endpoints)
	if cp.Error != "" {
		fmt.Fprintf(&b, "  error: %s\n", cp.Error)
		return b.String()
	}
	ctl := cp.Controller
	if ctl == "" {
		ctl = "(none elected)"
	}
	fmt.Fprintf(&b, "  controller %s", ctl)
	if d := cp.Decision; d != nil {
		if d.Fencing {
			fmt.Fprintf(&b, "  writer: fencing %s before %s (epoch %d)", d.Old, d.Next, d.Epoch)
		} else {
			fmt.Fprintf(&b, "  writer %s (epoch %d)", orDash(d.Writer), d.Epoch)
		}
	} else {
		b.WriteString("  no writer decision yet")
	}
	b.WriteString("\n")
	for _, n := range cp.Nodes {
		state := n.LocalStateComment
		if !n.Up {
			state = "down: " + n.Error
		}
		fmt.Fprintf(&b, "  agent %-8s %-21s %-10s committed %-7d synced %-5v updated %s\n", n.Name, n.Address, state, n.LastCommitted, n.Synced, n.UpdatedAt.Format("15:04:05.000"))
		for _, t := range cp.Transfers {
			if t.Node == n.Name {
				fmt.Fprintf(&b, "        receiving %s\n", t)
			}
		}
		if n.Fence != "" {
			fmt.Fprintf(&b, "        fenced by a replica's promotion: %s\n", n.Fence)
		}
	}
	if op := cp.Operation; op != nil {
		fmt.Fprintf(&b, "  operation %s %s (%s) by %s since %s: %s\n", op.Kind, op.ID, op.Method, op.By, op.Started.Format("15:04:05"), op.Statement)
		switch {
		case op.Failed != "":
			fmt.Fprintf(&b, "        STOPPED at %s: %s (%s)\n", orDash(op.Current), op.Failed, operationHint(op.Kind))
		case op.Current != "":
			fmt.Fprintf(&b, "        %s: %s %s; %d of %d nodes done\n", op.Current, op.Step, op.Detail, len(op.Done), len(op.Order))
		}
	}
	for _, r := range cp.Replicas {
		b.WriteString(replicaLine(r, cp.Decision))
	}
	for _, n := range cp.Nodes {
		if len(n.SourceProblems) > 0 && len(cp.Replicas) > 0 {
			fmt.Fprintf(&b, "        %s is not a safe source for the replicas: %s\n", n.Name, strings.Join(n.SourceProblems, "; "))
		}
	}
	for _, p := range cp.Proxies {
		agrees := "agrees"
		if d := cp.Decision; d == nil || p.Degraded || p.Switching || p.Applied != d.Epoch || (p.Writer != "" && p.Writer != d.Writer) {
			agrees = "DIFFERS"
		}
		role := ""
		if p.Controller {
			role = " (controller)"
		}
		fmt.Fprintf(&b, "  proxy %-14s %-21s writer %-8s epoch %-4d %s%s\n", p.Name, p.MySQL, orDash(p.Writer), p.Epoch, agrees, role)
	}
	return b.String()
}

// replicaLine is one asynchronous replica in status: its source, how
// far behind, and its agent's last word when it is not simply following.
func replicaLine(r discovery.ReplicaFacts, d *discovery.WriterDecision) string {
	state := "replicating"
	switch {
	case r.Promoted:
		state = fmt.Sprintf("PROMOTED: a writable primary of its own; it lacked %d of the cluster's transactions then", r.Lost)
	case !r.Up:
		state = "DOWN: " + r.Error
	case r.SQLError != "":
		state = "STOPPED on an error: " + r.SQLError
	case !r.IORunning || !r.SQLRunning:
		state = "not replicating: " + r.Why
	case d != nil && d.Writer != "" && r.SourceNode != d.Writer && r.Pinned == "":
		state = "not on the writer yet: " + r.Why
	}
	lag := "-"
	if r.BehindSeconds != nil {
		lag = fmt.Sprintf("%ds", *r.BehindSeconds)
	}
	line := fmt.Sprintf("  replica %-8s %-21s from %-8s behind %d trx / %s  moves %d  %s\n", r.Name, r.Address, orDash(r.SourceNode), max(r.Behind, 0), lag, r.Repoints, state)
	switch {
	case len(r.Members) > 0 && r.Promoted:
		line += fmt.Sprintf("          a DR cluster of %d nodes (%s), promoted: every node takes writes\n", len(r.Members), strings.Join(r.Members, ", "))
	case len(r.Members) > 0:
		line += fmt.Sprintf("          a DR cluster of %d nodes (%s), replicating through %s; the others apply through Galera\n",
			len(r.Members), strings.Join(r.Members, ", "), orDash(r.Address))
	}
	if a := r.Archive; a != nil {
		astate := fmt.Sprintf("streaming, %ds behind", a.LagSeconds)
		if !a.Streaming {
			astate = "STOPPED: " + a.Error
		}
		line += fmt.Sprintf("          binlog archive %s: %d files, %.1f MiB, %s\n", a.Dir, a.Files, float64(a.Bytes)/(1<<20), astate)
	}
	return line
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// openControlStore connects to a cluster's etcd for a short-lived command,
// failing within a few seconds when it does not answer.
func openControlStore(ctx context.Context, endpoints, cluster string) (*discovery.Store, error) {
	octx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return discovery.Open(octx, discovery.Config{Endpoints: endpoints, Cluster: cluster, DialTimeout: 2 * time.Second},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// operationHint says what an operator does about a stopped operation.
func operationHint(kind string) string {
	if kind == discovery.OperationSchemaChange {
		return "galeon cluster ddl --resume | --abandon"
	}
	return "put the node right as the message says, then galeon cluster ddl --abandon forgets the record"
}
