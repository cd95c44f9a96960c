package mysqlproto

import (
	"errors"
	"fmt"
)

// ResponseKind selects the framing rules for the response to one command.
type ResponseKind uint8

const (
	// ResponseSingle: exactly one packet (OK, ERR or EOF), as for COM_PING,
	// COM_INIT_DB, COM_RESET_CONNECTION, COM_STMT_RESET, COM_SET_OPTION,
	// or the plain string COM_STATISTICS returns.
	ResponseSingle ResponseKind = iota
	// ResponseQuery: COM_QUERY (and COM_PROCESS_INFO). OK, ERR, a LOCAL
	// INFILE request, or text result sets; several when
	// SERVER_MORE_RESULTS_EXISTS is set.
	ResponseQuery
	// ResponseExecute: COM_STMT_EXECUTE. Like ResponseQuery with binary
	// rows; if a cursor was opened the metadata is followed only by a
	// terminator flagged SERVER_STATUS_CURSOR_EXISTS.
	ResponseExecute
	// ResponseFetch: COM_STMT_FETCH. Binary rows and a terminator, or ERR.
	ResponseFetch
	// ResponsePrepare: COM_STMT_PREPARE. COM_STMT_PREPARE_OK followed by
	// parameter and column definitions, or ERR.
	ResponsePrepare
	// ResponseFieldList: COM_FIELD_LIST. Column definitions ended by EOF,
	// or ERR.
	ResponseFieldList
)

// ResponseKindFor returns the framing for cmd's response. ok is false for
// commands with no response (COM_QUIT, COM_STMT_CLOSE,
// COM_STMT_SEND_LONG_DATA) and for those a relay cannot frame generically
// (COM_CHANGE_USER is an authentication exchange; binlog and clone
// commands stream).
func ResponseKindFor(cmd Command) (kind ResponseKind, ok bool) {
	switch cmd {
	case ComQuery, ComProcessInfo:
		return ResponseQuery, true
	case ComStmtExecute:
		return ResponseExecute, true
	case ComStmtFetch:
		return ResponseFetch, true
	case ComStmtPrepare:
		return ResponsePrepare, true
	case ComFieldList:
		return ResponseFieldList, true
	case ComQuit, ComStmtClose, ComStmtSendLongData, ComChangeUser,
		ComBinlogDump, ComBinlogDumpGTID, ComRegisterSlave, ComTableDump, ComClone,
		ComStmtBulkExecute, ComMulti:
		return 0, false
	}
	return ResponseSingle, true
}

// ResultType classifies the first packet of a (sub-)response.
type ResultType uint8

const (
	ResultNone        ResultType = iota
	ResultOK                     // OK packet
	ResultErr                    // ERR packet
	ResultLocalInfile            // LOCAL INFILE request (0xFB + file name)
	ResultSet                    // column count: a result set follows
	ResultEOF                    // EOF packet (COM_SET_OPTION, COM_DEBUG)
	ResultOther                  // anything else in a ResponseSingle (COM_STATISTICS text)
)

// ClassifyResponse tells what the first packet of a COM_QUERY or
// COM_STMT_EXECUTE response is; for a result set it also returns the
// column count. caps matter only for the metadata flag that
// CLIENT_OPTIONAL_RESULTSET_METADATA / MARIADB_CLIENT_CACHE_METADATA add
// after the column count (metadataFollows is false if the server left the
// column definitions out).
func ClassifyResponse(payload []byte, caps Capability) (t ResultType, columns uint64, metadataFollows bool, err error) {
	if len(payload) == 0 {
		return ResultNone, 0, false, malformed("empty response packet")
	}
	switch payload[0] {
	case HeaderOK:
		return ResultOK, 0, false, nil
	case HeaderErr:
		return ResultErr, 0, false, nil
	case HeaderLocalInfile:
		return ResultLocalInfile, 0, false, nil
	case HeaderEOF:
		return ResultNone, 0, false, malformed("EOF packet where a response must start")
	}
	d := decoder{b: payload}
	n, _ := d.lenEncInt()
	metadataFollows = true
	if caps&(ClientOptionalResultsetMetadata|MariaDBClientCacheMetadata) != 0 && d.remaining() > 0 {
		metadataFollows = d.u8() != 0
	}
	if d.err != nil || n == 0 || d.remaining() != 0 {
		return ResultNone, 0, false, malformed("column count")
	}
	return ResultSet, n, metadataFollows, nil
}

// FrameState is what ResponseFramer.Next tells the caller to do next.
type FrameState uint8

const (
	// FrameContinue: the response goes on; read the next server packet.
	FrameContinue FrameState = iota
	// FrameLocalInfile: the server asked for a LOCAL INFILE. Relay the
	// client's packets to the server up to and including the empty one
	// that ends the file, then keep feeding server packets to Next.
	FrameLocalInfile
	// FrameDone: that packet ended the response.
	FrameDone
)

type frameState uint8

const (
	fsFirst frameState = iota
	fsColumnDefs
	fsMetaEOF
	fsRows
	fsParamDefs
	fsParamEOF
	fsPrepColumnDefs
	fsPrepColumnEOF
	fsFieldList
	fsSingle
	fsDone
)

// ErrFramerDone is returned when packets are fed after the response ended.
var ErrFramerDone = errors.New("mysqlproto: response already complete")

// ResponseFramer follows a command's response packet by packet without
// decoding rows, so a proxy can relay the packets as they are and still
// know when the response ends, what the server status is afterwards
// (transaction open? cursor open?), and whether it ended in an error.
//
// Feed it every packet the server sends, in order: the payload from
// ReadPacket, or RawPayload of what ReadRawPacket returned. It looks at no
// more than a packet's first bytes and never allocates. The zero value is
// not ready; call Reset before each response.
type ResponseFramer struct {
	kind         ResponseKind
	caps         Capability
	state        frameState
	result       ResultType
	status       StatusFlag
	warnings     uint16
	lastInsertID uint64
	columns      uint64
	remaining    uint64
	prepare      StmtPrepareOK
	errCode      ErrorCode
	packets      int
	resultSets   int
	statusLoaded bool
}

// Reset prepares f for the response to a new command. caps are the
// capabilities negotiated on the connection the response arrives on.
func (f *ResponseFramer) Reset(kind ResponseKind, caps Capability) {
	*f = ResponseFramer{kind: kind, caps: caps}
	switch kind {
	case ResponseFetch:
		f.state = fsRows
		f.result = ResultSet
	case ResponseFieldList:
		f.state = fsFieldList
	case ResponseSingle:
		f.state = fsSingle
	}
}

// Done reports whether the response is complete.
func (f *ResponseFramer) Done() bool { return f.state == fsDone }

// Result returns the type of the latest (sub-)response: with multiple
// result sets, that of the last one seen.
func (f *ResponseFramer) Result() ResultType { return f.result }

// ColumnCount returns the column count of the latest result set (or of the
// prepared statement).
func (f *ResponseFramer) ColumnCount() uint64 { return f.columns }

// Status returns the server status from the latest OK, EOF or terminator
// packet, and whether one has been seen. After an ERR the status is the
// last one known before it: an error may have rolled the transaction back
// (ER_LOCK_DEADLOCK does), so do not trust ServerStatusInTrans then.
func (f *ResponseFramer) Status() (StatusFlag, bool) { return f.status, f.statusLoaded }

// Warnings returns the warning count from the latest OK/EOF packet.
func (f *ResponseFramer) Warnings() uint16 { return f.warnings }

// LastInsertID is the last non-zero insert id an OK packet of the
// response reported (what LAST_INSERT_ID() returns next), or 0.
func (f *ResponseFramer) LastInsertID() uint64 { return f.lastInsertID }

// ErrorCode returns the code of the ERR packet that ended the response,
// if it ended with one.
func (f *ResponseFramer) ErrorCode() (ErrorCode, bool) { return f.errCode, f.result == ResultErr }

// PrepareOK returns the COM_STMT_PREPARE_OK of a ResponsePrepare.
func (f *ResponseFramer) PrepareOK() StmtPrepareOK { return f.prepare }

// Packets returns how many packets have been fed since Reset.
func (f *ResponseFramer) Packets() int { return f.packets }

// ResultSets returns how many result sets the response has carried.
func (f *ResponseFramer) ResultSets() int { return f.resultSets }

func (f *ResponseFramer) deprecateEOF() bool { return f.caps&ClientDeprecateEOF != 0 }

// Next consumes the next server packet.
func (f *ResponseFramer) Next(payload []byte) (FrameState, error) {
	if f.state == fsDone {
		return FrameDone, ErrFramerDone
	}
	f.packets++
	if len(payload) == 0 {
		return f.fail("empty packet")
	}
	switch f.state {
	case fsSingle:
		return f.single(payload)
	case fsFirst:
		if f.kind == ResponsePrepare {
			return f.prepareFirst(payload)
		}
		return f.first(payload)
	case fsColumnDefs, fsParamDefs, fsPrepColumnDefs:
		if IsErr(payload) {
			return f.errDone(payload)
		}
		f.remaining--
		if f.remaining == 0 {
			f.afterDefs()
			if f.state == fsDone {
				return FrameDone, nil
			}
		}
		return FrameContinue, nil
	case fsMetaEOF, fsParamEOF, fsPrepColumnEOF:
		return f.metaEOF(payload)
	case fsRows:
		return f.rows(payload)
	case fsFieldList:
		if IsErr(payload) {
			return f.errDone(payload)
		}
		if IsEOF(payload, true) {
			return f.terminator(payload, false)
		}
		return FrameContinue, nil
	}
	return f.fail("invalid framer state")
}

func (f *ResponseFramer) fail(what string) (FrameState, error) {
	f.state = fsDone
	return FrameDone, fmt.Errorf("%w: %s in %s response (packet %d)", ErrMalformedPacket, what, f.kindName(), f.packets)
}

func (f *ResponseFramer) kindName() string {
	switch f.kind {
	case ResponseQuery:
		return "query"
	case ResponseExecute:
		return "execute"
	case ResponseFetch:
		return "fetch"
	case ResponsePrepare:
		return "prepare"
	case ResponseFieldList:
		return "field list"
	}
	return "single-packet"
}

func (f *ResponseFramer) errDone(payload []byte) (FrameState, error) {
	f.result = ResultErr
	f.errCode, _ = ErrCode(payload)
	f.state = fsDone
	return FrameDone, nil
}

func (f *ResponseFramer) setStatus(warnings uint16, status StatusFlag) {
	f.warnings, f.status, f.statusLoaded = warnings, status, true
}

// endOrMore finishes a sub-response: another one follows if the server
// set SERVER_MORE_RESULTS_EXISTS.
func (f *ResponseFramer) endOrMore() (FrameState, error) {
	if f.status&ServerMoreResultsExists != 0 && (f.kind == ResponseQuery || f.kind == ResponseExecute) {
		f.state = fsFirst
		return FrameContinue, nil
	}
	f.state = fsDone
	return FrameDone, nil
}

func (f *ResponseFramer) single(payload []byte) (FrameState, error) {
	f.state = fsDone
	switch {
	case IsErr(payload):
		return f.errDone(payload)
	case payload[0] == HeaderOK:
		ok, err := ParseOK(payload, f.caps)
		if err != nil {
			return f.fail("bad OK packet")
		}
		f.result = ResultOK
		f.setStatus(ok.Warnings, ok.Status)
	case IsEOF(payload, f.deprecateEOF()):
		w, s, err := ParseTerminator(payload, f.caps)
		if err != nil {
			return f.fail("bad EOF packet")
		}
		f.result = ResultEOF
		f.setStatus(w, s)
	default:
		f.result = ResultOther
	}
	return FrameDone, nil
}

func (f *ResponseFramer) first(payload []byte) (FrameState, error) {
	t, n, meta, err := ClassifyResponse(payload, f.caps)
	if err != nil {
		return f.fail("bad first packet")
	}
	f.result = t
	switch t {
	case ResultErr:
		return f.errDone(payload)
	case ResultOK:
		ok, err := ParseOK(payload, f.caps)
		if err != nil {
			return f.fail("bad OK packet")
		}
		f.setStatus(ok.Warnings, ok.Status)
		if ok.LastInsertID != 0 {
			f.lastInsertID = ok.LastInsertID
		}
		return f.endOrMore()
	case ResultLocalInfile:
		if f.kind != ResponseQuery {
			return f.fail("LOCAL INFILE request")
		}
		// The server answers the file with OK or ERR: a new first packet.
		return FrameLocalInfile, nil
	}
	f.resultSets++
	f.columns = n
	f.remaining = n
	if meta {
		f.state = fsColumnDefs
	} else {
		f.afterDefsOf(fsColumnDefs)
	}
	return FrameContinue, nil
}

func (f *ResponseFramer) prepareFirst(payload []byte) (FrameState, error) {
	if IsErr(payload) {
		return f.errDone(payload)
	}
	p, err := ParseStmtPrepareOK(payload)
	if err != nil {
		return f.fail("bad COM_STMT_PREPARE_OK")
	}
	f.result = ResultOK
	f.prepare = p
	f.columns = uint64(p.NumColumns)
	if !p.MetadataFollows {
		f.state = fsDone
		return FrameDone, nil
	}
	f.state = fsParamDefs
	f.remaining = uint64(p.NumParams)
	if f.remaining == 0 {
		f.afterDefs()
	}
	if f.state == fsDone {
		return FrameDone, nil
	}
	return FrameContinue, nil
}

// afterDefs moves on once the current block of definitions is consumed.
func (f *ResponseFramer) afterDefs() { f.afterDefsOf(f.state) }

func (f *ResponseFramer) afterDefsOf(block frameState) {
	eof := !f.deprecateEOF()
	switch block {
	case fsColumnDefs:
		if eof {
			f.state = fsMetaEOF
		} else {
			f.state = fsRows
		}
	case fsParamDefs:
		// The EOF after a block is only sent if the block is not empty.
		if eof && f.prepare.NumParams > 0 {
			f.state = fsParamEOF
		} else {
			f.startPrepColumns()
		}
	case fsPrepColumnDefs:
		if eof && f.prepare.NumColumns > 0 {
			f.state = fsPrepColumnEOF
		} else {
			f.state = fsDone
		}
	}
}

func (f *ResponseFramer) startPrepColumns() {
	f.state = fsPrepColumnDefs
	f.remaining = uint64(f.prepare.NumColumns)
	if f.remaining == 0 {
		f.afterDefs()
	}
}

func (f *ResponseFramer) metaEOF(payload []byte) (FrameState, error) {
	if IsErr(payload) {
		return f.errDone(payload)
	}
	if !IsEOF(payload, false) {
		return f.fail("expected EOF after definitions")
	}
	w, s, err := ParseEOF(payload)
	if err != nil {
		return f.fail("bad EOF packet")
	}
	f.setStatus(w, s)
	switch f.state {
	case fsMetaEOF:
		if f.kind == ResponseExecute && s&ServerStatusCursorExists != 0 {
			// A cursor was opened: rows come with COM_STMT_FETCH.
			f.state = fsDone
			return FrameDone, nil
		}
		f.state = fsRows
	case fsParamEOF:
		f.startPrepColumns()
		if f.state == fsDone {
			return FrameDone, nil
		}
	case fsPrepColumnEOF:
		f.state = fsDone
		return FrameDone, nil
	}
	return FrameContinue, nil
}

func (f *ResponseFramer) rows(payload []byte) (FrameState, error) {
	if IsErr(payload) {
		return f.errDone(payload)
	}
	if IsEOF(payload, f.deprecateEOF()) {
		return f.terminator(payload, true)
	}
	return FrameContinue, nil
}

func (f *ResponseFramer) terminator(payload []byte, allowMore bool) (FrameState, error) {
	w, s, err := ParseTerminator(payload, f.caps)
	if err != nil {
		return f.fail("bad result set terminator")
	}
	f.setStatus(w, s)
	if allowMore {
		return f.endOrMore()
	}
	f.state = fsDone
	return FrameDone, nil
}

// InColumnDefs reports whether the next packet Next takes is a column
// definition of a result set or of a prepared statement's columns.
func (f *ResponseFramer) InColumnDefs() bool {
	return f.state == fsColumnDefs || f.state == fsPrepColumnDefs
}
