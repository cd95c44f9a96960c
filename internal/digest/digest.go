// Package digest aggregates statements by normalised text, hostgroup and
// user, like ProxySQL's stats_mysql_query_digest: what the admin table
// stats_query_digest shows.
package digest

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Stats aggregates statements by normalised text, hostgroup and user.
// Each statement is
// normalised afresh into its session's scratch buffer (a few hundred ns,
// no allocation): a cache by raw text missed on nearly every statement
// of an application that inlines its values, and its lookups cost more
// than they saved (profiled: the largest user-space item of the proxy).
type Stats struct {
	// entries are read on every statement from every core: sync.Map
	// reads take no lock and do not bounce a mutex cache line.
	entries sync.Map // key -> *entry
}

type key struct {
	hash      uint64
	hostgroup string
	user      string
}

type entry struct {
	text                       string
	count, sumUs, minUs, maxUs atomic.Int64
	rows                       atomic.Int64
	firstSeen, lastSeen        atomic.Int64
}

// Record counts one statement, by its digest (hash and normalised text),
// ending at end.
func (d *Stats) Record(hash uint64, text []byte, hostgroup, user string, end time.Time, dur time.Duration, rows int64) {
	k := key{hash, hostgroup, user}
	var e *entry
	if v, ok := d.entries.Load(k); ok {
		e = v.(*entry)
	} else {
		fresh := &entry{text: string(text)}
		fresh.minUs.Store(1 << 62)
		fresh.firstSeen.Store(end.Unix())
		v, _ := d.entries.LoadOrStore(k, fresh)
		e = v.(*entry)
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

// Row is one row of stats_query_digest.
type Row struct {
	Digest, DigestText, Hostgroup, User string
	Count, SumUs, MinUs, MaxUs, Rows    int64
	FirstSeen, LastSeen                 int64
}

// Rows returns every digest, most expensive (total time) first.
func (d *Stats) Rows() []Row {
	var out []Row
	d.entries.Range(func(kv, v any) bool {
		k, e := kv.(key), v.(*entry)
		out = append(out, Row{
			Digest: fmt.Sprintf("0x%016X", k.hash), DigestText: e.text, Hostgroup: k.hostgroup, User: k.user,
			Count: e.count.Load(), SumUs: e.sumUs.Load(), MinUs: e.minUs.Load(), MaxUs: e.maxUs.Load(),
			Rows: e.rows.Load(), FirstSeen: e.firstSeen.Load(), LastSeen: e.lastSeen.Load(),
		})
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].SumUs > out[j].SumUs })
	return out
}

// Reset forgets every digest.
func (d *Stats) Reset() {
	d.entries.Range(func(k, _ any) bool {
		d.entries.Delete(k)
		return true
	})
}
