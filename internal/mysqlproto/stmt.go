package mysqlproto

import "encoding/binary"

// StmtPrepareOK is the first packet of a successful COM_STMT_PREPARE
// response. Parameter and column definitions follow it (see
// ResponseFramer).
type StmtPrepareOK struct {
	StatementID uint32
	NumColumns  uint16
	NumParams   uint16
	Warnings    uint16
	// MetadataFollows is false only when CLIENT_OPTIONAL_RESULTSET_METADATA
	// is on and the server omitted the definitions.
	MetadataFollows bool
}

// ParseStmtPrepareOK decodes a COM_STMT_PREPARE_OK packet.
func ParseStmtPrepareOK(payload []byte) (StmtPrepareOK, error) {
	d := decoder{b: payload}
	var p StmtPrepareOK
	if d.u8() != HeaderOK {
		return p, malformed("COM_STMT_PREPARE_OK header")
	}
	p.StatementID = d.u32()
	p.NumColumns = d.u16()
	p.NumParams = d.u16()
	p.MetadataFollows = true
	if d.remaining() > 0 {
		d.u8() // reserved
		p.Warnings = d.u16()
		if d.remaining() > 0 {
			p.MetadataFollows = d.u8() != 0
		}
	}
	if d.err != nil {
		return StmtPrepareOK{}, malformed("COM_STMT_PREPARE_OK")
	}
	return p, nil
}

// AppendStmtPrepareOK appends a COM_STMT_PREPARE_OK packet (the 12-byte
// form, without the optional metadata flag).
func AppendStmtPrepareOK(dst []byte, p StmtPrepareOK) []byte {
	dst = append(dst, HeaderOK)
	dst = AppendUint32(dst, p.StatementID)
	dst = AppendUint16(dst, p.NumColumns)
	dst = AppendUint16(dst, p.NumParams)
	dst = append(dst, 0)
	return AppendUint16(dst, p.Warnings)
}

// hasStatementID reports whether a command carries a statement id in
// bytes 1-4.
func hasStatementID(c Command) bool {
	switch c {
	case ComStmtExecute, ComStmtSendLongData, ComStmtClose, ComStmtReset, ComStmtFetch, ComStmtBulkExecute:
		return true
	}
	return false
}

// StatementID returns the statement id of a COM_STMT_EXECUTE,
// SEND_LONG_DATA, CLOSE, RESET, FETCH (or MariaDB BULK_EXECUTE) packet.
func StatementID(payload []byte) (uint32, error) {
	if len(payload) < 5 || !hasStatementID(Command(payload[0])) {
		return 0, malformed("statement command")
	}
	return binary.LittleEndian.Uint32(payload[1:]), nil
}

// SetStatementID rewrites the statement id of such a packet in place, so
// the proxy can map the id a client knows to the id of the same statement
// on the backend. MariaDB clients may use 0xFFFFFFFF for "the statement
// just prepared" in pipelined prepare+execute; map that too.
func SetStatementID(payload []byte, id uint32) error {
	if len(payload) < 5 || !hasStatementID(Command(payload[0])) {
		return malformed("statement command")
	}
	binary.LittleEndian.PutUint32(payload[1:], id)
	return nil
}

// CursorType holds the flags byte of COM_STMT_EXECUTE.
type CursorType byte

// COM_STMT_EXECUTE flags.
const (
	CursorTypeNoCursor                CursorType = 0x00
	CursorTypeReadOnly                CursorType = 0x01
	CursorTypeForUpdate               CursorType = 0x02
	CursorTypeScrollable              CursorType = 0x04
	CursorTypeParameterCountAvailable CursorType = 0x08 // MySQL 8 query attributes
)

// StmtExecute is the fixed head of a COM_STMT_EXECUTE packet. Parameters
// are left undecoded: decoding them needs the statement's parameter count
// and, for re-executions, the types sent last time.
type StmtExecute struct {
	StatementID    uint32
	Flags          CursorType
	IterationCount uint32 // always 1
	// Params is the rest of the packet: NULL bitmap, new-params-bound
	// flag, types and values. It aliases the payload.
	Params []byte
}

// OpensCursor reports whether the execute asks for a server-side cursor,
// in which case rows are fetched with COM_STMT_FETCH and the statement is
// bound to its backend connection until the cursor is closed.
func (e StmtExecute) OpensCursor() bool {
	return e.Flags&(CursorTypeReadOnly|CursorTypeForUpdate|CursorTypeScrollable) != 0
}

// ParseStmtExecute decodes the head of a COM_STMT_EXECUTE packet.
func ParseStmtExecute(payload []byte) (StmtExecute, error) {
	d := decoder{b: payload}
	var e StmtExecute
	if Command(d.u8()) != ComStmtExecute {
		return e, malformed("COM_STMT_EXECUTE header")
	}
	e.StatementID = d.u32()
	e.Flags = CursorType(d.u8())
	e.IterationCount = d.u32()
	e.Params = d.rest()
	if d.err != nil {
		return StmtExecute{}, malformed("COM_STMT_EXECUTE")
	}
	return e, nil
}

// ParseStmtFetch decodes a COM_STMT_FETCH packet.
func ParseStmtFetch(payload []byte) (stmtID, numRows uint32, err error) {
	d := decoder{b: payload}
	if Command(d.u8()) != ComStmtFetch {
		return 0, 0, malformed("COM_STMT_FETCH header")
	}
	stmtID = d.u32()
	numRows = d.u32()
	if d.err != nil {
		return 0, 0, malformed("COM_STMT_FETCH")
	}
	return stmtID, numRows, nil
}
