// Package topology is the proxy's view of its backend nodes: their
// hostgroup weights and whether each may take traffic now. The router
// reads an immutable Snapshot on every statement (one atomic load); health
// checks, the admin interface and later the Galera monitor change the view
// by publishing a new snapshot. Routing logic thus never races with
// changes, and a weight change applies atomically to all new statements.
package topology

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Server is one node as the router sees it.
type Server struct {
	Name         string
	Addr         string
	WriterWeight int
	ReaderWeight int
	Online       bool
	// Reason says why the node is offline ("unreachable: connection
	// refused"), shown in admin and in "no backend" errors.
	Reason string
}

// Snapshot is an immutable routing state.
type Snapshot struct {
	Servers []Server // sorted by name
	writer  int      // index into Servers, -1 if none
	readers []int    // online nodes with ReaderWeight > 0
	cumul   []int    // cumulative reader weights
	Version uint64
}

// View publishes snapshots.
type View struct {
	mu      sync.Mutex
	servers []Server
	version uint64
	cur     atomic.Pointer[Snapshot]
}

// NewView starts with servers, all assumed online until a check says
// otherwise (a node that is down fails its first connect and goes offline
// at once).
func NewView(servers []Server) *View {
	v := &View{servers: append([]Server(nil), servers...)}
	for i := range v.servers {
		v.servers[i].Online = true
	}
	v.publish()
	return v
}

// Load returns the current snapshot.
func (v *View) Load() *Snapshot { return v.cur.Load() }

func (v *View) publish() {
	v.version++
	s := &Snapshot{Servers: append([]Server(nil), v.servers...), writer: -1, Version: v.version}
	sort.Slice(s.Servers, func(i, j int) bool { return s.Servers[i].Name < s.Servers[j].Name })
	total := 0
	for i, srv := range s.Servers {
		if !srv.Online {
			continue
		}
		// The writer is a pure function of the published state: highest
		// writer weight, ties broken by name, so every proxy that sees the
		// same state picks the same node.
		if srv.WriterWeight > 0 && (s.writer < 0 || srv.WriterWeight > s.Servers[s.writer].WriterWeight) {
			s.writer = i
		}
		if srv.ReaderWeight > 0 {
			total += srv.ReaderWeight
			s.readers = append(s.readers, i)
			s.cumul = append(s.cumul, total)
		}
	}
	v.cur.Store(s)
}

// SetHealth marks a node online or offline and reports whether that
// changed anything.
func (v *View) SetHealth(name string, online bool, reason string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range v.servers {
		if v.servers[i].Name == name {
			if v.servers[i].Online == online && v.servers[i].Reason == reason {
				return false
			}
			v.servers[i].Online, v.servers[i].Reason = online, reason
			v.publish()
			return true
		}
	}
	return false
}

// Update applies fn to a copy of every server and publishes the result
// only if fn succeeds for all of them: an admin UPDATE is all or nothing.
func (v *View) Update(fn func(s *Server) error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	next := append([]Server(nil), v.servers...)
	for i := range next {
		if err := fn(&next[i]); err != nil {
			return err
		}
	}
	v.servers = next
	v.publish()
	return nil
}

// Writer returns the node that takes writes.
func (s *Snapshot) Writer() (Server, bool) {
	if s.writer < 0 {
		return Server{}, false
	}
	return s.Servers[s.writer], true
}

// PickReader returns a reader chosen at random in proportion to the
// configured reader weights. With no reader online it returns the writer:
// reads never fail while a healthy node exists.
func (s *Snapshot) PickReader() (Server, bool) {
	if len(s.readers) == 0 {
		return s.Writer()
	}
	total := s.cumul[len(s.cumul)-1]
	r := rand.IntN(total)
	i := sort.SearchInts(s.cumul, r+1)
	return s.Servers[s.readers[i]], true
}

// Why explains, for an error message, why a hostgroup has no node.
func (s *Snapshot) Why(hostgroup string) string {
	var parts []string
	for _, srv := range s.Servers {
		weight := srv.WriterWeight
		if hostgroup == "reader" {
			weight = srv.ReaderWeight
		}
		switch {
		case weight == 0:
		case !srv.Online:
			parts = append(parts, fmt.Sprintf("%s offline (%s)", srv.Name, srv.Reason))
		}
	}
	if len(parts) == 0 {
		return "no node has a " + hostgroup + " weight"
	}
	return strings.Join(parts, "; ")
}
