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
	// byText and entries are read on every statement from every core:
	// sync.Map reads take no lock and do not bounce a mutex cache line.
	byText  sync.Map // string -> textDigest
	texts   atomic.Int64
	entries sync.Map // digestKey -> *digestEntry
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

func newDigestStats() *digestStats { return &digestStats{} }

func (d *digestStats) lookup(q string) textDigest {
	if v, ok := d.byText.Load(q); ok {
		return v.(textDigest)
	}
	h, text := sqlclass.Digest(q)
	td := textDigest{h, text}
	if d.texts.Load() < maxCachedTexts {
		if _, loaded := d.byText.LoadOrStore(strings.Clone(q), td); !loaded {
			d.texts.Add(1)
		}
	}
	return td
}

func (d *digestStats) digestOf(q string) uint64 { return d.lookup(q).hash }

// record counts one statement.
func (d *digestStats) record(q, hostgroup, user string, dur time.Duration, rows int64) {
	td := d.lookup(q)
	k := digestKey{td.hash, hostgroup, user}
	var e *digestEntry
	if v, ok := d.entries.Load(k); ok {
		e = v.(*digestEntry)
	} else {
		fresh := &digestEntry{text: td.text}
		fresh.minUs.Store(1 << 62)
		fresh.firstSeen.Store(time.Now().Unix())
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
	e.lastSeen.Store(time.Now().Unix())
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
