// Package archive keeps a continuous archive of the cluster's binary log
// and replays it for point-in-time recovery.
//
// Galera nodes' binary logs differ (file names, positions, what each node
// wrote locally), so an archive that follows "the writer's binlog" would
// have to splice streams at every writer change. An asynchronous replica
// that follows the writer (package replica) already turns the cluster's
// transactions into one continuous GTID stream without gaps or duplicates
// in its own binary log (log_slave_updates), whose files never change
// name when the writer moves. The archive is a live copy of that binary
// log, streamed by mariadb-binlog (--read-from-remote-server --raw
// --stop-never): what it holds lags the cluster by the replica's lag.
//
// The decisions (where to start streaming, how far behind the archive is,
// what to replay) are pure functions; Streamer and Replay run the tools.
package archive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// File is one binary log file of the archive, or of its source.
type File struct {
	Name string
	Size int64
}

// StartFile decides which of the source's binary logs streaming starts
// from. archived are the archive's files in order, source the files the
// source still has (SHOW BINARY LOGS), in order. Streaming starts again
// with the archive's last file (mariadb-binlog rewrites it whole), or with
// the source's first log for an empty archive. A last file the source no
// longer has (purged, or another source) would leave a gap: an error that
// says so.
func StartFile(archived, source []File) (string, error) {
	if len(source) == 0 {
		return "", errors.New("the source has no binary log (log_bin is off)")
	}
	if len(archived) == 0 {
		return source[0].Name, nil
	}
	last := archived[len(archived)-1].Name
	if !slices.ContainsFunc(source, func(f File) bool { return f.Name == last }) {
		return "", fmt.Errorf("the archive ends with %s, which the source no longer has (it has %s .. %s): streaming from there would leave a gap; start a new archive in an empty directory after a new backup", last, source[0].Name, source[len(source)-1].Name)
	}
	return last, nil
}

// Behind is how many bytes of the source's binary log the archive lacks:
// those of each source file beyond the archive's copy of it (all of a
// file it has not reached). The source's last file's size is its write
// position.
func Behind(archived, source []File) int64 {
	have := map[string]int64{}
	for _, f := range archived {
		have[f.Name] = f.Size
	}
	var behind int64
	for _, f := range source {
		if got := have[f.Name]; got < f.Size {
			behind += f.Size - got
		}
	}
	return behind
}

// Position is a place in a binary log: a file and an offset in it. File
// names are zero-padded sequence numbers, so positions order by name,
// then offset.
type Position struct {
	File   string
	Offset int64
}

// Before says whether p comes before q.
func (p Position) Before(q Position) bool {
	return p.File < q.File || p.File == q.File && p.Offset < q.Offset
}

// Sample is where the source's log was at a time.
type Sample struct {
	At  time.Time
	Pos Position
}

// Remember adds s to samples (oldest first) and drops those older than
// since that the archive (at archive) has gone past, keeping the last of
// them: a sample the archive has not reached is kept however old, so the
// lag of a stuck archive keeps growing.
func Remember(samples []Sample, s Sample, since time.Time, archive Position) []Sample {
	samples = append(samples, s)
	i := 0
	for i < len(samples)-2 && samples[i+1].At.Before(since) && !archive.Before(samples[i+1].Pos) {
		i++
	}
	return samples[i:]
}

// Lag bounds the age of the oldest write the archive lacks: the source
// was within the archive's position at the sample before the first one
// the archive has not reached, so every write it lacks came after that
// sample. 0 when the archive has every sample's position.
func Lag(samples []Sample, archive Position, now time.Time) time.Duration {
	for i, s := range samples {
		if archive.Before(s.Pos) {
			return now.Sub(samples[max(0, i-1)].At)
		}
	}
	return 0
}

// Until is where a replay stops: before the first event at or after Time
// (the binary log's times are whole seconds, UTC here), or after the
// transaction with GTID (inclusive). At most one is set; neither replays
// everything.
type Until struct {
	Time time.Time
	GTID string
}

// ParseUntil reads --until (a UTC time: 2006-01-02 15:04:05 or RFC 3339)
// and --until-gtid (domain-server-seqno).
func ParseUntil(at, gtid string) (Until, error) {
	switch {
	case at != "" && gtid != "":
		return Until{}, errors.New("--until and --until-gtid: give one")
	case gtid != "":
		if !validGTID(gtid) {
			return Until{}, fmt.Errorf("--until-gtid %q: want domain-server-seqno, such as 100-1-4711 (SELECT @@gtid_binlog_pos)", gtid)
		}
		return Until{GTID: gtid}, nil
	case at != "":
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
			if t, err := time.Parse(layout, at); err == nil {
				return Until{Time: t.UTC()}, nil
			}
		}
		return Until{}, fmt.Errorf("--until %q: want a UTC time as 2006-01-02 15:04:05 or RFC 3339 (2006-01-02T15:04:05+02:00)", at)
	}
	return Until{}, nil
}

func validGTID(g string) bool {
	parts := strings.Split(g, "-")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// InDomain keeps, of a GTID position (domain-server-seqno[,...]), the
// GTID of one domain: the archive holds the cluster's domain only, and
// mariadb-binlog fails on a start position naming a domain its files never
// reach. "" when the position has none in that domain: a backup taken
// before the cluster's first transaction in it, which the replay starts at
// the archive's beginning.
func InDomain(pos string, domain uint32) string {
	prefix := strconv.FormatUint(uint64(domain), 10) + "-"
	for _, g := range strings.Split(pos, ",") {
		if g = strings.TrimSpace(g); strings.HasPrefix(g, prefix) {
			return g
		}
	}
	return ""
}

// ReplayArgs are mariadb-binlog's arguments to print, as SQL, the
// archive's transactions of domain after from, the backup's GTID
// position in it (exclusive; "" for all), up to until. The binary log's
// times are read in UTC (the command runs with TZ=UTC). files are the
// archive's files in order.
func ReplayArgs(files []string, from string, domain uint32, until Until) ([]string, error) {
	if len(files) == 0 {
		return nil, errors.New("the archive has no binary log file")
	}
	args := []string{"--do-domain-ids=" + strconv.FormatUint(uint64(domain), 10)}
	if from != "" {
		for _, g := range strings.Split(from, ",") {
			if !validGTID(strings.TrimSpace(g)) {
				return nil, fmt.Errorf("the backup's GTID position %q: want domain-server-seqno[,...]", from)
			}
		}
		args = append(args, "--start-position="+from)
	}
	switch {
	case until.GTID != "":
		args = append(args, "--stop-position="+until.GTID)
	case !until.Time.IsZero():
		args = append(args, "--stop-datetime="+until.Time.UTC().Format("2006-01-02 15:04:05"))
	}
	return append(args, files...), nil
}

// Seqno is the sequence number of a GTID position's entry in domain, and
// whether it has one.
func Seqno(pos string, domain uint32) (uint64, bool) {
	g := InDomain(pos, domain)
	if g == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(g[strings.LastIndexByte(g, '-')+1:], 10, 64)
	return n, err == nil
}

// CheckStart says whether an archive holds every transaction of domain
// after from (the backup's position): begins is the GTID state its first
// file began with (its Gtid_list event), first the first transaction of
// the domain in it ("" if none). It must not begin after from, or the
// transactions between are in neither the backup nor the archive. A state
// without the domain (a replica seeded from a backup begins with an
// empty one) says nothing: then the first transaction must follow from
// at once (a wsrep domain's sequence numbers have no holes).
func CheckStart(begins, first, from string, domain uint32) error {
	f, _ := Seqno(from, domain)
	gap := func(at string) error {
		return fmt.Errorf("the archive begins at %s, after the backup's position %s: the transactions between are in neither; take a new backup (or use an archive that begins earlier)", at, orNone(InDomain(from, domain)))
	}
	if b, ok := Seqno(begins, domain); ok {
		if b > f {
			return gap(InDomain(begins, domain))
		}
		return nil
	}
	if n, ok := Seqno(first, domain); ok && n > f+1 {
		return gap("the transaction before " + first)
	}
	return nil
}

// ClusterDomain is the GTID domain a replay follows: the one --until-gtid
// names, else the one the backup recorded, else the backup position's
// only domain.
func ClusterDomain(from, untilGTID string, recorded *uint32) (uint32, error) {
	domainOf := func(g string) (uint32, bool) {
		d, _, ok := strings.Cut(strings.TrimSpace(g), "-")
		n, err := strconv.ParseUint(d, 10, 32)
		return uint32(n), ok && err == nil
	}
	if untilGTID != "" {
		d, ok := domainOf(untilGTID)
		if !ok {
			return 0, fmt.Errorf("--until-gtid %q: want domain-server-seqno", untilGTID)
		}
		if recorded != nil && *recorded != d {
			return 0, fmt.Errorf("--until-gtid %s is in domain %d, but the cluster's transactions are in domain %d", untilGTID, d, *recorded)
		}
		return d, nil
	}
	if recorded != nil {
		return *recorded, nil
	}
	if parts := strings.Split(from, ","); len(parts) == 1 && from != "" {
		if d, ok := domainOf(parts[0]); ok {
			return d, nil
		}
	}
	return 0, fmt.Errorf("the backup's position %q does not say which GTID domain is the cluster's: give --until-gtid (its domain is the cluster's)", from)
}

func orNone(s string) string {
	if s == "" {
		return "(none in the domain)"
	}
	return s
}

// Event is what a replay learns from one transaction's header in
// mariadb-binlog's output: "#261127  9:44:25 server id 1  end_log_pos 7664
// CRC32 0xb5d1bab6 	GTID 100-1-40 trans" (times in UTC).
type Event struct {
	GTID string
	At   time.Time
}

// ParseEvent reads a GTID event's header line.
func ParseEvent(line string) (Event, bool) {
	if !strings.HasPrefix(line, "#") {
		return Event{}, false
	}
	i := strings.Index(line, "\tGTID ")
	if i < 0 {
		return Event{}, false
	}
	f := strings.Fields(line[i+6:])
	if len(f) == 0 || !validGTID(f[0]) {
		return Event{}, false
	}
	head := strings.Fields(line[1:])
	if len(head) < 2 {
		return Event{}, false
	}
	at, err := time.Parse("060102 15:04:05", head[0]+" "+head[1])
	if err != nil {
		return Event{}, false
	}
	return Event{GTID: f[0], At: at}, true
}

// ParseGTIDList reads the GTID state a binary log file begins with from
// its Gtid_list event's line ("... Gtid list [100-1-36,101-2-3]").
func ParseGTIDList(line string) (string, bool) {
	i := strings.Index(line, "Gtid list [")
	if !strings.HasPrefix(line, "#") || i < 0 {
		return "", false
	}
	rest := line[i+len("Gtid list ["):]
	j := strings.IndexByte(rest, ']')
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// Files lists an archive directory's binary log files in order (the
// names mariadb-binlog gives them: the source's, such as binlog.000001).
// The source's index file is not one.
func Files(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || len(ext) < 2 || strings.Trim(ext[1:], "0123456789") != "" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: name, Size: info.Size()})
	}
	// Sequence numbers are zero-padded: name order is log order.
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
