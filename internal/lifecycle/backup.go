package lifecycle

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/sharedconfig"
)

// BackupSource says how mariabackup, run on this machine, reaches one
// node's server and files.
type BackupSource struct {
	// Args are mariabackup's connection and file arguments for the node
	// (--defaults-file=… first, --socket=…, --user=…); DataDir its data
	// directory, whose size gives the copy's progress.
	Args    []string
	DataDir string
}

// Backup takes a full physical backup (mariabackup) of a cluster at no
// cost to clients: from a node that is Synced and not the writer, drained
// through every proxy and desynchronised while it copies (so that flow
// control does not stall the writer), then resynchronised and given
// traffic again; the copy is prepared and checked, and the position it
// holds recorded. The operation is recorded in etcd, one at a time.
type Backup struct {
	Store *discovery.Store
	DB    NodeDB
	// Copier makes the copy where the node's files are: LocalCopier on
	// this machine (a sandbox), AgentCopier through the node's agent.
	Copier   Copier
	By       string
	Progress func(node, msg string)
	// DrainTimeout bounds the wait for the node's in-flight work (10s);
	// SyncTimeout the wait for it to catch up after the copy (30m).
	DrainTimeout, SyncTimeout time.Duration
}

// BackupInfo is what a backup holds, written beside it as
// galeon-backup.json.
type BackupInfo struct {
	Node string `json:"node"`
	// UUID and Seqno are the cluster's state the copy holds (Galera's
	// position: wsrep_local_state_uuid and the last committed seqno);
	// GTID the MariaDB GTID position when the binary log is on.
	UUID  string `json:"uuid"`
	Seqno int64  `json:"seqno"`
	GTID  string `json:"gtid,omitempty"`
	// Domain is the cluster's GTID domain (wsrep_gtid_domain_id, as the
	// node's agent published it), which a binary log archive replays.
	Domain         *uint32   `json:"gtid_domain,omitempty"`
	Bytes          int64     `json:"bytes"`
	Started        time.Time `json:"started"`
	CopySeconds    float64   `json:"copy_seconds"`
	PrepareSeconds float64   `json:"prepare_seconds"`
}

// BackupInfoFile is the name of the file describing a backup.
const BackupInfoFile = "galeon-backup.json"

// ChooseBackupNode picks the node to copy: Synced, not the writer, not
// drained by an operator (the backup would end the drain), the most
// advanced (then by name). A donor or joiner is not Synced.
func ChooseBackupNode(nodes []discovery.NodeFacts, writer string, drained []string) (string, error) {
	var cands []discovery.NodeFacts
	for _, n := range nodes {
		if n.Synced && n.Name != writer && !slices.Contains(drained, n.Name) {
			cands = append(cands, n)
		}
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("no Synced node other than the writer (%s) that an operator has not drained (%s): a backup never desyncs the writer; wait for a node to be Synced, undrain one, or add one", orNone(writer), orNone(strings.Join(drained, ", ")))
	}
	slices.SortFunc(cands, func(a, b discovery.NodeFacts) int {
		if a.LastCommitted != b.LastCommitted {
			return int(b.LastCommitted - a.LastCommitted)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return cands[0].Name, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Run takes a backup into a new directory under dir and returns its path
// and what it holds.
func (b Backup) Run(ctx context.Context, dir string) (string, BackupInfo, error) {
	opDefaults(&b.DrainTimeout, &b.SyncTimeout, &b.Progress)
	var info BackupInfo
	if err := healthy(ctx, b.Store); err != nil {
		return "", info, err
	}
	nodes, err := b.Store.Nodes(ctx)
	if err != nil {
		return "", info, err
	}
	u, err := b.Store.ReadDecision(ctx)
	if err != nil {
		return "", info, err
	}
	drained, err := sharedconfig.Drained(ctx, b.Store)
	if err != nil {
		return "", info, err
	}
	if info.Node, err = ChooseBackupNode(nodes, u.Decision.Writer, drained); err != nil {
		return "", info, err
	}
	info.Started = time.Now().UTC()
	for _, n := range nodes {
		if n.Name == info.Node && n.GTIDDomain != nil {
			d := *n.GTIDDomain
			info.Domain = &d
		}
	}
	final := filepath.Join(dir, info.Started.Format("20060102T150405Z")+"-"+info.Node)
	work := final + ".partial"
	op := discovery.Operation{ID: fmt.Sprintf("backup-%d", time.Now().UnixMilli()), Kind: discovery.OperationBackup, By: b.By,
		Statement: "mariabackup of " + info.Node + " into " + final, Order: []string{info.Node}, Started: info.Started, Updated: time.Now()}
	if _, err := b.Store.BeginOperation(ctx, op); err != nil {
		return "", info, fmt.Errorf("%w: one operation at a time", err)
	}
	rec := &opRecord{op: op, store: b.Store}
	hctx, stopBeat := context.WithCancel(ctx)
	defer stopBeat()
	go rec.heartbeat(hctx)
	step := func(s string) {
		rec.set(ctx, func(op *discovery.Operation) { op.Current, op.Step, op.Detail = info.Node, s, "" })
	}
	// fail ends the operation once the node is back in the cluster; a
	// node left drained or desynchronised keeps it recorded, stopped, so
	// that status, the proxies and the dashboard show what to put right.
	fail := func(err error, nodeBack bool) (string, BackupInfo, error) {
		stopBeat()
		rec.set(ctx, func(op *discovery.Operation) { op.Failed, op.Step = err.Error(), "stopped" })
		if nodeBack {
			_ = b.Store.EndOperation(context.WithoutCancel(ctx), op.ID)
		}
		return "", info, err
	}
	step("draining")
	if err := drain(ctx, b.Store, info.Node, "backup", b.DrainTimeout, b.Progress); err != nil {
		return fail(err, false)
	}
	db, err := b.DB(ctx, info.Node)
	if err != nil {
		return fail(fmt.Errorf("%w (it stays drained: galeon proxy drain %s --undo)", err, info.Node), false)
	}
	// Desynchronised, the node's apply queue may grow while mariabackup
	// holds its locks without flow control stalling the writer.
	if _, err := db.ExecContext(ctx, "SET GLOBAL wsrep_desync = ON"); err != nil {
		return fail(fmt.Errorf("desync %s: %w (it stays drained: galeon proxy drain %s --undo)", info.Node, err, info.Node), false)
	}
	b.Progress(info.Node, "drained and desynchronised: flow control no longer waits for it; copying")
	step("copying")
	copyStart := time.Now()
	copyErr := b.Copier.Copy(ctx, info.Node, work, func(msg string) {
		b.Progress(info.Node, msg)
		rec.set(ctx, func(op *discovery.Operation) { op.Detail = msg })
	})
	info.CopySeconds = time.Since(copyStart).Seconds()
	if copyErr != nil && !errors.Is(copyErr, ErrNotOurs) {
		b.Copier.Discard(context.WithoutCancel(ctx), info.Node, work)
	}
	// Back in the cluster whatever the copy did, even if galeon is being
	// stopped (bounded).
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.SyncTimeout)
	defer cancel()
	withCopy := func(err error) error {
		if copyErr != nil {
			return fmt.Errorf("copy: %v; then %w", copyErr, err)
		}
		return err
	}
	if _, err := db.ExecContext(bctx, "SET GLOBAL wsrep_desync = OFF"); err != nil {
		return fail(withCopy(fmt.Errorf("resync %s: %w (it stays drained and desynchronised: SET GLOBAL wsrep_desync = OFF on it, then galeon proxy drain %s --undo)", info.Node, err, info.Node)), false)
	}
	step("catching up")
	b.Progress(info.Node, "resynchronised; catching up")
	if err := waitSyncedOn(bctx, db, b.Store, info.Node, b.SyncTimeout); err != nil {
		return fail(withCopy(fmt.Errorf("%s did not come back Synced: %w (it stays drained: galeon proxy drain %s --undo once it is)", info.Node, err, info.Node)), false)
	}
	if err := sharedconfig.SetDrained(bctx, b.Store, info.Node, false, "backup"); err != nil {
		return fail(withCopy(fmt.Errorf("undrain %s: %w (galeon proxy drain %s --undo)", info.Node, err, info.Node)), false)
	}
	b.Progress(info.Node, "Synced; taking traffic again")
	if copyErr != nil {
		return fail(fmt.Errorf("copy: %w (nothing kept)", copyErr), true)
	}
	if ctx.Err() != nil {
		b.Copier.Discard(context.WithoutCancel(ctx), info.Node, work)
		return fail(fmt.Errorf("interrupted after the copy: %w (nothing kept; the node is back)", ctx.Err()), true)
	}
	step("preparing")
	b.Progress(info.Node, "preparing the copy (applying its redo log)")
	if info, err = b.Copier.Finish(ctx, info.Node, work, final, info); err != nil {
		return fail(err, true)
	}
	stopBeat()
	rec.set(ctx, func(op *discovery.Operation) { op.Done = []string{info.Node} })
	return final, info, b.Store.EndOperation(context.WithoutCancel(ctx), op.ID)
}

// Copier makes a backup's copy where the node's files are.
type Copier interface {
	// Copy copies node's data into the new directory work
	// (mariabackup --backup --galera-info), reporting its progress.
	Copy(ctx context.Context, node, work string, progress func(msg string)) error
	// Finish prepares the copy in work (mariabackup --prepare), checks
	// it, fills in what it holds (position, size, prepare time), writes
	// that beside it (galeon-backup.json) and renames work to final.
	Finish(ctx context.Context, node, work, final string, info BackupInfo) (BackupInfo, error)
	// Discard removes a copy that is not kept.
	Discard(ctx context.Context, node, work string)
}

// ErrNotOurs: a backup's work directory exists already; it is not this
// backup's, and is neither written to nor removed.
var ErrNotOurs = errors.New("exists already: it is not this backup's, and is left alone")

// LocalCopier runs mariabackup on this machine, beside the node (a
// sandbox's, or the agent's own node).
type LocalCopier struct {
	// Source says how to reach a node's server and files.
	Source func(node string) (BackupSource, error)
}

// Copy implements Copier: mariabackup --backup, its progress against the
// node's data size every 2 s.
func (c LocalCopier) Copy(ctx context.Context, node, work string, progress func(msg string)) error {
	src, err := c.Source(node)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(work), 0o700); err != nil {
		return err
	}
	// Made here, empty, or not at all: a directory that exists already
	// is not this copy's, and is never written to nor removed.
	if err := os.Mkdir(work, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", work, ErrNotOurs)
		}
		return err
	}
	total := dirSize(src.DataDir)
	// --defaults-file must come first.
	args := append(slices.Clone(src.Args), "--backup", "--galera-info", "--target-dir="+work)
	cmd := exec.CommandContext(ctx, mariabackup(), args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("mariabackup --backup: %v: %s", err, lastLines(out.String(), 5))
			}
			progress(fmt.Sprintf("copied %s in %s", humanBytes(dirSize(work)), time.Since(start).Round(100*time.Millisecond)))
			return nil
		case <-t.C:
			n := dirSize(work)
			msg := "copied " + humanBytes(n)
			if total > 0 && n > 0 {
				pct := min(99.0, 100*float64(n)/float64(total))
				eta := time.Duration(float64(time.Since(start)) * (100 - pct) / pct)
				msg = fmt.Sprintf("copied %s of about %s (%.0f%%, about %s to go)", humanBytes(n), humanBytes(total), pct, eta.Round(time.Second))
			}
			progress(msg)
		}
	}
}

// Finish implements Copier.
func (LocalCopier) Finish(ctx context.Context, _ string, work, final string, info BackupInfo) (BackupInfo, error) {
	prepStart := time.Now()
	if out, err := exec.CommandContext(ctx, mariabackup(), "--prepare", "--target-dir="+work).CombinedOutput(); err != nil {
		return info, fmt.Errorf("mariabackup --prepare: %v: %s (the copy is kept in %s)", err, lastLines(string(out), 5), work)
	}
	info.PrepareSeconds = time.Since(prepStart).Seconds()
	if err := readPosition(work, &info); err != nil {
		return info, fmt.Errorf("checking the copy: %w (kept in %s)", err, work)
	}
	info.Bytes = dirSize(work)
	raw, _ := json.MarshalIndent(info, "", "  ")
	if err := os.WriteFile(filepath.Join(work, BackupInfoFile), append(raw, '\n'), 0o600); err != nil {
		return info, err
	}
	return info, os.Rename(work, final)
}

// Discard implements Copier.
func (LocalCopier) Discard(_ context.Context, _, work string) { _ = os.RemoveAll(work) }

// readPosition reads the prepared copy's Galera position (and GTID) and
// checks that it was prepared.
func readPosition(dir string, info *BackupInfo) error {
	cp, err := readFirst(dir, "mariadb_backup_checkpoints", "xtrabackup_checkpoints")
	if err != nil {
		return err
	}
	// full-prepared before MariaDB 10.5, log-applied since.
	if !strings.Contains(cp, "backup_type = full-prepared") && !strings.Contains(cp, "backup_type = log-applied") {
		return fmt.Errorf("the copy is not prepared: %s", strings.TrimSpace(cp))
	}
	gi, err := readFirst(dir, "mariadb_backup_galera_info", "xtrabackup_galera_info")
	if err != nil {
		return fmt.Errorf("no Galera position in the copy (mariabackup --galera-info): %w", err)
	}
	fields := strings.Fields(gi)
	if len(fields) == 0 {
		return errors.New("empty Galera position in the copy")
	}
	uuid, seqno, ok := strings.Cut(fields[0], ":")
	if !ok {
		return fmt.Errorf("the copy's Galera position %q: want uuid:seqno", fields[0])
	}
	if info.Seqno, err = strconv.ParseInt(seqno, 10, 64); err != nil || len(uuid) != 36 {
		return fmt.Errorf("the copy's Galera position %q: want uuid:seqno", fields[0])
	}
	info.UUID = uuid
	if len(fields) > 1 && strings.Count(fields[1], "-") == 2 {
		info.GTID = fields[1] // domain-server-seqno, with wsrep_gtid_mode
	}
	if bi, err := readFirst(dir, "mariadb_backup_binlog_info", "xtrabackup_binlog_info"); err == nil {
		if f := strings.Fields(bi); len(f) >= 3 {
			info.GTID = f[2]
		}
	}
	return nil
}

func readFirst(dir string, names ...string) (string, error) {
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err == nil {
			return string(b), nil
		}
	}
	return "", fmt.Errorf("none of %s in %s", strings.Join(names, ", "), dir)
}

// PositionOf reads the position a prepared mariabackup copy holds (made
// by galeon or by hand with --galera-info): its Galera UUID and seqno and
// its GTID position.
func PositionOf(dir string) (BackupInfo, error) {
	var info BackupInfo
	err := readPosition(dir, &info)
	return info, err
}

// ReadBackupInfo reads a backup's galeon-backup.json.
func ReadBackupInfo(dir string) (BackupInfo, error) {
	var info BackupInfo
	raw, err := os.ReadFile(filepath.Join(dir, BackupInfoFile))
	if err != nil {
		return info, fmt.Errorf("%s is not a galeon backup (no %s): %w", dir, BackupInfoFile, err)
	}
	return info, json.Unmarshal(raw, &info)
}

func mariabackup() string {
	if p, err := exec.LookPath("mariadb-backup"); err == nil {
		return p
	}
	return "mariabackup"
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

func lastLines(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
