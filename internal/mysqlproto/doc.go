// Package mysqlproto implements the MySQL client/server wire protocol as a
// proxy needs it: packet framing, the connection-phase handshake and
// authentication (both as a server facing clients and as a client logging
// into MySQL 8 / MariaDB backends), the generic OK/ERR/EOF packets, and
// just enough of the command phase to relay responses safely.
//
// # Why a relay codec and not a driver
//
// A proxy spends almost all of its time moving packets from one socket to
// another. Decoding rows into values only to encode them again would cost
// allocations and CPU for nothing, so this package never decodes result
// rows. Instead:
//
//   - [PacketReader] and [PacketWriter] reuse their buffers: reading or
//     writing a packet allocates nothing once the buffer has grown to the
//     working size. Slices returned by a reader stay valid only until the
//     next read.
//   - [PacketReader.ReadRawPacket] hands back header and payload bytes as
//     they arrived so they can be written to the other side unchanged with
//     [PacketWriter.WriteRaw].
//   - [ResponseFramer] looks at only the first bytes of each packet to know
//     where a response ends and what the server status is afterwards (in a
//     transaction? more results coming? cursor open?), which is all the
//     proxy needs for routing and connection reuse.
//
// Parsers work on a payload slice, check every bound and return
// [ErrMalformedPacket] on short or inconsistent input; no input makes them
// panic (the fuzz tests hold them to that). Encoders are append-style
// (AppendXxx(dst, ...) []byte) so callers control allocation.
//
// Compression (CLIENT_COMPRESS) is not supported; a proxy must not
// advertise it.
package mysqlproto
