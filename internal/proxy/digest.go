package proxy

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/sqlclass"
)

// digestStats aggregates statements by normalised text, hostgroup and
// user, like ProxySQL's stats_mysql_query_digest. Each statement is
// normalised afresh into its session's scratch buffer (a few hundred ns,
// no allocation): a cache by raw text missed on nearly every statement
// of an application that inlines its values, and its lookups cost more
// than they saved (profiled: the largest user-space item of the proxy).
type digestStats struct {
	// entries are read on every statement from every core: sync.Map
	// reads take no lock and do not bounce a mutex cache line.
	entries sync.Map // digestKey -> *digestEntry
}

type digestKey struct {
	hash      uint64
	hostgroup string
	user      string
}

type digestEntry struct {
	text                       string
	count, sumUs, minUs, maxUs atomic.Int64
	rows                       atomic.Int64
	firstSeen, lastSeen        atomic.Int64
}

func newDigestStats() *digestStats { return &digestStats{} }

// digest normalises q into the session's scratch buffer and returns its
// hash and text; the text is valid until the session's next digest.
func (s *session) digest(q string) (uint64, []byte) {
	hash, text := sqlclass.DigestInto(s.digestBuf, q)
	if cap(text) <= 64<<10 {
		s.digestBuf = text[:0] // keep the buffer, unless a huge statement grew it
	}
	return hash, text
}

// record counts one statement, by its digest (hash and normalised text),
// ending at end.
func (d *digestStats) record(hash uint64, text []byte, hostgroup, user string, end time.Time, dur time.Duration, rows int64) {
	k := digestKey{hash, hostgroup, user}
	var e *digestEntry
	if v, ok := d.entries.Load(k); ok {
		e = v.(*digestEntry)
	} else {
		fresh := &digestEntry{text: string(text)}
		fresh.minUs.Store(1 << 62)
		fresh.firstSeen.Store(end.Unix())
		v, _ := d.entries.LoadOrStore(k, fresh)
		e = v.(*digestEntry)
	}
	us := dur.Microseconds()
	e.count.Add(1)
	e.sumUs.Add(us)
	e.rows.Add(rows)
	for m := e.minUs.Load(); us < m && !e.minUs.CompareAndSwap(m, us); m = e.minUs.Load() {
	}
	for m := e.maxUs.Load(); us > m && !e.maxUs.CompareAndSwap(m, us); m = e.maxUs.Load() {
	}
	e.lastSeen.Store(end.Unix())
}

// DigestRow is one row of stats_query_digest.
type DigestRow struct {
	Digest, DigestText, Hostgroup, User string
	Count, SumUs, MinUs, MaxUs, Rows    int64
	FirstSeen, LastSeen                 int64
}

func (d *digestStats) rows() []DigestRow {
	var out []DigestRow
	d.entries.Range(func(key, v any) bool {
		k, e := key.(digestKey), v.(*digestEntry)
		out = append(out, DigestRow{
			Digest: fmt.Sprintf("0x%016X", k.hash), DigestText: e.text, Hostgroup: k.hostgroup, User: k.user,
			Count: e.count.Load(), SumUs: e.sumUs.Load(), MinUs: e.minUs.Load(), MaxUs: e.maxUs.Load(),
			Rows: e.rows.Load(), FirstSeen: e.firstSeen.Load(), LastSeen: e.lastSeen.Load(),
		})
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].SumUs > out[j].SumUs })
	return out
}

func (d *digestStats) reset() {
	d.entries.Range(func(k, _ any) bool {
		d.entries.Delete(k)
		return true
	})
}
