// Package replica decides how an asynchronous MariaDB replica follows a
// Galera cluster's writer (Step, a pure function), and whether a node's
// settings make it a safe replication source (CheckSource). Its effects —
// CHANGE MASTER on the replica, what the agents publish — live in the
// agent.
package replica

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GTID is one MariaDB global transaction id, domain-server-seqno.
type GTID struct {
	Domain, Server uint32
	Seqno          uint64
}

func (g GTID) String() string { return fmt.Sprintf("%d-%d-%d", g.Domain, g.Server, g.Seqno) }

// Position is a GTID position as MariaDB writes it (gtid_slave_pos,
// gtid_binlog_pos): at most one GTID per domain, comma-separated.
type Position map[uint32]GTID

// ParsePosition reads a position; "" is the empty position.
func ParsePosition(s string) (Position, error) {
	p := Position{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, "-")
		if len(f) != 3 {
			return nil, fmt.Errorf("GTID %q: want domain-server-seqno", part)
		}
		d, err1 := strconv.ParseUint(f[0], 10, 32)
		sv, err2 := strconv.ParseUint(f[1], 10, 32)
		n, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("GTID %q: want domain-server-seqno in numbers", part)
		}
		if _, dup := p[uint32(d)]; dup {
			return nil, fmt.Errorf("position %q: domain %d twice", s, d)
		}
		p[uint32(d)] = GTID{Domain: uint32(d), Server: uint32(sv), Seqno: n}
	}
	return p, nil
}

// Seqno is the position's sequence number in domain (0 if absent).
func (p Position) Seqno(domain uint32) uint64 { return p[domain].Seqno }

// Covers says whether p holds everything need holds in domain: a source
// at p can serve a replica at need (in that domain) without a gap.
func (p Position) Covers(need Position, domain uint32) bool {
	return p.Seqno(domain) >= need.Seqno(domain)
}

// String is the position as MariaDB writes it: its GTIDs by domain,
// comma-separated.
func (p Position) String() string {
	domains := make([]uint32, 0, len(p))
	for d := range p {
		domains = append(domains, d)
	}
	slices.Sort(domains)
	parts := make([]string, 0, len(domains))
	for _, d := range domains {
		parts = append(parts, p[d].String())
	}
	return strings.Join(parts, ",")
}
