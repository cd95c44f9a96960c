package mysqlproto

// SessionTrackType identifies one entry of an OK packet's session state
// information (CLIENT_SESSION_TRACK). A proxy uses these to follow the
// current schema, session variables and transaction state of a backend
// connection without issuing queries.
type SessionTrackType byte

// Session state change types (enum_session_state_type).
const (
	SessionTrackSystemVariables            SessionTrackType = 0 // name and value of a changed system variable
	SessionTrackSchema                     SessionTrackType = 1 // new current schema
	SessionTrackStateChange                SessionTrackType = 2 // "1" if any session state changed
	SessionTrackGTIDs                      SessionTrackType = 3
	SessionTrackTransactionCharacteristics SessionTrackType = 4
	SessionTrackTransactionState           SessionTrackType = 5
)

// NextSessionStateChange splits the first entry off an OK packet's
// SessionState block. Loop until rest is empty:
//
//	for b := ok.SessionState; len(b) > 0; {
//		typ, data, rest, err := NextSessionStateChange(b)
//		...
//		b = rest
//	}
//
// data aliases b; decode it with ParseSessionTrackVariable or
// ParseSessionTrackString according to typ.
func NextSessionStateChange(b []byte) (typ SessionTrackType, data, rest []byte, err error) {
	d := decoder{b: b}
	typ = SessionTrackType(d.u8())
	data = d.lenEncBytes()
	if d.err != nil {
		return 0, nil, nil, malformed("session state change")
	}
	return typ, data, d.rest(), nil
}

// ParseSessionTrackVariable decodes the data of a SessionTrackSystemVariables
// entry.
func ParseSessionTrackVariable(data []byte) (name, value []byte, err error) {
	d := decoder{b: data}
	name = d.lenEncBytes()
	value = d.lenEncBytes()
	if d.err != nil {
		return nil, nil, malformed("session system variable")
	}
	return name, value, nil
}

// ParseSessionTrackString decodes the data of a schema, state-change,
// transaction-state or transaction-characteristics entry: a single
// length-encoded string.
func ParseSessionTrackString(data []byte) ([]byte, error) {
	d := decoder{b: data}
	s := d.lenEncBytes()
	if d.err != nil {
		return nil, malformed("session state string")
	}
	return s, nil
}

// AppendSessionStateChange appends one entry (type and length-encoded data)
// to a SessionState block.
func AppendSessionStateChange(dst []byte, typ SessionTrackType, data []byte) []byte {
	dst = append(dst, byte(typ))
	return AppendLenEncBytes(dst, data)
}
