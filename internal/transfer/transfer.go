// Package transfer follows a joining node's state transfer — a full copy
// (SST) or write-sets from a donor's gcache (IST) — so that operators see
// how far it got and how long it will take, instead of a node that sits in
// "Joining" for an unknown time.
//
// Galera reports neither. An agent beside the joiner observes it (an
// Observer): an SST by the files arriving in the data directory while the
// SST script's marker exists, an IST by wsrep_last_committed climbing
// while the node is Joining. Estimate then sets that against the rest of
// the cluster as the agents report it: the donor's data size for an SST,
// the cluster's last committed seqno for an IST.
package transfer

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// notCopied are data-directory files an SST does not carry (or that are
// rewritten locally): left out of sizes on both sides, with the gcache's
// overflow pages (gcache.page.NNNNNN, as large as big write-sets).
var notCopied = map[string]bool{
	"galera.cache": true, "ibtmp1": true, "grastate.dat": true, "gvwstate.dat": true,
	"sst_in_progress": true, "mariadb.pid": true, "mysqld.pid": true,
}

// sstMarkers exist in a joiner's data directory while an SST script
// runs: rsync's progress file, mariabackup's receiving directory.
var sstMarkers = []string{"sst_in_progress", ".sst"}

// Observer watches one node's state transfers. It is not safe for
// concurrent use; an agent calls it from its check loop.
type Observer struct {
	// DataDir is the node's data directory ("" observes IST only).
	DataDir string

	cur      *discovery.Transfer
	sstSince time.Time // when the current SST began (its marker's time)
	lastDone int64
	lastAt   time.Time
	sizedAt  time.Time
	size     int64
}

// Observe updates f with the node's data size and current transfer, from
// the wsrep facts already in f and the data directory, at now.
func (o *Observer) Observe(f *discovery.NodeFacts, now time.Time) {
	sstStart, sst := o.sstStarted()
	if o.DataDir != "" && !sst && (now.Sub(o.sizedAt) >= time.Second || o.sizedAt.IsZero()) {
		// What an SST from this node would copy; walked at most once a
		// second: data directories can hold thousands of files.
		o.size, o.sizedAt = dirSize(o.DataDir), now
	}
	f.DataBytes = o.size
	switch {
	case sst:
		if o.cur == nil || o.cur.Kind != "SST" {
			// The marker's time, taken once: mariabackup's .sst
			// directory changes with every file it receives.
			o.start("SST", now, 0)
			o.sstSince = sstStart
		}
		o.progress(received(o.DataDir, o.sstSince), now)
	case f.Up && f.LocalState == 1: // Joining: receiving write-sets
		if o.cur == nil || o.cur.Kind != "IST" {
			from := f.LastCommitted
			if f.Grastate.Seqno >= 0 && f.Grastate.Seqno < from {
				from = f.Grastate.Seqno
			}
			o.start("IST", now, from)
		}
		o.progress(f.LastCommitted-o.cur.From, now)
	default:
		o.cur = nil
	}
	if o.cur != nil {
		t := *o.cur
		f.Transfer = &t
	}
}

func (o *Observer) start(kind string, now time.Time, from int64) {
	o.cur = &discovery.Transfer{Kind: kind, Since: now.UTC(), From: from}
	o.lastDone, o.lastAt = 0, now
}

// progress records done at now; the rate is smoothed over samples at
// least half a second apart, so a burst does not swing the ETA.
func (o *Observer) progress(done int64, now time.Time) {
	if done < 0 {
		done = 0
	}
	o.cur.Done = done
	if dt := now.Sub(o.lastAt).Seconds(); dt >= 0.5 {
		r := float64(done-o.lastDone) / dt
		if r < 0 {
			r = 0
		}
		if o.cur.Rate == 0 {
			o.cur.Rate = r
		} else {
			o.cur.Rate = 0.5*o.cur.Rate + 0.5*r
		}
		o.lastDone, o.lastAt = done, now
	}
}

// sstStarted reports whether an SST script runs for the node (one of its
// markers exists) and since when: the marker's own modification time.
func (o *Observer) sstStarted() (time.Time, bool) {
	if o.DataDir == "" {
		return time.Time{}, false
	}
	var since time.Time
	found := false
	for _, m := range sstMarkers {
		if info, err := os.Lstat(filepath.Join(o.DataDir, m)); err == nil {
			if !found || info.ModTime().Before(since) {
				since = info.ModTime()
			}
			found = true
		}
	}
	return since, found
}

// walk calls fn for every regular file an SST copies.
func walk(dir string, fn func(path string, info fs.FileInfo)) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || notCopied[d.Name()] || strings.HasPrefix(d.Name(), "gcache.page.") {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			fn(path, info)
		}
		return nil
	})
}

func dirSize(dir string) int64 {
	var n int64
	walk(dir, func(_ string, info fs.FileInfo) { n += info.Size() })
	return n
}

// received is the size of the files the transfer has written since it
// began: their inode changed (ctime) after since. rsync's SST writes in
// place (--inplace) over the joiner's own files, so names, inodes and
// sizes can all stay the same; only the change time tells. A file being
// written counts whole: progress moves file by file.
func received(dir string, since time.Time) int64 {
	var n int64
	walk(dir, func(_ string, info fs.FileInfo) {
		if !changed(info).Before(since) {
			n += info.Size()
		}
	})
	return n
}

// Progress is a transfer set against the rest of the cluster.
type Progress struct {
	Node string
	discovery.Transfer
	// Total is what the transfer has to carry in all (bytes or
	// write-sets), 0 when no agent reports it; Percent is Done/Total
	// (at most 99 until the node is past it), -1 unknown.
	Total   int64
	Percent float64
	// ETA is the time left at the current rate, -1 unknown.
	ETA time.Duration
	// Donor is the node serving it, when one reports the Donor state.
	Donor string
}

// Estimate returns the transfers in progress among nodes, each with its
// total and ETA: for an SST the donor's data size (or, with no node in
// the Donor state, the largest Synced node's), for an IST the highest
// seqno a Primary node has committed. It is a pure function of what the
// agents report.
func Estimate(nodes []discovery.NodeFacts) []Progress {
	var donor string
	var donorBytes, syncedBytes, head int64
	for _, n := range nodes {
		if n.Up && n.LocalState == 2 && n.Transfer == nil {
			donor, donorBytes = n.Name, n.DataBytes
		}
		if n.Synced {
			syncedBytes = max(syncedBytes, n.DataBytes)
		}
		if n.Up && n.ClusterStatus == "Primary" && n.Transfer == nil {
			head = max(head, n.LastCommitted)
		}
	}
	var out []Progress
	for _, n := range nodes {
		if n.Transfer == nil {
			continue
		}
		p := Progress{Node: n.Name, Transfer: *n.Transfer, Percent: -1, ETA: -1, Donor: donor}
		switch p.Kind {
		case "SST":
			p.Total = donorBytes
			if p.Total == 0 {
				p.Total = syncedBytes
			}
		case "IST":
			p.Total = head - p.From
		}
		if p.Total > 0 {
			p.Percent = min(99, 100*float64(p.Done)/float64(p.Total))
			if p.Rate > 0 {
				p.ETA = time.Duration(float64(max(p.Total-p.Done, 0)) / p.Rate * float64(time.Second)).Round(time.Second)
			}
		}
		out = append(out, p)
	}
	return out
}

// String says it for an operator: "SST from node2: 45% (120.3 of 260.1
// MB, 35.2 MB/s, ETA 4s)".
func (p Progress) String() string {
	unit, scale, prec := "write-sets", 1.0, 0
	if p.Kind == "SST" {
		unit, scale, prec = "MB", 1<<20, 1
	}
	s := p.Kind
	if p.Donor != "" && p.Kind == "SST" {
		s += " from " + p.Donor
	}
	amount := strconv.FormatFloat(float64(p.Done)/scale, 'f', prec, 64)
	if p.Total > 0 {
		s += fmt.Sprintf(": %.0f%% (", p.Percent)
		amount += " of " + strconv.FormatFloat(float64(p.Total)/scale, 'f', prec, 64)
	} else {
		s += ": ("
	}
	s += amount + " " + unit + ", " + strconv.FormatFloat(p.Rate/scale, 'f', prec, 64) + " " + unit + "/s"
	if p.ETA >= 0 {
		s += ", ETA " + p.ETA.String()
	}
	return s + ")"
}
