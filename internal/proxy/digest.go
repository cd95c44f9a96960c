package proxy

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/sqlclass"
)

// digestStats aggregates statements by normalised text, hostgroup and
// user, like ProxySQL's stats_mysql_query_digest. Normalising costs about
// 200 ns, so the digest of each distinct raw text is cached (bounded).
type digestStats struct {
	mu      sync.RWMutex
	byText  map[string]textDigest
	entries map[digestKey]*digestEntry
}

type textDigest struct {
	hash uint64
	text string
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

const maxCachedTexts = 20000

func newDigestStats() *digestStats {
	return &digestStats{byText: map[string]textDigest{}, entries: map[digestKey]*digestEntry{}}
}

func (d *digestStats) lookup(q string) textDigest {
	d.mu.RLock()
	td, ok := d.byText[q]
	d.mu.RUnlock()
	if ok {
		return td
	}
	h, text := sqlclass.Digest(q)
	td = textDigest{h, text}
	d.mu.Lock()
	if len(d.byText) < maxCachedTexts {
		d.byText[strings.Clone(q)] = td
	}
	d.mu.Unlock()
	return td
}

func (d *digestStats) digestOf(q string) uint64 { return d.lookup(q).hash }

// record counts one statement.
func (d *digestStats) record(q, hostgroup, user string, dur time.Duration, rows int64) {
	td := d.lookup(q)
	k := digestKey{td.hash, hostgroup, user}
	d.mu.RLock()
	e := d.entries[k]
	d.mu.RUnlock()
	if e == nil {
		d.mu.Lock()
		if e = d.entries[k]; e == nil {
			e = &digestEntry{text: td.text}
			e.minUs.Store(1 << 62)
			e.firstSeen.Store(time.Now().Unix())
			d.entries[k] = e
		}
		d.mu.Unlock()
	}
	us := dur.Microseconds()
	e.count.Add(1)
	e.sumUs.Add(us)
	e.rows.Add(rows)
	for m := e.minUs.Load(); us < m && !e.minUs.CompareAndSwap(m, us); m = e.minUs.Load() {
	}
	for m := e.maxUs.Load(); us > m && !e.maxUs.CompareAndSwap(m, us); m = e.maxUs.Load() {
	}
	e.lastSeen.Store(time.Now().Unix())
}

// DigestRow is one row of stats_query_digest.
type DigestRow struct {
	Digest, DigestText, Hostgroup, User string
	Count, SumUs, MinUs, MaxUs, Rows    int64
	FirstSeen, LastSeen                 int64
}

func (d *digestStats) rows() []DigestRow {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]DigestRow, 0, len(d.entries))
	for k, e := range d.entries {
		out = append(out, DigestRow{
			Digest: fmt.Sprintf("0x%016X", k.hash), DigestText: e.text, Hostgroup: k.hostgroup, User: k.user,
			Count: e.count.Load(), SumUs: e.sumUs.Load(), MinUs: e.minUs.Load(), MaxUs: e.maxUs.Load(),
			Rows: e.rows.Load(), FirstSeen: e.firstSeen.Load(), LastSeen: e.lastSeen.Load(),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SumUs > out[j].SumUs })
	return out
}

func (d *digestStats) reset() {
	d.mu.Lock()
	d.entries = map[digestKey]*digestEntry{}
	d.mu.Unlock()
}
