package proxy

import (
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// relayResult describes one relayed response.
type relayResult struct {
	status      mysqlproto.StatusFlag
	statusKnown bool
	isErr       bool
	// written: at least one packet went into the client's buffer.
	written bool
	recv    int
	rows    int64
	// warnings of the final OK/EOF; lastInsertID of the last OK that
	// reported one.
	warnings     uint16
	lastInsertID uint64
}

// forward sends a complete command payload to c and relays the response
// to the client as raw packets, flushing once at the end (or when the
// client buffer fills on a large result). Failures of c come back as
// *backendErr with c marked broken.
func (s *session) forward(c *backend.Conn, payload []byte, kind mysqlproto.ResponseKind) (relayResult, error) {
	s.running.Store(c)
	defer s.running.Store(nil)
	c.ResetSeq()
	err := c.WritePacket(payload)
	if err == nil {
		err = c.Flush()
	}
	if err != nil {
		c.MarkBroken()
		return s.relayParting(c, err)
	}
	return s.relay(c, kind)
}

// relayParting handles a command the node stopped reading: it may have
// answered with an error and closed the connection (a statement over its
// max_allowed_packet), and that error is what the client should get, not
// a broken pipe. If an error packet can still be read, it is relayed
// (numbered for the client); otherwise the write error stands.
func (s *session) relayParting(c *backend.Conn, werr error) (relayResult, error) {
	var res relayResult
	c.SetDeadline(time.Now().Add(time.Second))
	raw, err := c.ReadRawPacket()
	if err != nil || !mysqlproto.IsErr(mysqlproto.RawPayload(raw)) {
		return res, &backendErr{c.Server(), werr}
	}
	// Nothing was written to the client yet: the error continues the
	// client's sequence right after its command.
	if err := s.pc.WriteRaw(raw); err != nil {
		return res, err
	}
	res.recv, res.written, res.isErr = len(raw), true, true
	return res, s.pc.Flush()
}

// endsConnection reports whether a node closes the connection after
// sending this error: the connection must not go back to the pool.
func endsConnection(code mysqlproto.ErrorCode) bool {
	switch code {
	case mysqlproto.ErConnectionKilled, mysqlproto.ErServerShutdown, mysqlproto.ErAbortingConnection,
		mysqlproto.ErNetPacketTooLarge, mysqlproto.ErNetReadError, mysqlproto.ErNetReadInterrupted,
		mysqlproto.ErNetErrorOnWrite, mysqlproto.ErNetWriteInterrupted, mysqlproto.ErNetPacketsOutOfOrder,
		mysqlproto.ErNetUncompressError, mysqlproto.ErConCountError,
		4031: // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8.0.24+)
		return true
	}
	return false
}

// relay copies one response of the given kind from c to the client.
//
// Packets that are wholly in the backend connection's read buffer are
// not copied out of it: each is framed where it lies, and a run of them
// goes to the client in one write (straight to the socket when it is
// larger than the client's buffer). That keeps a large result at one
// copy in and one copy out of the proxy, as an L4 proxy's is. A packet
// that is not all buffered yet is read (and copied) as before, after the
// pending run is written: reading more may move the buffer.
func (s *session) relay(c *backend.Conn, kind mysqlproto.ResponseKind) (relayResult, error) {
	var res relayResult
	f := &s.framer
	f.Reset(kind, c.Caps)
	first := true
	var run []byte // adjacent buffered packets not yet written
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		err := s.pc.WriteRaw(run)
		run = nil
		return err
	}
	for {
		raw, buffered, err := c.NextBuffered()
		if err == nil && !buffered {
			if err = flush(); err != nil {
				c.MarkBroken() // the client is gone mid-response
				return res, err
			}
			raw, err = c.ReadRawPacket()
		}
		if err != nil {
			c.MarkBroken()
			return res, &backendErr{c.Server(), err}
		}
		colDef := s.rename.active() && f.InColumnDefs()
		st, err := f.Next(mysqlproto.RawPayload(raw))
		if err != nil {
			c.MarkBroken()
			return res, &backendErr{c.Server(), err}
		}
		if s.sum.on {
			s.sum.packet(mysqlproto.RawPayload(raw), st == mysqlproto.FrameDone)
		}
		if colDef {
			if renamed := s.rename.apply(raw); renamed != nil {
				raw, buffered = renamed, false
				if err := flush(); err != nil {
					c.MarkBroken()
					return res, err
				}
			}
		}
		if st == mysqlproto.FrameLocalInfile {
			first = false
			res.recv += len(raw)
			res.written = true
			if err := flush(); err != nil {
				c.MarkBroken()
				return res, err
			}
			if err := s.relayInfile(c, raw); err != nil {
				return res, err
			}
			continue
		}
		if first && st == mysqlproto.FrameDone && s.hold.kind == holdTx && s.hold.conn == c {
			code, isErr := f.ErrorCode()
			switch {
			case isErr && (code == errDuringCommit || code == errWsrepNotReady) && s.markedCommit:
				// Its COMMIT failed as the node lost the Primary
				// component — and may have committed all the same
				// (seen: 1180 "Not connected to Primary Component" for
				// a COMMIT that is on every node). The marker settles
				// it.
				return res, &commitUncertain{c.Server()}
			case isErr && code == errWsrepNotReady && s.inLoop && !s.committing && s.replayable():
				// The transaction's node left the Primary component and
				// refused the statement: the transaction can never
				// commit there. Keep the error from the client: the
				// transaction is replayed on the writer.
				return res, &nodeRejects{c.Server()}
			}
		}
		if first && st == mysqlproto.FrameDone && s.hold.kind != holdTx && s.hold.kind != holdPinned {
			if code, isErr := f.ErrorCode(); isErr && code == errWsrepNotReady {
				// The node refuses work (wsrep_reject_queries, not
				// synced) and did not run the statement: keep the error
				// from the client and let the caller go elsewhere.
				return res, &nodeRejects{c.Server()}
			} else if isErr && code == mysqlproto.ErServerShutdown {
				// The node is shutting down and closes this connection:
				// to the caller this is a lost connection, which an
				// autocommit read survives by going elsewhere.
				c.MarkBroken()
				return res, &backendErr{c.Server(), errNodeShutdown}
			}
		}
		first = false
		res.recv += len(raw)
		res.written = true
		switch {
		case !buffered:
			err = s.pc.WriteRaw(raw)
		case len(run) == 0:
			run = raw
		default:
			// Nothing was read since the run began (a read writes the
			// run out first), so raw follows it in the buffer.
			run = run[:len(run)+len(raw)]
		}
		if err != nil {
			// The client is gone; the backend stream is mid-response.
			c.MarkBroken()
			return res, err
		}
		if st == mysqlproto.FrameDone {
			break
		}
	}
	if err := flush(); err != nil {
		c.MarkBroken()
		return res, err
	}
	res.status, res.statusKnown = f.Status()
	res.warnings, res.lastInsertID = f.Warnings(), f.LastInsertID()
	var code mysqlproto.ErrorCode
	code, res.isErr = f.ErrorCode()
	if res.isErr && endsConnection(code) {
		c.MarkBroken()
	}
	if f.Result() == mysqlproto.ResultSet && f.ResultSets() == 1 {
		res.rows = rowCount(f, c.Caps)
	}
	return res, s.pc.Flush()
}

// rowCount derives the number of rows of a single result set from the
// packet count: column count + column definitions + [EOF] + rows + end.
func rowCount(f *mysqlproto.ResponseFramer, caps mysqlproto.Capability) int64 {
	overhead := 2 + int64(f.ColumnCount())
	if !caps.Has(mysqlproto.ClientDeprecateEOF) {
		overhead++
	}
	if n := int64(f.Packets()) - overhead; n > 0 {
		return n
	}
	return 0
}

// errWsrepNotReady is ER_UNKNOWN_COM_ERROR as Galera uses it: "WSREP has
// not yet prepared node for application use" — sent before the statement
// runs, so retrying elsewhere is safe.
const errWsrepNotReady = mysqlproto.ErrorCode(1047)

// errNodeShutdown: the node answered ER_SERVER_SHUTDOWN (1053) and closes
// the connection.
const errNodeShutdown = protoErr("the node is shutting down (1053)")

// errDuringCommit is ER_ERROR_DURING_COMMIT. Galera answers it to a
// COMMIT it could not replicate as the node lost the Primary component,
// but the write-set may have been ordered all the same: it does not
// mean "rolled back".
const errDuringCommit = mysqlproto.ErrorCode(1180)

// commitUncertain says a COMMIT's answer was an error that does not tell
// whether it committed (errDuringCommit).
type commitUncertain struct{ server string }

func (e *commitUncertain) Error() string {
	return e.server + " answered the COMMIT with an error that does not say whether it committed (1180)"
}

// nodeRejects says a node refused a statement it did not run.
type nodeRejects struct{ server string }

func (e *nodeRejects) Error() string { return e.server + " refuses queries (WSREP not ready)" }

type protoErr string

func (e protoErr) Error() string { return string(e) }

// columnRename gives a result's columns their names back after galeon
// rewrote the statement: "SELECT CONNECTION_ID()" runs as "SELECT
// 1073741825", and the client must still see a column named
// CONNECTION_ID(), as it would on a direct connection. from is replaced
// wherever it appears in a name (a session id is long enough not to
// appear by chance); exact names (values put back by a wrapped write's
// diagnostics, as short as "1") are renamed only when a column is
// named exactly so, each once, in the order of the text.
type columnRename struct {
	from, to string
	exact    []exactRename
}

type exactRename struct {
	from, to string
	used     bool
}

func (r *columnRename) active() bool { return r.from != "" || len(r.exact) > 0 }

// apply returns raw (a column definition with its header) renamed, or
// nil when its name is not one rewritten.
func (r *columnRename) apply(raw []byte) []byte {
	payload := mysqlproto.RenameColumn(mysqlproto.RawPayload(raw), r.from, r.to)
	for i := 0; payload == nil && i < len(r.exact); i++ {
		if e := &r.exact[i]; !e.used {
			if payload = mysqlproto.RenameColumnExact(mysqlproto.RawPayload(raw), e.from, e.to); payload != nil {
				e.used = true
			}
		}
	}
	if payload == nil {
		return nil
	}
	out := mysqlproto.AppendUint24(make([]byte, 0, 4+len(payload)), uint32(len(payload)))
	out = append(out, raw[3])
	return append(out, payload...)
}
