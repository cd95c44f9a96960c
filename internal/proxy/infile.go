package proxy

import (
	"fmt"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// LOAD DATA LOCAL INFILE through galeon: the node asks for the file (a
// 0xFB packet naming it), galeon passes the request to the client, and
// streams the client's file packets to the node as they come, up to the
// empty packet that ends the file; the node then answers as usual. galeon
// never reads a file itself. A load galeon must not carry (the user or
// the client does not allow it, or the file grows past
// proxy.max_local_infile_size) is aborted by closing the node's
// connection, so the node rolls the statement back: nothing of it is
// committed, and the client gets an error that says why.

// localInfileRefusal says why this session may not LOAD DATA LOCAL, or "".
func (s *session) localInfileRefusal() string {
	switch {
	case !s.caps.Has(mysqlproto.ClientLocalFiles):
		return "LOAD DATA LOCAL INFILE is disabled by your client: enable its local-infile option"
	case !s.user.localInfile:
		return fmt.Sprintf("galeon: LOAD DATA LOCAL INFILE is turned off for user '%s' (users.local_infile = false)", s.user.name)
	case s.p.cfg.Proxy.MaxLocalInfileSize == 0:
		return "galeon: LOAD DATA LOCAL INFILE is turned off on this proxy (proxy.max_local_infile_size = 0)"
	}
	return ""
}

// errInfileAborted ends a LOCAL INFILE exchange galeon refused or cut
// short: the client has its error, and the node's connection is closed
// (so the node rolled the statement back).
const errInfileAborted = protoErr("LOAD DATA LOCAL aborted")

// relayInfile handles the node's file request req (raw packet).
func (s *session) relayInfile(c *backend.Conn, req []byte) error {
	if !s.infile {
		// The node asked for a file although galeon did not see a LOAD
		// DATA LOCAL it allows (hidden in a multi-statement, or refused):
		// never let a node read a client's files unasked.
		c.MarkBroken()
		c.Close()
		why := s.localInfileRefusal()
		if why == "" {
			why = "galeon: LOAD DATA LOCAL INFILE is only relayed as a statement of its own, not inside a multi-statement or procedure"
		}
		return s.abortInfile(mysqlproto.NewSQLError(mysqlproto.ErNotAllowedCommand, "%s", why), false)
	}
	if err := s.pc.WriteRaw(req); err != nil {
		c.MarkBroken()
		return err
	}
	if err := s.pc.Flush(); err != nil {
		c.MarkBroken()
		return err
	}
	// The file is read into the client read buffer, over the
	// statement's text: no token of it may be read back after this.
	s.toks.Reset()
	limit := int64(s.p.cfg.Proxy.MaxLocalInfileSize)
	var total int64
	for {
		pkt, err := s.pc.ReadPacket()
		if err != nil {
			// The client went away mid-file: abort the load on the node.
			c.MarkBroken()
			c.Close()
			return err
		}
		total += int64(len(pkt))
		if total > limit {
			c.MarkBroken()
			c.Close()
			return s.abortInfile(mysqlproto.NewSQLError(mysqlproto.ErNetPacketTooLarge,
				"galeon: the LOAD DATA LOCAL file is larger than proxy.max_local_infile_size (%d bytes); the load was aborted and nothing of it was committed: split the file or raise the limit", limit), true)
		}
		if err := c.WritePacket(pkt); err != nil {
			c.MarkBroken()
			return &backendErr{c.Server(), err}
		}
		if len(pkt) == 0 {
			break
		}
	}
	if err := c.Flush(); err != nil {
		c.MarkBroken()
		return &backendErr{c.Server(), err}
	}
	return nil
}

// abortInfile answers the client with e after a refused or cut-short
// file. drain: the client is sending the file; its remaining packets are
// read and dropped first, up to the empty one that ends it, so that the
// connection stays in step.
func (s *session) abortInfile(e *mysqlproto.SQLError, drain bool) error {
	for drain {
		pkt, err := s.pc.ReadPacket()
		if err != nil {
			return err
		}
		drain = len(pkt) > 0
	}
	if err := s.pc.WriteErr(e, s.caps); err != nil {
		return err
	}
	if err := s.pc.Flush(); err != nil {
		return err
	}
	return errInfileAborted
}
