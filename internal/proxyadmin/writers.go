package proxyadmin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/topology"
)

// erConstraintFailed is MariaDB's ER_CONSTRAINT_FAILED: the change breaks
// a rule of the table (here: some node must be able to take writes).
const erConstraintFailed mysqlproto.ErrorCode = 4025

// checkWriters decides whether an UPDATE of the servers table may be
// applied: it refuses a change of writer weights that would leave no node
// able to take writes, which would stop writes on every proxy sharing
// the configuration (9001 "no node has a writer weight") until undone.
// servers is the view now, drained the operator drains now; weights and
// drains are what the statement sets. A statement that lowers no writer
// weight to 0 is never refused here (drains alone, reader weights, raised
// weights): the check is about this change, not about nodes that failed.
//
// Refused: no node with writer_weight > 0 would be left at all; or some
// node could take writes before (ONLINE, writable, not drained,
// writer_weight > 0) and none could after.
func checkWriters(servers []topology.Server, drained map[string]bool, weights map[string]config.Weights, drains map[string]bool) *mysqlproto.SQLError {
	var zeroed []string
	for _, s := range servers {
		if w, ok := weights[s.Name]; ok && w.Writer == 0 && s.WriterWeight > 0 {
			zeroed = append(zeroed, s.Name)
		}
	}
	if len(zeroed) == 0 {
		return nil
	}
	var weighted, ableBefore, ableAfter, cannot []string
	for _, s := range servers {
		w := s.WriterWeight
		if nw, ok := weights[s.Name]; ok {
			w = nw.Writer
		}
		d, undrain := drained[s.Name], false
		if nd, ok := drains[s.Name]; ok {
			undrain = d && !nd
			d = nd
		}
		if s.WriterWeight > 0 && s.Online && !s.ReadOnly && !drained[s.Name] {
			ableBefore = append(ableBefore, s.Name)
		}
		if w <= 0 {
			continue
		}
		weighted = append(weighted, s.Name)
		// A node the statement undrains may take writes again if its
		// health allows: it is not counted against the change.
		switch {
		case s.ReadOnly:
			cannot = append(cannot, s.Name+" is read_only")
		case d:
			cannot = append(cannot, s.Name+" is drained")
		case s.Online || undrain:
			ableAfter = append(ableAfter, s.Name)
		default:
			cannot = append(cannot, fmt.Sprintf("%s is %s (%s)", s.Name, s.State(), s.Reason))
		}
	}
	slices.Sort(zeroed)
	names := strings.Join(zeroed, ", ")
	switch {
	case len(weighted) == 0:
		// What to do instead: keep a weight on another node, or on one
		// of these if the statement zeroes them all.
		todo := fmt.Sprintf("to take %s out of the writer role, first give another node a writer weight "+
			"(UPDATE servers SET writer_weight = 100 WHERE name = '%%s')", names)
		if others := otherNames(servers, zeroed); len(others) > 0 {
			todo = fmt.Sprintf(todo, others[0])
		} else {
			todo = fmt.Sprintf("leave writer_weight > 0 on at least one node (UPDATE servers SET writer_weight = 0 WHERE name != '%s' keeps %s's)", zeroed[0], zeroed[0])
		}
		return &mysqlproto.SQLError{Code: erConstraintFailed, State: "23000", Message: fmt.Sprintf(
			"refused: after this change no node would have writer_weight > 0, so every proxy would stop writes "+
				"(error 9001 \"no node has a writer weight\") until a writer weight is given back. Nothing was changed. "+
				"To keep writes going, %s; to take a node out of service for a while, drain it instead "+
				"(UPDATE servers SET admin_state = 'drain' WHERE name = '...'): the writer role moves to another node with a writer weight",
			todo)}
	case len(ableBefore) > 0 && len(ableAfter) == 0:
		return &mysqlproto.SQLError{Code: erConstraintFailed, State: "23000", Message: fmt.Sprintf(
			"refused: after this change no node could take writes (ONLINE, writable, not drained, writer_weight > 0): %s; "+
				"every proxy would stop writes (error 9001) until one can. Nothing was changed. "+
				"First give a writer weight to an ONLINE node (UPDATE servers SET writer_weight = 100 WHERE name = '...'), "+
				"then take it from %s",
			strings.Join(cannot, "; "), names)}
	}
	return nil
}

// otherNames lists the servers not in skip, by name.
func otherNames(servers []topology.Server, skip []string) []string {
	var out []string
	for _, s := range servers {
		if !slices.Contains(skip, s.Name) {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}
