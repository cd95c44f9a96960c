package proxy

import (
	"errors"
	"net"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// refuse answers a connection over proxy.max_clients and closes it.
func (p *Proxy) refuse(nc net.Conn) {
	defer nc.Close()
	s := newSession(p, nc)
	s.borrowWriter()
	defer s.returnWriter()
	pc := s.pc
	_ = pc.WriteErr(mysqlproto.NewSQLError(mysqlproto.ErConCountError,
		"Too many connections: galeon has proxy.max_clients = %d clients", p.cfg.Proxy.MaxClients), 0)
	_ = pc.Flush()
}

// comChangeUser re-authenticates the connection as another user and
// resets the session, as COM_CHANGE_USER does on a server. The client
// answers a fresh scramble (auth switch), so no state from the first
// handshake is needed. A failed attempt closes the connection, as MySQL
// does.
func (s *session) comChangeUser(pkt []byte) (bool, error) {
	cu, err := mysqlproto.ParseChangeUser(pkt, s.caps)
	if err != nil {
		s.fail(mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "malformed COM_CHANGE_USER: %v", err))
		return true, err
	}
	scramble, err := mysqlproto.NewScramble()
	if err != nil {
		return true, err
	}
	users := *s.p.users.Load()
	u := users[cu.User]
	cfg := mysqlproto.ServerAuthConfig{PrivateKey: s.p.rsaKey, ClientHost: s.host, Plugin: mysqlproto.NativePasswordPlugin}
	if u != nil {
		cfg.Credential, cfg.Plugin = u.cred, u.plugin
	}
	// An empty plugin name in the response forces a switch to the
	// account's plugin with our new scramble.
	resp := &mysqlproto.HandshakeResponse{Username: cu.User, Capabilities: s.caps | mysqlproto.ClientPluginAuth, AuthPlugin: ""}
	auth := mysqlproto.NewServerAuth(scramble, cfg)
	if err := auth.Run(s.pc, resp); err != nil {
		var se *mysqlproto.SQLError
		if errors.As(err, &se) {
			s.fail(se)
		}
		return true, err
	}
	s.resetState()
	s.user.conns.Add(-1)
	u.conns.Add(1)
	s.user = u
	s.userName.Store(&u.name)
	s.prof = backend.Profile{User: u.backendUser, Password: u.backendPassword, Caps: s.caps & backend.ProfileCaps, Charset: s.prof.Charset}
	if cu.Charset != 0 {
		s.prof.Charset = cu.Charset
	}
	s.setSchema(cu.DB)
	if s.schema == "" {
		s.setSchema(u.defaultSchema)
	}
	return false, s.sendOK()
}
