package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/galeon-db/galeon/internal/replica"
)

// drDomainStep separates a DR cluster's GTID domain from its primary's:
// the primary numbers its transactions in 100, its DR cluster in 200.
const drDomainStep = 100

// drPrimary is the sandbox a DR cluster is made from (opts.DROf, beside
// opts.Dir), checked to be a replication source.
func drPrimary(opts Options) (*Sandbox, error) {
	switch {
	case opts.FromBackup == "":
		return nil, errors.New("--dr-of: a DR cluster starts from a backup of its primary: give --from-backup DIR (galeon cluster backup)")
	case opts.Sites != "":
		return nil, errors.New("--dr-of: a multi-site DR cluster is not supported yet")
	case opts.DROf == opts.Name:
		return nil, fmt.Errorf("--dr-of %s: a sandbox cannot be its own DR cluster", opts.DROf)
	}
	p, err := Open(filepath.Join(filepath.Dir(opts.Dir), opts.DROf), Control{})
	if err != nil {
		return nil, fmt.Errorf("--dr-of %s: %w", opts.DROf, err)
	}
	if !p.ReplicationSource {
		return nil, fmt.Errorf("--dr-of %s: its nodes keep no binary log with the cluster's GTIDs: create it with --replicas N", opts.DROf)
	}
	return p, nil
}

// makeDROf makes the sandbox being created a DR cluster of p: p's
// accounts (its data holds them), binary logs with a GTID domain and
// server_id of its own (it replicates p's transactions, which a server
// with p's server_id would skip), and the agents of p's control plane.
func (sb *Sandbox) makeDROf(p *Sandbox) {
	sb.DROf = p.Name
	sb.Credentials = p.Credentials
	sb.ReplicationSource = true
	sb.GTIDDomain = p.gtidDomain() + drDomainStep
	sb.ServerID = p.serverID() + 1
	if sb.Discovery == DiscoveryEndpoint(sb.BasePort) {
		sb.Discovery = p.Discovery // the default: the primary's control plane
	}
}

// ReadOnlyDR says whether the nodes are read-only for clients as a DR
// cluster that still replicates (not promoted).
func (s *State) ReadOnlyDR() bool { return s.DROf != "" && !s.DRPromoted }

// setSlavePos sets gtid_slave_pos on every node: where the DR cluster's
// replication of its primary starts (the backup's GTID position).
func (sb *Sandbox) setSlavePos(ctx context.Context, pos string) error {
	if p, err := replica.ParsePosition(pos); err != nil || len(p) == 0 {
		return fmt.Errorf("the backup's GTID position %q is not domain-server-seqno: a DR cluster needs a backup of a cluster with binary logs (--replicas)", pos)
	}
	for _, n := range sb.Nodes {
		if _, err := sb.socketSQL(ctx, n, "SET GLOBAL gtid_slave_pos = '"+pos+"'"); err != nil {
			return fmt.Errorf("set gtid_slave_pos: %w", err)
		}
	}
	sb.ctl.Progress(sb.Nodes[0].Name, "DR cluster of "+sb.DROf+": replication starts after "+pos)
	return nil
}

// MarkDRPromoted records that the DR cluster was promoted: its nodes
// take writes from now on, restarts included.
func (sb *Sandbox) MarkDRPromoted() error {
	if sb.DROf == "" || sb.DRPromoted {
		return nil
	}
	sb.DRPromoted = true
	for _, n := range sb.Nodes {
		if err := sb.writeMyCnf(n); err != nil {
			return err
		}
	}
	return sb.save()
}

// Addrs are the nodes' client addresses, in order.
func (s *State) Addrs() []string {
	out := make([]string, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		out = append(out, n.Addr())
	}
	return out
}
