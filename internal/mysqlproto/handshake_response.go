package mysqlproto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
)

// sslRequestLen is the length of an SSLRequest: the fixed head of a
// HandshakeResponse41 with nothing after the filler.
const sslRequestLen = 32

// HandshakeResponse is a client's HandshakeResponse41.
type HandshakeResponse struct {
	// Capabilities are the client's flags. MariaDB extended flags are in
	// bits 32-63 when the client cleared ClientMySQL.
	Capabilities  Capability
	MaxPacketSize uint32
	Charset       byte
	Username      string
	// AuthResponse is the first response of AuthPlugin (for example the
	// 20-byte mysql_native_password scramble).
	AuthResponse []byte
	Database     string // set only with ClientConnectWithDB
	AuthPlugin   string // set only with ClientPluginAuth
	// ConnectAttrs are the client's connection attributes (_client_name,
	// program_name, ...), present with ClientConnectAttrs.
	ConnectAttrs map[string]string
}

// SSLRequest is the short packet a client sends instead of its handshake
// response to ask for TLS. After it the server starts the TLS handshake and
// the client then sends the full HandshakeResponse41 over TLS.
type SSLRequest struct {
	Capabilities  Capability
	MaxPacketSize uint32
	Charset       byte
}

// IsSSLRequest reports whether a client's first packet is an SSLRequest
// rather than a handshake response. Check it before ParseHandshakeResponse.
func IsSSLRequest(payload []byte) bool {
	return len(payload) == sslRequestLen &&
		Capability(binary.LittleEndian.Uint32(payload))&ClientSSL != 0
}

// ParseSSLRequest decodes an SSLRequest (or the fixed head of any
// HandshakeResponse41).
func ParseSSLRequest(payload []byte) (SSLRequest, error) {
	d := decoder{b: payload}
	r := parseResponseHead(&d)
	if d.err != nil {
		return SSLRequest{}, malformed("SSLRequest")
	}
	return r, nil
}

// AppendSSLRequest appends an SSLRequest; ClientSSL is always set.
func AppendSSLRequest(dst []byte, r SSLRequest) []byte {
	r.Capabilities |= ClientSSL
	return appendResponseHead(dst, r)
}

func parseResponseHead(d *decoder) SSLRequest {
	var r SSLRequest
	r.Capabilities = Capability(d.u32())
	r.MaxPacketSize = d.u32()
	r.Charset = d.u8()
	d.take(19)
	ext := d.u32()
	if r.Capabilities&ClientMySQL == 0 {
		r.Capabilities |= Capability(ext) << 32
	}
	return r
}

func appendResponseHead(dst []byte, r SSLRequest) []byte {
	dst = AppendUint32(dst, uint32(r.Capabilities))
	dst = AppendUint32(dst, r.MaxPacketSize)
	dst = append(dst, r.Charset)
	dst = append(dst, make([]byte, 19)...)
	if r.Capabilities&ClientMySQL == 0 {
		return AppendUint32(dst, uint32(r.Capabilities>>32))
	}
	return append(dst, 0, 0, 0, 0)
}

// ParseHandshakeResponse decodes a HandshakeResponse41. It reads the auth
// response in whichever of the three encodings the client's flags select
// (length-encoded, 1-byte length, NUL-terminated). Trailing optional fields
// a client leaves out are treated as empty. Pre-4.1 clients
// (HandshakeResponse320) get ErrUnsupported.
func ParseHandshakeResponse(payload []byte) (*HandshakeResponse, error) {
	if len(payload) >= 4 && Capability(binary.LittleEndian.Uint32(payload))&ClientProtocol41 == 0 {
		return nil, fmt.Errorf("%w: pre-4.1 handshake response", ErrUnsupported)
	}
	d := decoder{b: payload}
	head := parseResponseHead(&d)
	r := &HandshakeResponse{
		Capabilities:  head.Capabilities,
		MaxPacketSize: head.MaxPacketSize,
		Charset:       head.Charset,
	}
	caps := r.Capabilities
	r.Username = string(d.nulString())
	switch {
	case caps&ClientPluginAuthLenencClientData != 0:
		r.AuthResponse = d.lenEncBytes()
	case caps&ClientSecureConnection != 0:
		r.AuthResponse = d.take(int(d.u8()))
	default:
		r.AuthResponse = d.nulString()
	}
	r.AuthResponse = bytes.Clone(r.AuthResponse)
	if caps&ClientConnectWithDB != 0 && d.remaining() > 0 {
		r.Database = string(d.nulStringOrRest())
	}
	if caps&ClientPluginAuth != 0 && d.remaining() > 0 {
		r.AuthPlugin = string(d.nulStringOrRest())
	}
	if caps&ClientConnectAttrs != 0 && d.remaining() > 0 {
		r.ConnectAttrs = parseConnectAttrs(d.lenEncBytes(), &d)
	}
	// Anything after this (the zstd level with
	// CLIENT_ZSTD_COMPRESSION_ALGORITHM) is ignored.
	if d.err != nil {
		return nil, malformed("handshake response")
	}
	return r, nil
}

func parseConnectAttrs(b []byte, outer *decoder) map[string]string {
	if outer.err != nil {
		return nil
	}
	attrs := make(map[string]string)
	d := decoder{b: b}
	for d.remaining() > 0 && d.err == nil {
		k := d.lenEncBytes()
		v := d.lenEncBytes()
		if d.err == nil {
			attrs[string(k)] = string(v)
		}
	}
	if d.err != nil {
		outer.fail()
		return nil
	}
	return attrs
}

// AppendHandshakeResponse appends a HandshakeResponse41. The auth response
// is encoded as r.Capabilities select; an error means it does not fit that
// encoding (over 255 bytes without ClientPluginAuthLenencClientData, or
// containing NUL without ClientSecureConnection). Connection attributes are
// written in sorted key order so the output is deterministic.
func AppendHandshakeResponse(dst []byte, r *HandshakeResponse) ([]byte, error) {
	caps := r.Capabilities
	dst = appendResponseHead(dst, SSLRequest{caps, r.MaxPacketSize, r.Charset})
	dst = AppendNullString(dst, r.Username)
	switch {
	case caps&ClientPluginAuthLenencClientData != 0:
		dst = AppendLenEncBytes(dst, r.AuthResponse)
	case caps&ClientSecureConnection != 0:
		if len(r.AuthResponse) > 255 {
			return dst, fmt.Errorf("mysqlproto: auth response of %d bytes needs CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA", len(r.AuthResponse))
		}
		dst = append(dst, byte(len(r.AuthResponse)))
		dst = append(dst, r.AuthResponse...)
	default:
		if bytes.IndexByte(r.AuthResponse, 0) >= 0 {
			return dst, fmt.Errorf("mysqlproto: auth response contains NUL but CLIENT_SECURE_CONNECTION is off")
		}
		dst = append(dst, r.AuthResponse...)
		dst = append(dst, 0)
	}
	if caps&ClientConnectWithDB != 0 {
		dst = AppendNullString(dst, r.Database)
	}
	if caps&ClientPluginAuth != 0 {
		dst = AppendNullString(dst, r.AuthPlugin)
	}
	if caps&ClientConnectAttrs != 0 {
		keys := make([]string, 0, len(r.ConnectAttrs))
		for k := range r.ConnectAttrs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var attrs []byte
		for _, k := range keys {
			attrs = AppendLenEncString(attrs, k)
			attrs = AppendLenEncString(attrs, r.ConnectAttrs[k])
		}
		dst = AppendLenEncBytes(dst, attrs)
	}
	return dst, nil
}
