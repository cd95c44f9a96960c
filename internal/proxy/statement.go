package proxy

import (
	"errors"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/outcome"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// statementKind says how a statement came: COM_QUERY, COM_STMT_EXECUTE
// or COM_STMT_BULK_EXECUTE.
type statementKind uint8

const (
	textStatement statementKind = iota
	executeStatement
	bulkStatement
)

// statement is one client statement as the statement loop runs it. It
// lives on the caller's stack: the hot path allocates nothing for it.
type statement struct {
	kind  statementKind
	sql   string
	class sqlclass.Result
	// pkt is the client's command.
	pkt []byte
	// A text SET's assignments, when they parsed.
	setAs     []sqlclass.Assignment
	setParsed bool
	// The prepared statement executed, and whether the execution opens
	// a cursor.
	cs     *clientStmt
	cursor bool
}

// build returns what is sent on c; causal asks for the statement in its
// causal form (read-your-writes, ryw.go).
func (s *session) build(st *statement, c *backend.Conn, causal bool) ([]byte, error) {
	if st.kind != textStatement {
		return s.buildPrepared(st, c, causal)
	}
	if causal {
		return mysqlproto.AppendComQuery(nil, causalPrefix+st.sql, s.caps), nil
	}
	return st.pkt, nil
}

// done notes what the statement did to the session once its answer was
// relayed (error answers included), before the session decides whether
// to keep c.
func (s *session) done(st *statement, c *backend.Conn, res relayResult) {
	switch {
	case st.kind == textStatement && !res.isErr:
		s.afterText(st, c)
	case st.kind == executeStatement:
		s.afterExecute(st, c, res)
	}
}

// digestOf is the statement's digest for stats_query_digest.
func (s *session) digestOf(st *statement) (uint64, []byte) {
	if st.kind == textStatement {
		return s.digest(st.sql)
	}
	return st.cs.digest, st.cs.digestText
}

// runStatement is the statement loop, the one place that decides where a
// statement runs, re-sends it elsewhere when that costs the client
// nothing, and holds or releases the connection afterwards.
func (s *session) runStatement(st *statement) error {
	start := time.Now()
	// Every outcome counts in the latency histogram, failures included:
	// the slowest statements of a failover are the ones that waited for a
	// node and got none.
	label := routeNone
	defer func() { s.p.hist.observeStatement(string(label), time.Since(start)) }()
	s.inLoop, s.committing = true, st.class.Kind == sqlclass.Commit
	defer func() { s.inLoop, s.committing = false, false }()
	var rejected []string
	// aborted: times a wrapped write was rolled back by a deadlock and
	// run again.
	aborted := 0
	// wasInTx: a transaction was open before this statement (replay.go).
	wasInTx := s.hold.conn != nil && s.hold.kind == holdTx
	for attempt := 0; ; attempt++ {
		c, rt, err := s.connFor(st.sql, st.class)
		if err == nil && len(rejected) > 0 && contains(rejected, c.Server()) && rt != routeHeld {
			// Still routed to the node that refused: wait for the monitor
			// to take it out, then go where the view says.
			s.release(c)
			c, rt, err = s.connAvoiding(st.sql, st.class, rejected)
		}
		if err != nil {
			return s.sendErr(asSQLError(err))
		}
		label = rt
		causal, prefixed := false, false
		if rt != routeHeld && s.needsCausal(c, st.class, st.sql) {
			// Read-your-writes (ryw.go): this read waits for the
			// session's write on c's node, in the statement itself when
			// it can take the prefix, before it otherwise.
			causal, prefixed = true, prefixable(st.class)
			if !prefixed {
				if err := causalWait(c); err != nil {
					if refusedByNode(err) && !c.Broken() && s.hold.conn != c {
						// Nothing of the statement ran: as a refusal of it.
						avoid, again, err := s.refused(c, st.class, rt, attempt, relayResult{})
						if !again {
							return err
						}
						rejected = append(rejected, avoid)
						continue
					}
					return s.causalFailed(c, st.class, err)
				}
			}
		}
		out, err := s.build(st, c, prefixed)
		if err != nil && refusedByNode(err) && !c.Broken() && rt != routeHeld {
			// A prepared statement the node refused to prepare: it did
			// not run either.
			avoid, again, err := s.refused(c, st.class, rt, attempt, relayResult{})
			if !again {
				return err
			}
			rejected = append(rejected, avoid)
			continue
		}
		if err != nil {
			if c.Broken() {
				return s.backendFailed(c, err, relayResult{})
			}
			s.after(c, st.class, relayResult{isErr: true})
			return s.sendErr(asSQLError(err))
		}
		response := mysqlproto.ResponseQuery
		if st.kind != textStatement {
			response = mysqlproto.ResponseExecute
		}
		var res relayResult
		s.startSum(st, wasInTx)
		if m, marked := s.markerFor(st, c, rt); marked {
			var be *backendErr
			var cu *commitUncertain
			var marked bool
			if res, marked, err = s.forwardMarked(c, out, m); (errors.As(err, &be) || errors.As(err, &cu)) && !res.written && marked {
				// The answer to the COMMIT was lost with its node (or
				// the node, leaving the Primary component, answered an
				// error that does not say): the cluster says what became
				// of it, and a transaction that did not commit is run
				// again on the new writer.
				old := c.Server()
				replay := s.replayable()
				if v, err := s.settle(c, m, replay); v != outcome.NotCommitted || !replay {
					return err
				}
				if err := s.replayTxAvoiding(old, cu != nil); err != nil {
					return s.sendErr(asSQLError(err))
				}
				continue
			}
		} else if m, wrapped := s.wrapFor(st, c); wrapped {
			var be *backendErr
			var cu *commitUncertain
			var w wrapState
			if res, w, err = s.forwardWrapped(c, out, response, m, aborted < wrapRetries); errors.Is(err, errWrapAborted) {
				aborted++
				attempt-- // not one of the re-sends elsewhere that attempt bounds
				s.p.counts.wrapRetries.Add(1)
				s.after(c, st.class, relayResult{})
				continue
			} else if (errors.As(err, &be) || errors.As(err, &cu)) && !res.written && w.settleable() {
				// The writer was lost before the COMMIT's answer: the
				// cluster says whether the statement committed; if it
				// did not, it runs again on the new writer.
				again, err := s.settleWrapped(c, m, w, cu != nil)
				if !again {
					return err
				}
				continue
			}
		} else {
			res, err = s.forward(c, out, response)
		}
		if err == nil && causal && !res.isErr {
			s.causalDone(c)
		}
		if errors.Is(err, errInfileAborted) {
			// The client has its error and the node's connection is
			// closed: after drops it, and ends the session if its
			// transaction or pinned state was there.
			s.after(c, st.class, res)
			return nil
		}
		var nr *nodeRejects
		if errors.As(err, &nr) && !res.written && s.hold.kind == holdTx && s.hold.conn == c {
			// The transaction's node left the Primary component
			// (relay): the transaction runs again on the writer, away
			// from that node, then this statement.
			if handled, err := s.rollbackLost(c, st); handled {
				return err
			}
			if err := s.replayRefused(c); err != nil {
				return s.sendErr(asSQLError(err))
			}
			continue
		}
		if err != nil {
			if avoid, again := s.retryElsewhere(c, st.class, rt, attempt, res, err); again {
				if avoid != "" {
					rejected = append(rejected, avoid)
				}
				continue
			}
			if s.replaysLoss(st, res, err) {
				// The transaction's connection broke before this
				// statement's answer, and its COMMIT was never sent: the
				// transaction runs again on the writer, then this
				// statement.
				if handled, answered, err := s.replayLost(c, st); handled {
					if answered || err != nil {
						return err
					}
					continue
				}
			}
			return s.failed(c, st.class, err, res)
		}
		c.Pool().CountQuery(len(st.pkt), res.recv)
		if rt == routeReader {
			c.Pool().CountRead()
		}
		s.done(st, c, res)
		s.after(c, st.class, res)
		s.record(st, wasInTx)
		where := string(rt)
		if rt == routeHeld {
			where = c.Server()
		}
		hash, text := s.digestOf(st)
		end := time.Now()
		s.p.digests.Record(hash, text, where, s.user.name, end, end.Sub(start), res.rows)
		return nil
	}
}
