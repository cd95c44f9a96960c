package archive

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Streamer keeps Dir a live copy of a MariaDB server's binary log: it runs
// mariadb-binlog --read-from-remote-server --raw --stop-never, and starts
// it again (from the archive's last file) whenever it ends.
type Streamer struct {
	// Address is the source's host:port; User and Password an account
	// with REPLICATION SLAVE (and BINLOG MONITOR for SHOW BINARY LOGS).
	Address, User, Password string
	// Dir is the archive directory.
	Dir string
	// ServerID is the id mariadb-binlog registers with as a replica; it
	// must differ from every server's and other archivers'.
	ServerID uint32
	// Log gets what the streamer does and why it restarts.
	Log func(msg string)

	mu        sync.Mutex
	status    Status
	samples   []Sample
	streamErr string // why mariadb-binlog last ended
}

// Status is the archive's state as the streamer last saw it.
type Status struct {
	Dir string `json:"dir"`
	// Files and Bytes the archive holds; LastFile its newest.
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
	LastFile string `json:"last_file,omitempty"`
	// BehindBytes is what the source's binary log has that the archive
	// lacks; Lag how long ago the source's log was where the archive
	// is now (0 when it lacks nothing): the writes an outage of the
	// source would lose, in time.
	BehindBytes int64         `json:"behind_bytes"`
	Lag         time.Duration `json:"lag_ns"`
	// Streaming: mariadb-binlog runs; Error says why not.
	Streaming bool   `json:"streaming"`
	Error     string `json:"error,omitempty"`
}

// Status returns the last status Check made.
func (s *Streamer) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *Streamer) setStatus(f func(*Status)) {
	s.mu.Lock()
	f(&s.status)
	s.mu.Unlock()
}

func (s *Streamer) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(fmt.Sprintf(format, args...))
	}
}

// sourceLogs reads the source's binary logs (SHOW BINARY LOGS: the last
// one's size is its write position).
func sourceLogs(ctx context.Context, db *sql.DB) ([]File, error) {
	rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []File
	for rows.Next() {
		var f File
		dest := []any{&f.Name, &f.Size}
		for len(dest) < len(cols) {
			dest = append(dest, new(sql.RawBytes))
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// Check compares the archive with the source's binary log and records the
// result in Status.
func (s *Streamer) Check(ctx context.Context, db *sql.DB) Status {
	files, ferr := Files(s.Dir)
	source, serr := sourceLogs(ctx, db)
	now := time.Now()
	s.setStatus(func(st *Status) {
		st.Dir, st.Files, st.Bytes, st.LastFile, st.Error = s.Dir, len(files), 0, "", s.streamErr
		for _, f := range files {
			st.Bytes += f.Size
		}
		if len(files) > 0 {
			st.LastFile = files[len(files)-1].Name
		}
		if ferr != nil || serr != nil {
			// Unknown, not stale: the last figures would look current.
			st.Error = strings.TrimPrefix(st.Error+"; "+errors.Join(ferr, serr).Error(), "; ")
			st.BehindBytes, st.Lag = -1, 0
			return
		}
		st.BehindBytes = Behind(files, source)
		var at Position
		if len(files) > 0 {
			at = Position{files[len(files)-1].Name, files[len(files)-1].Size}
		}
		if len(source) > 0 {
			last := source[len(source)-1]
			s.samples = Remember(s.samples, Sample{At: now, Pos: Position{last.Name, last.Size}}, now.Add(-maxLagKept), at)
		}
		st.Lag = Lag(s.samples, at, now)
	})
	return s.Status()
}

// maxLagKept bounds the source positions remembered to measure the lag.
const maxLagKept = 15 * time.Minute

// Run streams until ctx ends, checking the archive every interval.
func (s *Streamer) Run(ctx context.Context, interval time.Duration) (err error) {
	defer func() {
		if err != nil {
			s.setStatus(func(st *Status) { st.Dir, st.Streaming, st.Error = s.Dir, false, err.Error() })
		}
	}()
	if err := os.MkdirAll(s.Dir, 0o750); err != nil {
		return err
	}
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr = s.User, s.Password, "tcp", s.Address
	mc.Timeout, mc.ReadTimeout = 2*time.Second, 10*time.Second
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	db.SetMaxOpenConns(1)
	// The password reaches mariadb-binlog in an option file only this
	// user reads, never on its command line.
	cnf, err := optionFile("galeon-archive-*.cnf", s.Address, s.User, s.Password)
	if err != nil {
		return err
	}
	defer os.Remove(cnf)

	checks := make(chan struct{})
	defer func() { <-checks }()
	go func() {
		defer close(checks)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			cctx, cancel := context.WithTimeout(ctx, interval+2*time.Second)
			s.Check(cctx, db)
			cancel()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()

	backoff := time.Second
	for ctx.Err() == nil {
		began := time.Now()
		err := s.streamOnce(ctx, db, cnf)
		why := "mariadb-binlog ended"
		if err != nil {
			why = err.Error()
		}
		s.setStatus(func(st *Status) { st.Streaming, s.streamErr, st.Error = false, why, why })
		if ctx.Err() != nil {
			return nil
		}
		s.logf("archive: mariadb-binlog ended (%v); starting again in %s", err, backoff)
		if time.Since(began) > time.Minute {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
	return nil
}

// streamOnce runs mariadb-binlog until it ends or ctx does.
func (s *Streamer) streamOnce(ctx context.Context, db *sql.DB, cnf string) error {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	source, err := sourceLogs(qctx, db)
	cancel()
	if err != nil {
		return fmt.Errorf("reading the source's binary logs: %w", err)
	}
	archived, err := Files(s.Dir)
	if err != nil {
		return err
	}
	first, err := StartFile(archived, source)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "mariadb-binlog", "--defaults-extra-file="+cnf,
		"--read-from-remote-server", "--raw", "--stop-never",
		fmt.Sprintf("--stop-never-slave-server-id=%d", s.ServerID),
		"--result-file="+s.Dir+string(filepath.Separator), first)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	s.logf("archive: streaming %s's binary log from %s into %s", s.Address, first, s.Dir)
	s.setStatus(func(st *Status) { st.Streaming, st.Error, s.streamErr = true, "", "" })
	err = cmd.Wait()
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		err = fmt.Errorf("%v: %s", err, msg)
	}
	return err
}

// Target is the server a replay applies the archive to.
type Target struct {
	Address, User, Password string
}

// Replayed is what a replay applied: how many transactions, the first
// and last GTID, and the last one's time (UTC, whole seconds).
type Replayed struct {
	Transactions int
	First, Last  string
	LastAt       time.Time
	// Note is what the operator should know about the result.
	Note string
}

// Replay applies the archive in dir to target: the transactions of the
// cluster's GTID domain after from (the backup's position) up to until,
// printed by mariadb-binlog and run by the mariadb client, which stops at
// the first error. An archive that begins after from is refused (a gap).
func Replay(ctx context.Context, dir, from string, domain uint32, until Until, target Target) (Replayed, error) {
	var done Replayed
	files, err := Files(dir)
	if err != nil {
		return done, err
	}
	if len(files) == 0 {
		return done, fmt.Errorf("%s holds no binary log file", dir)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Join(dir, f.Name)
	}
	begins, first, err := archiveStart(ctx, names, domain)
	if err != nil {
		return done, err
	}
	if err := CheckStart(begins, first, from, domain); err != nil {
		return done, err
	}
	from = InDomain(from, domain)
	if until.GTID != "" {
		u, _ := Seqno(until.GTID, domain)
		if f, _ := Seqno(from, domain); u <= f {
			return done, fmt.Errorf("--until-gtid %s is not after the backup's position %s: the backup alone is that state (restore without --archive)", until.GTID, from)
		}
	}
	args, err := ReplayArgs(names, from, domain, until)
	if err != nil {
		return done, err
	}
	cnf, err := optionFile("galeon-replay-*.cnf", target.Address, target.User, target.Password)
	if err != nil {
		return done, err
	}
	defer os.Remove(cnf)
	pctx, stopPrint := context.WithCancel(ctx)
	defer stopPrint()
	print := exec.CommandContext(pctx, "mariadb-binlog", args...)
	print.Env = append(os.Environ(), "TZ=UTC")
	apply := exec.CommandContext(ctx, "mariadb", "--defaults-extra-file="+cnf, "--binary-mode")
	out, err := print.StdoutPipe()
	if err != nil {
		return done, err
	}
	in, err := apply.StdinPipe()
	if err != nil {
		return done, err
	}
	var perr, aerr bytes.Buffer
	print.Stderr, apply.Stderr, apply.Stdout = &perr, &aerr, io.Discard
	if err := apply.Start(); err != nil {
		return done, err
	}
	if err := print.Start(); err != nil {
		in.Close()
		_ = apply.Wait()
		return done, err
	}
	// Every line goes to the client; GTID headers are counted on the way.
	// A transaction is counted when the next one begins (or the stream
	// ends): written whole to the client by then.
	r := bufio.NewReaderSize(out, 1<<16)
	var werr error
	var pending *Event
	for werr == nil {
		line, rerr := r.ReadString('\n')
		if ev, ok := ParseEvent(line); ok {
			if pending != nil {
				done.count(*pending)
			}
			pending = &ev
		}
		if line != "" {
			_, werr = io.WriteString(in, line)
		}
		if rerr != nil {
			break
		}
	}
	in.Close()
	if werr != nil {
		stopPrint() // the client stopped: reading on would count what it never ran
	}
	aw := apply.Wait()
	pw := print.Wait()
	// A failed apply ends the printer with a broken pipe: its own error
	// says more. Then the last transaction printed may not have run.
	if aw != nil || werr != nil {
		return done, fmt.Errorf("applying the archive stopped (%v): %s; transactions before %s were applied", errors.Join(aw, werr), strings.TrimSpace(aerr.String()), orNone(pendingGTID(pending)))
	}
	if pending != nil {
		done.count(*pending)
	}
	if pw != nil {
		return done, fmt.Errorf("mariadb-binlog: %v: %s (replayed up to %s)", pw, strings.TrimSpace(perr.String()), orNone(done.Last))
	}
	// mariadb-binlog only warns when the files end before the stop
	// position: the cluster would silently lack what came after.
	if until.GTID != "" && done.Last != until.GTID {
		return done, fmt.Errorf("the archive ends at %s, before --until-gtid %s: the new cluster holds the backup and the archive up to there, not what came after (was the archive current? galeon status shows its lag)", orNone(done.Last), until.GTID)
	}
	if !until.Time.IsZero() {
		if fi, err := os.Stat(names[len(names)-1]); err == nil && fi.ModTime().Before(until.Time) {
			done.Note = fmt.Sprintf("the archive was last written at %s UTC, before --until %s: whatever the cluster committed between (nothing, if it was idle) is not in it", fi.ModTime().UTC().Format("2006-01-02 15:04:05"), until.Time.Format("2006-01-02 15:04:05"))
		}
	}
	return done, nil
}

func (d *Replayed) count(ev Event) {
	if d.First == "" {
		d.First = ev.GTID
	}
	d.Transactions++
	d.Last, d.LastAt = ev.GTID, ev.At
}

func pendingGTID(e *Event) string {
	if e == nil {
		return ""
	}
	return e.GTID
}

// archiveStart reads how the archive begins: the GTID state of its first
// file's Gtid_list event, and its first transaction in domain ("" if it
// has none yet), reading as many files as it takes.
func archiveStart(ctx context.Context, files []string, domain uint32) (list, first string, err error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(cctx, "mariadb-binlog", append([]string{"--do-domain-ids=" + strconv.FormatUint(uint64(domain), 10)}, files...)...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", "", err
	}
	if err := cmd.Start(); err != nil {
		return "", "", err
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	seen := false
	for sc.Scan() {
		if l, ok := ParseGTIDList(sc.Text()); ok && !seen {
			list, seen = l, true
		}
		if ev, ok := ParseEvent(sc.Text()); ok && InDomain(ev.GTID, domain) != "" {
			return list, ev.GTID, nil
		}
	}
	if !seen {
		return "", "", fmt.Errorf("%s: no Gtid_list event at its beginning: not a MariaDB binary log?", files[0])
	}
	return list, "", nil
}

// optionFile writes a [client] option file only this user reads, so that
// a password never shows on a command line.
func optionFile(pattern, address, user, password string) (string, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return "", fmt.Errorf("%q: %w", address, err)
	}
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	_, werr := fmt.Fprintf(f, "[client]\nuser=%s\npassword=%s\nhost=%s\nport=%s\nprotocol=tcp\n", optionValue(user), optionValue(password), host, port)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return "", errors.Join(werr, cerr)
	}
	return f.Name(), nil
}

// optionValue quotes a value for a MariaDB option file, where an unquoted
// '#' starts a comment and quotes and backslashes are read as escapes.
func optionValue(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}
