package backend

import (
	"strconv"
	"strings"
)

// GTID is a MariaDB GTID (domain-server-seqno) as Galera's
// WSREP_LAST_WRITTEN_GTID() gives it: the same on every node for one
// write-set, ordered by seqno within its domain and server.
type GTID struct {
	DomainServer string
	Seq          uint64
}

// ParseGTID reads "0-1-27".
func ParseGTID(s string) (GTID, bool) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 || strings.Count(s[:i], "-") != 1 {
		return GTID{}, false
	}
	seq, err := strconv.ParseUint(s[i+1:], 10, 64)
	if err != nil {
		return GTID{}, false
	}
	return GTID{DomainServer: s[:i], Seq: seq}, true
}

func (g GTID) String() string { return g.DomainServer + "-" + strconv.FormatUint(g.Seq, 10) }

// Applied reports whether the node is known to have applied g: a wait
// for g or a later write-set of its domain and server succeeded there
// (NoteApplied). Sessions that need g there need not wait again.
func (p *Pool) Applied(g GTID) bool {
	m := p.applied.Load()
	return m != nil && m.DomainServer == g.DomainServer && m.Seq >= g.Seq
}

// NoteApplied records that the node has applied g.
func (p *Pool) NoteApplied(g GTID) {
	for {
		m := p.applied.Load()
		if m != nil && m.DomainServer == g.DomainServer && m.Seq >= g.Seq {
			return
		}
		if p.applied.CompareAndSwap(m, &g) {
			return
		}
	}
}
