package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/quorum"
)

// ClusterGTIDDomain is the GTID domain (wsrep_gtid_domain_id) a sandbox
// made as a replication source numbers the cluster's transactions in.
const ClusterGTIDDomain = quorum.ClusterGTIDDomain

// offsetReplica: replica k (1-based) listens for clients on base+600+k.
const offsetReplica = 600

// MaxReplicas bounds a sandbox's asynchronous replicas.
const MaxReplicas = 9

// sourceCnf is what makes a Galera node a replication source that a
// replica can move to and from (replica.CheckSource): binary logs with
// what the node applies from the others, the cluster's transactions
// numbered alike on every node (one domain, wsrep_gtid_mode), and the
// node's own local writes in a domain of their own.
func (s *State) sourceCnf(n Node) string {
	cnf := fmt.Sprintf(`log_bin = binlog
log_slave_updates = ON
server_id = %d
wsrep_gtid_mode = ON
wsrep_gtid_domain_id = %d
gtid_domain_id = %d
`, s.serverID(), s.gtidDomain(), s.gtidDomain()+uint32(n.Index))
	if s.DROf != "" {
		// A DR cluster's node never resumes replicating by itself when
		// it starts: its agent decides which one node replicates (two
		// would apply the primary's transactions twice).
		cnf += "skip_slave_start = ON\n"
	}
	return cnf
}

// gtidDomain is the GTID domain the cluster numbers its transactions
// in: ClusterGTIDDomain, or a DR cluster's own.
func (s *State) gtidDomain() uint32 {
	if s.GTIDDomain != 0 {
		return s.GTIDDomain
	}
	return ClusterGTIDDomain
}

// serverID is the nodes' server_id (one per cluster with
// wsrep_gtid_mode): 1, or a DR cluster's own, so that each cluster
// takes the other's transactions when it replicates them.
func (s *State) serverID() uint32 {
	if s.ServerID != 0 {
		return s.ServerID
	}
	return 1
}

// replicaCnf is an asynchronous replica's option file: a plain MariaDB
// server (no wsrep), read-only for clients, with a server_id and GTID
// domain of its own and its own binary log (to be promoted or chained).
func (s *State) replicaCnf(n Node) string {
	server := merged(defaultServerOptions(), s.ServerOptions)
	for _, k := range []string{"wsrep_slave_threads", "wsrep_sync_wait", "innodb_autoinc_lock_mode"} {
		delete(server, k)
	}
	var b strings.Builder
	b.WriteString("# Written by galeon sandbox: an asynchronous replica of the cluster.\n[mariadbd]\n")
	for _, k := range sortedKeys(server) {
		fmt.Fprintf(&b, "%s = %s\n", k, server[k])
	}
	b.WriteString(s.placeCnf(n))
	fmt.Fprintf(&b, `server_id = %d
gtid_domain_id = %d
log_bin = binlog
log_slave_updates = ON
relay_log = relay
read_only = ON
slave_parallel_threads = 2

[client]
socket = %s
`, 1000+n.Index, 1000+n.Index, s.socket(n))
	return b.String()
}

func newReplica(basePort, index int) Node {
	return Node{Index: index, Name: "replica" + strconv.Itoa(index), Port: basePort + offsetReplica + index, Replica: true}
}

// AddReplica creates an asynchronous replica of the cluster and starts
// its server, with the sandbox's accounts on it; replication itself is
// set up by the replica's agent, which points it at the writer (galeon
// agent --replica). The sandbox must have been made a replication source
// (--replicas).
func (sb *Sandbox) AddReplica(ctx context.Context) (Node, error) {
	if !sb.ReplicationSource {
		return Node{}, errors.New("this sandbox's nodes keep no binary log with the cluster's GTIDs: create it with --replicas N (it cannot be switched on afterwards without a rolling restart)")
	}
	if sb.Net != nil {
		return Node{}, errors.New("replicas of a multi-site sandbox are not supported yet")
	}
	idx := 0
	for _, r := range sb.Replicas {
		idx = max(idx, r.Index)
	}
	if idx+1 > MaxReplicas {
		return Node{}, fmt.Errorf("a sandbox has at most %d replicas", MaxReplicas)
	}
	r := newReplica(sb.BasePort, idx+1)
	if err := checkPortsFree([]Node{r}); err != nil {
		return Node{}, err
	}
	sb.Replicas = append(sb.Replicas, r)
	if err := sb.save(); err != nil {
		return r, err
	}
	if err := sb.prepareNodeDir(r); err != nil {
		return r, err
	}
	if err := sb.installDB(ctx, r); err != nil {
		return r, err
	}
	if err := sb.StartReplica(ctx, r.Name); err != nil {
		return r, err
	}
	// The accounts the cluster has (they replicate too, with the same
	// passwords: CREATE OR REPLACE), made here first so that the agent
	// can log in before replication runs; not logged.
	c := sb.Credentials
	var q strings.Builder
	q.WriteString("SET sql_log_bin = 0; ")
	for _, h := range []string{"%", "localhost", "127.0.0.1"} {
		fmt.Fprintf(&q, "CREATE OR REPLACE USER '%s'@'%s' IDENTIFIED BY '%s'; GRANT ALL ON *.* TO '%s'@'%s' WITH GRANT OPTION; ", c.AdminUser, h, c.AdminPassword, c.AdminUser, h)
		fmt.Fprintf(&q, "CREATE OR REPLACE USER '%s'@'%s' IDENTIFIED BY '%s'; ", c.MonitorUser, h, c.MonitorPassword)
	}
	if _, err := sb.socketSQL(ctx, r, q.String()); err != nil {
		return r, fmt.Errorf("create the accounts on %s: %w", r.Name, err)
	}
	sb.ctl.Progress(r.Name, "asynchronous replica ready on "+r.Addr()+"; its agent points it at the writer")
	return r, nil
}

// StartReplica starts replica name's server and waits until it answers.
func (sb *Sandbox) StartReplica(ctx context.Context, name string) error {
	r, err := sb.replica(name)
	if err != nil {
		return err
	}
	if sb.pid(r) != 0 {
		return nil
	}
	if err := sb.writeMyCnf(r); err != nil {
		return err
	}
	sb.ctl.Progress(r.Name, "starting (asynchronous replica)")
	if _, err := sb.startProcess(r, nil, sb.ctl.KillWithParent); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, sb.ctl.NodeTimeout)
	defer cancel()
	for {
		if _, err := sb.socketSQL(wctx, r, "SELECT 1"); err == nil {
			return nil
		}
		if sb.pid(r) == 0 {
			return fmt.Errorf("%s exited while starting; from %s:\n  %s", r.Name, sb.errLog(r), strings.Join(logExcerpt(sb.errLog(r), 8), "\n  "))
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("%s did not answer within %s", r.Name, sb.ctl.NodeTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StopReplica stops replica name's server cleanly.
func (sb *Sandbox) StopReplica(ctx context.Context, name string) error {
	r, err := sb.replica(name)
	if err != nil {
		return err
	}
	sb.closeDB(r.Name)
	return sb.stopProcess(ctx, r, time.Minute)
}

func (sb *Sandbox) replica(name string) (Node, error) {
	for _, r := range sb.Replicas {
		if r.Name == name {
			return r, nil
		}
	}
	return Node{}, fmt.Errorf("sandbox %q has no replica %q", sb.Name, name)
}
