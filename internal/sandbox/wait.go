package sandbox

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/outcome"
	"github.com/galeon-db/galeon/internal/wsrepview"
)

// waitSynced waits until node n (process pid) is Synced in a Primary
// component, reporting progress from its error log. It fails at once, with
// the log lines that say why, if the process exits.
func (sb *Sandbox) waitSynced(ctx context.Context, n Node, pid int, logOffset int64) error {
	ctx, cancel := context.WithTimeout(ctx, sb.ctl.NodeTimeout)
	defer cancel()
	start := time.Now()
	marker := "--defaults-file=" + sb.cnfPath(n)
	last, lastRank := "", -1
	report := func(p string) {
		last = p
		sb.ctl.Progress(n.Name, fmt.Sprintf("%s (%.1fs)", p, time.Since(start).Seconds()))
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, line := range readFrom(sb.errLog(n), &logOffset) {
			if rank, p := phase(line); rank > lastRank && p != "synced" {
				lastRank = rank
				report(p)
			}
		}
		if !stillRunning(pid, marker) {
			return sb.startFailure(n, "exited during start-up ("+exitReport(pid)+")")
		}
		st, err := sb.wsrepStatus(ctx, n)
		if err == nil && st["wsrep_local_state_comment"] == "Synced" &&
			st["wsrep_cluster_status"] == "Primary" && st["wsrep_ready"] == "ON" {
			report("Synced, cluster size " + st["wsrep_cluster_size"])
			return nil
		}
		select {
		case <-ctx.Done():
			_ = sb.stopProcess(context.Background(), n, 5*time.Second)
			return sb.startFailure(n, fmt.Sprintf("was not Synced after %s (last state %q)", time.Since(start).Round(time.Second), last))
		case <-tick.C:
		}
	}
}

func (sb *Sandbox) startFailure(n Node, what string) error {
	lines := logExcerpt(sb.errLog(n), 8)
	if len(lines) == 0 {
		lines = logExcerpt(sb.stdoutLog(n), 8)
	}
	return fmt.Errorf("%s %s; from %s:\n  %s\nfix the cause above, then `galeon sandbox destroy --name %s` and retry",
		n.Name, what, sb.errLog(n), strings.Join(lines, "\n  "), sb.Name)
}

// readFrom returns the complete lines appended to path since *off.
func readFrom(path string, off *int64) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(*off, io.SeekStart); err != nil {
		return nil
	}
	var lines []string
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return lines // a partial last line is read again next time
		}
		*off += int64(len(line))
		lines = append(lines, strings.TrimRight(line, "\n"))
	}
}

// WaitClusterSize waits until every running data node reports a Primary
// component of exactly size members (data nodes and arbitrators).
// WaitMembers is what the sandbox's own commands use: it counts what
// runs.
func (sb *Sandbox) WaitClusterSize(ctx context.Context, size int) error {
	return sb.waitSettled(ctx, func() expectedMembers {
		m := sb.liveMembers()
		m.size = size
		return m
	})
}

// WaitMembers waits until every running data node reports a Primary
// component of every member that runs: the data nodes and the
// arbitrators (garbd) whose process runs, counted again at each look
// (a paused process is not counted: Galera evicts it). The error says
// what was waited for and what each node saw.
func (sb *Sandbox) WaitMembers(ctx context.Context) error {
	return sb.waitSettled(ctx, sb.liveMembers)
}

func (sb *Sandbox) waitSettled(ctx context.Context, want func() expectedMembers) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, sb.ctl.NodeTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		exp := want()
		seen := make([]componentSeen, 0, len(exp.nodes))
		for _, name := range exp.nodes {
			n, _ := sb.Node(name)
			st, err := sb.wsrepStatus(ctx, n)
			seen = append(seen, componentSeen{Node: name, Size: st["wsrep_cluster_size"], Status: st["wsrep_cluster_status"], Err: err})
		}
		ok, why := settled(exp.size, seen)
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cluster did not reach %s within %s: %s", exp, time.Since(start).Round(time.Second), why)
		case <-tick.C:
		}
	}
}

// expectedMembers is the component the sandbox waits for: its size and
// the running members that make it up.
type expectedMembers struct {
	size        int
	nodes       []string // running data nodes (they are asked)
	arbitrators []string // running arbitrators (counted, not asked)
}

// String says what is waited for: "3 members (data nodes dc1-1, dc2-1;
// arbitrator dc3-garbd)".
func (e expectedMembers) String() string {
	what := []string{"no running data node"}
	if len(e.nodes) > 0 {
		what[0] = plural(len(e.nodes), "data node", "data nodes") + " " + strings.Join(e.nodes, ", ")
	}
	if len(e.arbitrators) > 0 {
		what = append(what, plural(len(e.arbitrators), "arbitrator", "arbitrators")+" "+strings.Join(e.arbitrators, ", "))
	}
	return fmt.Sprintf("a Primary component of %d members (running: %s)", e.size, strings.Join(what, "; "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// liveMembers counts the members whose process runs now: data nodes and
// arbitrators; a paused (SIGSTOPped) process is left out, Galera evicts
// it.
func (sb *Sandbox) liveMembers() expectedMembers {
	var e expectedMembers
	for _, n := range sb.running() {
		if processState(sb.pid(n)) != "T" {
			e.nodes = append(e.nodes, n.Name)
		}
	}
	for _, a := range sb.Arbitrators {
		if pid := sb.arbPidOf(a); pid != 0 && processState(pid) != "T" {
			e.arbitrators = append(e.arbitrators, a.Name)
		}
	}
	e.size = len(e.nodes) + len(e.arbitrators)
	return e
}

// waitEvicted waits until no running data node lists the member about
// to start (name) in its component any more: a data node by its client
// address (addr) in wsrep_incoming_addresses; an arbitrator (addr "")
// has none there, so it is gone once no more address-less members are
// listed than other arbitrators run. A node that does not answer (paused,
// starting) has no say.
func (sb *Sandbox) waitEvicted(ctx context.Context, name, addr string) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, sb.ctl.NodeTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		live := sb.liveMembers()
		others := 0
		for _, a := range live.arbitrators {
			if a != name {
				others++
			}
		}
		var still []string
		for _, nn := range live.nodes {
			n, _ := sb.Node(nn)
			st, err := sb.wsrepStatus(ctx, n)
			if err == nil && lingering(st["wsrep_incoming_addresses"], addr, others) {
				still = append(still, fmt.Sprintf("%s (members %q)", nn, st["wsrep_incoming_addresses"]))
			}
		}
		if len(still) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("its previous run was still a member after %s: %s still list it (Galera evicts a dead member after evs.suspect_timeout; see galeon sandbox status --name %s)",
				time.Since(start).Round(time.Second), strings.Join(still, ", "), sb.Name)
		case <-tick.C:
		}
	}
}

// lingering says whether a node's wsrep_incoming_addresses still lists
// the member about to start: addr itself for a data node; for an
// arbitrator (addr ""), more address-less entries than the arbitrators
// that run besides it.
func lingering(incoming, addr string, otherArbitrators int) bool {
	addrs, unaddressed := galera.IncomingAddresses(incoming)
	if addr != "" {
		return slices.Contains(addrs, addr)
	}
	return unaddressed > otherArbitrators
}

// componentSeen is what one data node reports of its component.
type componentSeen struct {
	Node, Size, Status string
	Err                error
}

// settled says whether every node reports a Primary component of size
// members, and if not, what each node that differs sees. No node to
// ask is settled: there is nothing to wait for.
func settled(size int, seen []componentSeen) (bool, string) {
	var off []string
	for _, s := range seen {
		switch {
		case s.Err != nil:
			off = append(off, fmt.Sprintf("%s does not answer (%v)", s.Node, s.Err))
		case s.Size != strconv.Itoa(size) || s.Status != "Primary":
			status, sz := s.Status, s.Size
			if status == "" {
				status = "no status"
			}
			if sz == "" {
				sz = "?"
			}
			off = append(off, fmt.Sprintf("%s sees %s members, %s", s.Node, sz, status))
		}
	}
	return len(off) == 0, strings.Join(off, "; ")
}

// wsrepStatus reads SHOW GLOBAL STATUS LIKE 'wsrep%' from node n, over TCP
// as the sandbox admin, or over the socket as root before that user exists.
func (sb *Sandbox) wsrepStatus(ctx context.Context, n Node) (map[string]string, error) {
	db, err := sb.DB(n.Name)
	if err != nil {
		return nil, err
	}
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	sample := wsrepview.Fetch(qctx, n.Name, db)
	var me *mysql.MySQLError
	// Before the sandbox accounts exist the server answers 1130 (host not
	// allowed) or 1045 (access denied): ask over the socket.
	if errors.As(sample.Err, &me) && (me.Number == 1045 || me.Number == 1130) {
		return sb.wsrepStatusSocket(qctx, n)
	}
	return sample.Vars, sample.Err
}

func (sb *Sandbox) wsrepStatusSocket(ctx context.Context, n Node) (map[string]string, error) {
	out, err := sb.socketSQL(ctx, n, "SHOW GLOBAL STATUS LIKE 'wsrep%'")
	if err != nil {
		return nil, err
	}
	st := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			st[strings.ToLower(k)] = v
		}
	}
	return st, nil
}

// socketSQL runs SQL as root over the node's unix socket with the mariadb
// client: root authenticates by unix_socket, which needs no password.
func (sb *Sandbox) socketSQL(ctx context.Context, n Node, query string) (string, error) {
	cmd := exec.CommandContext(ctx, "mariadb", "--no-defaults", "--socket="+sb.socket(n), "-uroot", "-N", "-B", "-e", query)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", n.Name, err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// installDB creates the system tables of the first node. The other nodes
// get theirs by state transfer.
func (sb *Sandbox) installDB(ctx context.Context, n Node) error {
	sb.ctl.Progress(n.Name, "creating system tables")
	cmd := exec.CommandContext(ctx, "mariadb-install-db", "--defaults-file="+sb.cnfPath(n),
		"--user=mysql", "--auth-root-authentication-method=socket", "--skip-test-db")
	if out, err := cmd.CombinedOutput(); err != nil {
		// install-db logs to the node's error log (log-error in my.cnf);
		// its own output only says that it failed.
		why := logExcerpt(sb.errLog(n), 8)
		if len(why) == 0 {
			why = strings.Split(strings.TrimSpace(string(out)), "\n")
			why = why[max(0, len(why)-8):]
		}
		return fmt.Errorf("%s: mariadb-install-db failed (%v); from %s:\n  %s\nfix the cause above and retry", n.Name, err, sb.errLog(n), strings.Join(why, "\n  "))
	}
	return nil
}

// createUsers creates the sandbox accounts on the bootstrap node; Galera
// replicates them. OR REPLACE: a cluster started from a backup has the
// source's accounts, with the source's passwords. Accounts exist for '%', 'localhost' and '127.0.0.1'
// and the anonymous accounts are dropped: an anonymous ”@'localhost'
// would otherwise shadow 'app'@'%' for local clients (FIELD-NOTES.md).
func (sb *Sandbox) createUsers(ctx context.Context, n Node) error {
	c := sb.Credentials
	hosts := []string{"%", "localhost", "127.0.0.1"}
	var q strings.Builder
	q.WriteString("DROP USER IF EXISTS ''@'localhost'; ")
	if h, err := os.Hostname(); err == nil {
		fmt.Fprintf(&q, "DROP USER IF EXISTS ''@'%s'; ", h)
	}
	for _, h := range hosts {
		fmt.Fprintf(&q, "CREATE OR REPLACE USER '%s'@'%s' IDENTIFIED BY '%s'; GRANT ALL ON *.* TO '%s'@'%s' WITH GRANT OPTION; ", c.AdminUser, h, c.AdminPassword, c.AdminUser, h)
		fmt.Fprintf(&q, "CREATE OR REPLACE USER '%s'@'%s' IDENTIFIED BY '%s'; GRANT ALL ON `app`.* TO '%s'@'%s'; GRANT ALL ON `sbtest`.* TO '%s'@'%s'; ", c.AppUser, h, c.AppPassword, c.AppUser, h, c.AppUser, h)
		// SHOW GLOBAL STATUS/VARIABLES need no privilege on MariaDB.
		fmt.Fprintf(&q, "CREATE OR REPLACE USER '%s'@'%s' IDENTIFIED BY '%s'; ", c.MonitorUser, h, c.MonitorPassword)
	}
	fmt.Fprintf(&q, "CREATE OR REPLACE USER '%s'@'localhost' IDENTIFIED BY '%s'; GRANT RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR ON *.* TO '%s'@'localhost'; ", c.SSTUser, c.SSTPassword, c.SSTUser)
	if c.ReplUser != "" {
		for _, h := range hosts {
			fmt.Fprintf(&q, "CREATE OR REPLACE USER '%s'@'%s' IDENTIFIED BY '%s'; GRANT REPLICATION SLAVE ON *.* TO '%s'@'%s'; ", c.ReplUser, h, c.ReplPassword, c.ReplUser, h)
		}
	}
	q.WriteString("CREATE DATABASE IF NOT EXISTS app; CREATE DATABASE IF NOT EXISTS sbtest; ")
	// The proxies' commit markers (package outcome), writable by the
	// application account.
	for _, st := range outcome.SetupStatements {
		q.WriteString(st + "; ")
	}
	for _, h := range hosts {
		fmt.Fprintf(&q, "%s; ", outcome.Grant(fmt.Sprintf("'%s'@'%s'", c.AppUser, h)))
	}
	if _, err := sb.socketSQL(ctx, n, q.String()); err != nil {
		return fmt.Errorf("create sandbox users: %w", err)
	}
	sb.ctl.Progress(n.Name, "created users "+c.AdminUser+", "+c.AppUser+", "+c.MonitorUser+" and the commit-marker table "+outcome.Schema+"."+outcome.Table)
	return nil
}

var recoveredRE = regexp.MustCompile(`Recovered position:?\s+([0-9a-f-]{36}):(-?\d+)`)

// Limits of a position recovery (mariadbd --wsrep-recover). It prints the
// position and normally exits within milliseconds; CI saw it twice print
// the position and then not exit for minutes, holding the node's data
// directory. Once the position is known, the process has exitGrace to
// end on its own before it is killed: a recovery-only run writes nothing
// that another crash recovery could not redo.
var (
	recoverTimeout   = 2 * time.Minute
	recoverExitGrace = 10 * time.Second
)

// position returns node n's last committed position. After a crash
// grastate.dat says seqno -1; the real position is then recovered from
// InnoDB with mariadbd --wsrep-recover, as Galera's documentation says.
func (sb *Sandbox) position(ctx context.Context, n Node) (GraState, error) {
	g, err := readGraState(sb.grastate(n))
	if err != nil {
		return g, fmt.Errorf("%s: %w", n.Name, err)
	}
	if g.Seqno >= 0 {
		return g, nil
	}
	sb.ctl.Progress(n.Name, "grastate.dat has seqno -1 (crash): recovering position with --wsrep-recover")
	off := fileSize(sb.errLog(n))
	pid, err := sb.startProcess(n, []string{"--wsrep-recover"}, true)
	if err != nil {
		return g, err
	}
	found, err := sb.followRecovery(ctx, n, pid, off)
	if err != nil {
		return g, err
	}
	if found.Seqno < 0 {
		return g, sb.startFailure(n, "position could not be recovered with --wsrep-recover")
	}
	sb.mu.Lock()
	if sb.recovered == nil {
		sb.recovered = map[string]GraState{}
	}
	sb.recovered[n.Name] = found
	sb.mu.Unlock()
	return found, nil
}

// followRecovery reads the position that the --wsrep-recover process pid
// logs after offset off of n's error log, and returns once that process
// is gone: it ends on its own, or is killed recoverExitGrace after
// printing the position, or recoverTimeout after its start. The position
// has seqno -1 if none was printed.
func (sb *Sandbox) followRecovery(ctx context.Context, n Node, pid int, off int64) (GraState, error) {
	found := GraState{Seqno: -1}
	children.Lock()
	done := children.done[pid]
	children.Unlock()
	if done == nil { // it has already been reaped
		done = make(chan struct{})
		close(done)
	}
	deadline := time.NewTimer(recoverTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var grace <-chan time.Time
	scan := func() {
		for _, line := range readFrom(sb.errLog(n), &off) {
			if m := recoveredRE.FindStringSubmatch(line); m != nil {
				found.UUID = m[1]
				found.Seqno, _ = strconv.ParseInt(m[2], 10, 64)
			}
		}
		if found.Seqno >= 0 && grace == nil {
			grace = time.After(recoverExitGrace)
		}
	}
	kill := func(why string) error {
		select {
		case <-done:
			return nil // reaped meanwhile: its PID may be another process's now
		default:
		}
		sb.ctl.Progress(n.Name, fmt.Sprintf("--wsrep-recover (pid %d) %s: killing it; its threads were waiting in %s", pid, why, threadWaits(pid)))
		_ = syscall.Kill(pid, syscall.SIGKILL)
		select {
		case <-done:
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("%s: the --wsrep-recover process %d %s and survived SIGKILL for 10s", n.Name, pid, why)
		}
	}
	for {
		select {
		case <-done:
			scan()
			return found, nil
		case <-tick.C:
			scan()
		case <-grace:
			return found, kill(fmt.Sprintf("printed position %s:%d but had not exited %s later", found.UUID, found.Seqno, recoverExitGrace))
		case <-deadline.C:
			scan()
			if err := kill(fmt.Sprintf("did not finish within %s", recoverTimeout)); err != nil {
				return found, err
			}
			if found.Seqno >= 0 {
				return found, nil
			}
			return found, fmt.Errorf("%s: --wsrep-recover did not finish within %s", n.Name, recoverTimeout)
		case <-ctx.Done():
			if err := kill("was cancelled"); err != nil {
				return found, err
			}
			return found, fmt.Errorf("%s: --wsrep-recover: %w", n.Name, ctx.Err())
		}
	}
}

// threadWaits summarises where pid's threads wait in the kernel
// (/proc/PID/task/*/wchan, for example "futex_wait_queue x12,
// io_uring_cancel_generic x1"): the clue to why a process did not exit.
func threadWaits(pid int) string {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return "(gone)"
	}
	count := map[string]int{}
	for _, t := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/wchan", pid, t.Name()))
		w := strings.TrimSpace(string(b))
		if w == "" || w == "0" {
			w = "running"
		}
		count[w]++
	}
	names := make([]string, 0, len(count))
	for w := range count {
		names = append(names, w)
	}
	sort.Strings(names)
	for i, w := range names {
		names[i] = fmt.Sprintf("%s x%d", w, count[w])
	}
	return strings.Join(names, ", ")
}

// DSN returns a go-sql-driver DSN for node as user/password.
func (sb *Sandbox) DSN(node, user, password string) (string, error) {
	n, err := sb.Member(node)
	if err != nil {
		return "", err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", n.Addr()
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 2*time.Second, 5*time.Second, 5*time.Second
	return cfg.FormatDSN(), nil
}

// LongAdminDB opens an admin connection pool for node whose statements
// may run for as long as their context allows (no read timeout): schema
// changes and backups, which take minutes. The caller closes it.
func (sb *Sandbox) LongAdminDB(node string) (*sql.DB, error) {
	n, err := sb.Member(node)
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = sb.Credentials.AdminUser, sb.Credentials.AdminPassword, "tcp", n.Addr()
	cfg.Timeout, cfg.WriteTimeout = 2*time.Second, 30*time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// AdminDSN is the DSN of the admin account on node.
func (sb *Sandbox) AdminDSN(node string) (string, error) {
	return sb.DSN(node, sb.Credentials.AdminUser, sb.Credentials.AdminPassword)
}

// AppDSN is the DSN of the application account on node.
func (sb *Sandbox) AppDSN(node string) (string, error) {
	return sb.DSN(node, sb.Credentials.AppUser, sb.Credentials.AppPassword)
}

// DB returns a shared admin connection pool for node.
func (sb *Sandbox) DB(node string) (*sql.DB, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if db := sb.dbs[node]; db != nil {
		return db, nil
	}
	dsn, err := sb.AdminDSN(node)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(30 * time.Second)
	sb.dbs[node] = db
	return db, nil
}

func (sb *Sandbox) closeDB(node string) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if db := sb.dbs[node]; db != nil {
		db.Close()
		delete(sb.dbs, node)
	}
}

func (sb *Sandbox) closeAllDBs() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for k, db := range sb.dbs {
		db.Close()
		delete(sb.dbs, k)
	}
}
