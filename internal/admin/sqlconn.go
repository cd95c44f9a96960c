package admin

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	mp "github.com/galeon-db/galeon/internal/mysqlproto"
)

// serverCaps is what the SQL endpoint advertises: mysqlproto's defaults
// without LOCAL INFILE (nothing to load), session tracking (no session
// state), plus ClientSSL when TLS is configured.
const serverCaps = mp.DefaultServerCapabilities &^ (mp.ClientLocalFiles | mp.ClientSessionTrack)

// sqlConn is one admin SQL session.
type sqlConn struct {
	srv  *Server
	nc   net.Conn // the TLS connection after an upgrade
	c    *mp.Conn
	caps mp.Capability // negotiated
	sess session
	log  *slog.Logger
	buf  []byte
}

// serveSQL runs one connection from handshake to close. Every error
// ends here; none reaches the server.
func (s *Server) serveSQL(nc net.Conn) {
	s.eng.connected.Add(1)
	defer s.eng.connected.Add(-1)
	host, _, _ := net.SplitHostPort(nc.RemoteAddr().String())
	sc := &sqlConn{
		srv:  s,
		nc:   nc,
		c:    mp.NewConn(bufio.NewReaderSize(nc, 16<<10), bufio.NewWriterSize(nc, 16<<10), maxPacketSize),
		sess: session{host: host, connID: s.nextConnID.Add(1)},
	}
	sc.log = s.log.With("conn", sc.sess.connID, "remote", nc.RemoteAddr().String())
	if err := sc.handshake(); err != nil {
		sc.log.Debug("admin handshake ended", "err", err)
		return
	}
	sc.log.Debug("admin session opened", "user", sc.sess.user)
	err := sc.commands()
	sc.log.Debug("admin session closed", "err", err)
}

// handshake runs the connection phase: greeting, optional TLS upgrade,
// handshake response and authentication of the admin user.
func (sc *sqlConn) handshake() error {
	srv := sc.srv
	_ = sc.nc.SetDeadline(time.Now().Add(srv.handshakeTimeout))
	scramble, err := mp.NewScramble()
	if err != nil {
		return err
	}
	caps := serverCaps
	if srv.cfg.TLS != nil {
		caps |= mp.ClientSSL
	}
	sc.buf = mp.AppendHandshake(sc.buf[:0], &mp.Handshake{
		ServerVersion: srv.eng.version,
		ConnectionID:  sc.sess.connID,
		AuthData:      scramble,
		Capabilities:  caps,
		Charset:       charsetUTF8MB4,
		Status:        mp.ServerStatusAutocommit,
		AuthPlugin:    mp.NativePasswordPlugin,
	})
	if err := sc.c.WritePacket(sc.buf); err != nil {
		return err
	}
	if err := sc.c.Flush(); err != nil {
		return err
	}
	pkt, err := sc.c.ReadPacket()
	if err != nil {
		return sc.readFailed(err, mp.ClientProtocol41)
	}
	secure := false
	if mp.IsSSLRequest(pkt) {
		if srv.cfg.TLS == nil {
			return sc.fatal(mp.NewSQLError(mp.ErHandshakeError, "Bad handshake: TLS is not configured on the admin interface"), mp.ClientProtocol41)
		}
		tc, err := sc.c.StartTLSServer(sc.nc, srv.cfg.TLS)
		if err != nil {
			return fmt.Errorf("TLS handshake: %w", err)
		}
		sc.nc, secure = tc, true
		if pkt, err = sc.c.ReadPacket(); err != nil {
			return sc.readFailed(err, mp.ClientProtocol41)
		}
	}
	resp, err := mp.ParseHandshakeResponse(pkt)
	if err != nil {
		return sc.fatal(mp.NewSQLError(mp.ErHandshakeError, "Bad handshake"), mp.ClientProtocol41)
	}
	sc.caps = caps & resp.Capabilities
	if sc.caps&mp.ClientProtocol41 == 0 {
		return sc.fatal(mp.NewSQLError(mp.ErHandshakeError, "Bad handshake: protocol 4.1 required"), mp.ClientProtocol41)
	}

	// Verify with the plugin the client chose if it is one we support, so
	// clients that insist on caching_sha2_password need no switch;
	// anything else is switched to mysql_native_password.
	plugin := mp.NativePasswordPlugin
	if resp.AuthPlugin == mp.CachingSHA2PasswordPlugin {
		plugin = mp.CachingSHA2PasswordPlugin
	}
	cred := srv.decoy
	if resp.Username == srv.cfg.User {
		cred = srv.cred
	}
	auth := mp.NewServerAuth(scramble, mp.ServerAuthConfig{
		Plugin:     plugin,
		Credential: cred,
		Secure:     secure,
		ClientHost: sc.sess.host,
	})
	if err := auth.Run(sc.c, resp); err != nil {
		var se *mp.SQLError
		if errors.As(err, &se) {
			sc.log.Warn("admin login failed", "user", resp.Username, "err", se.Message)
			return sc.fatal(se, sc.caps)
		}
		return err
	}
	sc.sess.user = resp.Username
	sc.sess.db = resp.Database
	if err := sc.c.WriteOK(&mp.OKPacket{Status: mp.ServerStatusAutocommit}, sc.caps); err != nil {
		return err
	}
	if err := sc.c.Flush(); err != nil {
		return err
	}
	return sc.nc.SetDeadline(time.Time{})
}

// fatal sends e and reports it as the reason to close the connection.
func (sc *sqlConn) fatal(e *mp.SQLError, caps mp.Capability) error {
	if err := sc.c.WriteErr(e, caps); err == nil {
		_ = sc.c.Flush()
	}
	return e
}

// readFailed handles a failed packet read. The reader leaves the stream
// out of step after an oversized or misnumbered packet, so the client
// gets an explanation and the connection is closed.
func (sc *sqlConn) readFailed(err error, caps mp.Capability) error {
	switch {
	case errors.Is(err, mp.ErrPacketTooLarge):
		return sc.fatal(mp.NewSQLError(mp.ErNetPacketTooLarge,
			"Got a packet bigger than 'max_allowed_packet' bytes (%d on the admin interface)", maxPacketSize), caps)
	case errors.Is(err, mp.ErrPacketSequence):
		return sc.fatal(mp.NewSQLError(mp.ErNetPacketsOutOfOrder, "Got packets out of order"), caps)
	}
	return err
}
