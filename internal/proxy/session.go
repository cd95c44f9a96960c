package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/memtrim"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/rawio"
	"github.com/galeon-db/galeon/internal/sqlclass"
	"github.com/galeon-db/galeon/internal/topology"
)

type session struct {
	p  *Proxy
	nc net.Conn
	// out is where the session's output buffer writes: the connection,
	// or the compressor over it once the client asked for compression.
	out  io.Writer
	bw   *bufio.Writer
	pc   *mysqlproto.Conn
	id   uint32
	caps mysqlproto.Capability
	user *user
	prof backend.Profile
	host string
	// digestBuf is the scratch buffer statements are normalised into
	// for the digest statistics.
	digestBuf []byte
	// toks holds the tokens of the command's text statement, lexed once
	// for its classification and read again for its digest. Emptied at
	// the end of every command: it refers to the client read buffer.
	toks sqlclass.TokenLog

	schema     string
	vars       map[string]string // name -> SET fragment
	varOrder   []string
	multiStmts bool
	autocommit bool

	// running is the backend connection a statement is running on, for
	// KILL from another session; userName is the logged-in user, read
	// by that other session.
	running  atomic.Pointer[backend.Conn]
	userName atomic.Pointer[string]
	// What SHOW PROCESSLIST shows of the session to the others: its
	// schema, the command it runs (busySince != 0) or since when it is
	// idle (unix nanoseconds).
	db        atomic.Pointer[string]
	command   atomic.Uint32
	busySince atomic.Int64
	idleSince atomic.Int64

	// hold is the node connection the session keeps between statements.
	hold holding
	// readers is the reader the session's reads go to now.
	readers readerRun
	// lastInsertID is what LAST_INSERT_ID() returns in this session.
	lastInsertID uint64
	stmts        map[uint32]*clientStmt
	nextStmt     uint32
	// lastPrepared is the client id of the statement prepared last (0
	// if that prepare failed), for MariaDB's pipelined id -1.
	lastPrepared uint32
	longData     bool
	// infile: the statement being relayed is a LOAD DATA LOCAL this
	// session may stream (see infile.go).
	infile bool

	// cmdSeq is the sequence id the answer to the current command starts
	// at: 1 after a one-packet command, more after a long one.
	cmdSeq uint8

	framer  mysqlproto.ResponseFramer
	scratch []byte
	// rename is set while a statement whose CONNECTION_ID() galeon
	// replaced runs (see columnRename).
	rename columnRename
	// ryw: read-your-writes (ryw.go).
	ryw rywState
	// slot is the session's commit-marker slot, 0 until it needs one
	// (outcome.go); slotRow: its row exists.
	slot    uint64
	slotRow bool
	// markBuf holds the marker's command while it is sent;
	// markedCommit: the answer being relayed is a marked COMMIT's.
	markBuf      []byte
	markedCommit bool
	// inLoop: a statement runs in the statement loop (runStatement),
	// and committing: it is a COMMIT.
	inLoop, committing bool
	// tx is the open transaction as recorded for replay, and sum the
	// checksum of the answer being relayed (replay.go).
	tx  txLog
	sum answerSum
	// wrapBuf holds a wrapped write's answers; wrapDiag is what that
	// write left for the next statement, and afterWrap that of the
	// statement before the current command (wrap.go).
	wrapBuf             []byte
	wrapDiag, afterWrap wrapDiag
	// lastDiag: the last statement's answer had warnings or an error.
	lastDiag bool
}

// writeBuffers lend sessions their 8 KiB output buffer for the duration
// of one command: an idle session holds none, which keeps thousands of
// idle clients cheap (see bench/: RSS per idle connection).
var writeBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 8192) }}

func newSession(p *Proxy, nc net.Conn) *session {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	// Reads and writes go straight to the socket (package rawio); TLS,
	// once negotiated, replaces both.
	rw := rawio.New(nc)
	// Commands are small; a larger packet is read past this buffer.
	br := bufio.NewReaderSize(rw, 2048)
	host, _, _ := net.SplitHostPort(nc.RemoteAddr().String())
	s := &session{
		p: p, nc: nc, out: rw, pc: mysqlproto.NewConn(br, nil, int(p.cfg.Proxy.MaxPacketSize)),
		id: p.nextSessionID(), host: host, vars: map[string]string{}, autocommit: true,
		stmts: map[uint32]*clientStmt{},
	}
	return s
}

// borrowWriter gives the session an output buffer until returnWriter.
func (s *session) borrowWriter() {
	s.bw = writeBuffers.Get().(*bufio.Writer)
	s.bw.Reset(s.out)
	s.pc.SetWriter(s.bw)
}

// returnWriter flushes and gives the output buffer back.
func (s *session) returnWriter() error {
	err := s.bw.Flush()
	s.bw.Reset(nil)
	writeBuffers.Put(s.bw)
	s.bw = nil
	return err
}

// run serves one client connection until it quits or breaks.
func (s *session) run() {
	defer s.nc.Close()
	defer s.releaseAll()
	s.borrowWriter()
	err := s.handshake()
	if rerr := s.returnWriter(); err == nil {
		err = rerr
	}
	if err != nil {
		s.p.log.Debug("handshake", "client", s.host, "err", err)
		return
	}
	s.idleSince.Store(time.Now().UnixNano())
	if s.caps.Has(mysqlproto.ClientCompress) {
		// Compression starts after the OK that ends the connection phase.
		s.out = s.pc.StartCompression(s.out)
	}
	defer func() { s.user.conns.Add(-1) }() // s.user may change (COM_CHANGE_USER)
	defer func() { memtrim.Dropped(s.pc.ReleaseLargeBuffers()) }()
	for {
		s.pc.ResetSeq()
		pkt, err := s.pc.ReadPacket()
		s.cmdSeq = s.pc.Seq()
		s.borrowWriter()
		if err != nil {
			s.protocolError(err)
			_ = s.returnWriter()
			return
		}
		if len(pkt) == 0 {
			s.fail(mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "empty command packet"))
			_ = s.returnWriter()
			return
		}
		s.command.Store(uint32(pkt[0]))
		s.busySince.Store(time.Now().UnixNano())
		quit, err := s.dispatch(pkt)
		s.idleSince.Store(time.Now().UnixNano())
		s.busySince.Store(0)
		if rerr := s.returnWriter(); err == nil {
			err = rerr
		}
		// A large value grew this connection's buffers: let them go
		// now that the command is done (package memtrim).
		memtrim.Dropped(s.pc.ReleaseLargeBuffers())
		if err == nil && s.hold.lost != "" {
			// The node dropped a connection holding this session's
			// transaction or pinned state; the client has the node's
			// error. Ending the session is the honest answer: a direct
			// connection would be gone too.
			s.p.log.Debug("session ended: backend state lost", "conn", s.id, "why", s.hold.lost)
			return
		}
		if err != nil || quit {
			if err != nil && !errors.Is(err, io.EOF) {
				s.p.log.Debug("session ended", "conn", s.id, "err", err)
			}
			return
		}
	}
}

// protocolError answers a broken client stream before closing it.
func (s *session) protocolError(err error) {
	switch {
	case errors.Is(err, mysqlproto.ErrPacketTooLarge):
		s.fail(mysqlproto.NewSQLError(mysqlproto.ErNetPacketTooLarge,
			"Got a packet bigger than 'max_allowed_packet' bytes (galeon proxy.max_packet_size = %d)", s.p.cfg.Proxy.MaxPacketSize))
	case errors.Is(err, mysqlproto.ErrPacketSequence):
		s.fail(mysqlproto.NewSQLError(mysqlproto.ErNetPacketsOutOfOrder, "Got packets out of order"))
	}
}

// fail sends an error and leaves the connection to be closed.
func (s *session) fail(e *mysqlproto.SQLError) {
	_ = s.pc.WriteErr(e, s.caps)
	_ = s.pc.Flush()
}

// sendErr answers the current command with an error; the session goes on.
func (s *session) sendErr(e *mysqlproto.SQLError) error {
	if err := s.pc.WriteErr(e, s.caps); err != nil {
		return err
	}
	return s.pc.Flush()
}

func (s *session) sendOK() error {
	st := mysqlproto.ServerStatusAutocommit
	if !s.autocommit {
		st = 0
	}
	if s.hold.conn != nil && s.hold.kind == holdTx {
		st |= mysqlproto.ServerStatusInTrans
	}
	if err := s.pc.WriteOK(&mysqlproto.OKPacket{Status: st}, s.caps); err != nil {
		return err
	}
	return s.pc.Flush()
}

func (s *session) handshake() error {
	scramble, err := s.p.newScramble()
	if err != nil {
		return err
	}
	version, caps, charset := s.p.frontGreeting()
	hs := mysqlproto.Handshake{
		ServerVersion: version, ConnectionID: s.id, AuthData: scramble,
		Capabilities: caps, Charset: charset, Status: mysqlproto.ServerStatusAutocommit,
		AuthPlugin: mysqlproto.NativePasswordPlugin,
	}
	_ = s.nc.SetDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = s.nc.SetDeadline(time.Time{}) }()
	// Before authentication nothing large is legitimate.
	if err := s.pc.WritePacket(mysqlproto.AppendHandshake(nil, &hs)); err != nil {
		return err
	}
	if err := s.pc.Flush(); err != nil {
		return err
	}
	pkt, err := s.pc.ReadPacket()
	if err != nil {
		s.protocolError(err)
		return err
	}
	secure := false
	if mysqlproto.IsSSLRequest(pkt) {
		if s.p.tls == nil {
			s.fail(mysqlproto.NewSQLError(mysqlproto.ErHandshakeError, "TLS is not configured on this galeon (proxy.tls_cert)"))
			return errors.New("client asked for TLS")
		}
		tc, err := s.pc.StartTLSServer(s.nc, s.p.tls)
		if err != nil {
			return err
		}
		s.p.mu.Lock() // Serve closes sessions through s.nc
		s.nc, s.out = tc, tc
		s.p.mu.Unlock()
		s.bw.Reset(tc)
		secure = true
		if pkt, err = s.pc.ReadPacket(); err != nil {
			return err
		}
	} else if s.p.cfg.Proxy.RequireTLS {
		s.fail(mysqlproto.NewSQLError(mysqlproto.ErAccessDeniedError, "galeon requires TLS (proxy.require_tls): connect with --ssl"))
		return errors.New("TLS required")
	}
	resp, err := mysqlproto.ParseHandshakeResponse(pkt)
	if err != nil {
		s.fail(mysqlproto.NewSQLError(mysqlproto.ErHandshakeError, "Bad handshake: %v", err))
		return err
	}
	if resp.Capabilities&mysqlproto.ClientProtocol41 == 0 {
		s.fail(mysqlproto.NewSQLError(mysqlproto.ErHandshakeError, "galeon needs a client that speaks protocol 4.1"))
		return errors.New("pre-4.1 client")
	}
	if extra := resp.Capabilities & insistCaps &^ caps; extra != 0 {
		s.fail(mysqlproto.NewSQLError(mysqlproto.ErHandshakeError, "%s", unofferedMessage(extra)))
		return errors.New("client asked for a capability galeon did not offer")
	}
	// Other flags a client sets without an offer are dropped, as MySQL
	// and MariaDB servers drop them.
	s.caps = resp.Capabilities & caps
	users := *s.p.users.Load()
	u := users[resp.Username]
	cfg := mysqlproto.ServerAuthConfig{Secure: secure, PrivateKey: s.p.rsaKey, ClientHost: s.host, Plugin: mysqlproto.NativePasswordPlugin}
	if u != nil {
		cfg.Credential, cfg.Plugin = u.cred, u.plugin
	}
	auth := mysqlproto.NewServerAuth(scramble, cfg)
	if err := auth.Run(s.pc, resp); err != nil {
		var se *mysqlproto.SQLError
		if errors.As(err, &se) {
			s.fail(se)
		}
		return err
	}
	if u.maxConns > 0 && u.conns.Load() >= u.maxConns {
		s.fail(mysqlproto.NewSQLError(mysqlproto.ErTooManyUserConnections,
			"User '%s' has exceeded the max_connections resource in galeon (users.max_connections = %d)", u.name, u.maxConns))
		return errors.New("user connection limit")
	}
	u.conns.Add(1)
	s.user = u
	s.userName.Store(&u.name)
	s.prof = backend.Profile{User: u.backendUser, Password: u.backendPassword,
		Caps: s.caps & backend.ProfileCaps, Charset: resp.Charset}
	s.multiStmts = s.caps.Has(mysqlproto.ClientMultiStatements)
	db := string(resp.Database)
	if db == "" {
		db = u.defaultSchema
	}
	if db != "" {
		s.setSchema(db)
		if schemaCheckable(s.p.view.Load().Servers) {
			// Check the schema now, so a bad one fails the connect as
			// it would on MySQL, with the server's own error.
			c, err := s.acquire(s.readHostgroup())
			if err != nil {
				s.fail(asSQLError(err))
				return err
			}
			s.release(c)
		}
	}
	return s.sendOK()
}

// schemaCheckable says whether a login's schema can be checked on a node
// now. Not while no node is online nor in a Primary component (the
// cluster lost quorum, or every node is down): a node outside the
// Primary component accepts the login and answers each statement with
// 1047, and so does galeon — the client is authenticated by galeon's own
// accounts, and its schema is checked by its first statement that
// reaches a node — rather than failing the login after
// proxy.no_backend_timeout, so that a health check that only logs in
// sees a living proxy.
func schemaCheckable(servers []topology.Server) bool {
	for _, srv := range servers {
		if srv.Online || srv.Primary {
			return true
		}
	}
	return false
}

// dispatch runs one command. quit means the client said goodbye.
func (s *session) dispatch(pkt []byte) (quit bool, err error) {
	// The log refers to the client read buffer: emptied when the
	// command ends, it neither outlives the text nor keeps a large
	// buffer from being released.
	defer s.toks.Reset()
	if mysqlproto.Command(pkt[0]) != mysqlproto.ComStmtClose {
		// COM_STMT_CLOSE (no answer) leaves the diagnostics as they
		// are: go-sql-driver sends it after each statement with
		// arguments.
		s.afterWrap, s.wrapDiag = s.wrapDiag, wrapDiag{}
	}
	switch mysqlproto.Command(pkt[0]) {
	case mysqlproto.ComQuery:
		return false, s.comQuery(pkt)
	case mysqlproto.ComPing:
		return false, s.sendOK()
	case mysqlproto.ComQuit:
		return true, nil
	case mysqlproto.ComInitDB:
		return false, s.comInitDB(pkt)
	case mysqlproto.ComStmtPrepare:
		return false, s.comStmtPrepare(pkt)
	case mysqlproto.ComStmtExecute:
		return false, s.comStmtExecute(pkt)
	case mysqlproto.ComStmtBulkExecute:
		return false, s.comStmtBulkExecute(pkt)
	case mysqlproto.ComStmtSendLongData:
		return false, s.comStmtSendLongData(pkt)
	case mysqlproto.ComStmtClose:
		s.comStmtClose(pkt)
		return false, nil
	case mysqlproto.ComStmtReset:
		return false, s.comStmtReset(pkt)
	case mysqlproto.ComStmtFetch:
		return false, s.comStmtFetch(pkt)
	case mysqlproto.ComResetConnection:
		s.resetState()
		return false, s.sendOK()
	case mysqlproto.ComChangeUser:
		return s.comChangeUser(pkt)
	case mysqlproto.ComSetOption:
		return false, s.comSetOption(pkt)
	case mysqlproto.ComFieldList:
		return false, s.comFieldList(pkt)
	case mysqlproto.ComStatistics:
		return false, s.comStatistics()
	case mysqlproto.ComProcessKill:
		if len(pkt) == 5 {
			id := uint32(pkt[1]) | uint32(pkt[2])<<8 | uint32(pkt[3])<<16 | uint32(pkt[4])<<24
			return false, s.comKillStatement(fmt.Sprintf("KILL %d", id))
		}
	}
	return false, s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErUnknownComError,
		"galeon does not support command %s (0x%02x)", mysqlproto.Command(pkt[0]), pkt[0]))
}

// releaseAll gives back every backend resource when the session ends. A
// connection left inside a transaction or with pinned state is reset (or
// closed) by the pool, never handed to another session as it is.
func (s *session) releaseAll() {
	if s.slot != 0 {
		s.p.markers.release(s.slot, s.slotRow)
		s.slot = 0
	}
	if s.hold.conn != nil {
		c := s.hold.conn
		if s.hold.kind == holdTx {
			c.Dirty = true // an open transaction must not reach another session
		}
		s.hold.drop()
		s.release(c)
	}
	s.forgetLast()
}

// resetState is COM_RESET_CONNECTION: the session is as after login.
func (s *session) resetState() {
	if s.hold.conn != nil {
		s.hold.conn.Dirty = true
		c := s.hold.conn
		s.hold.drop()
		s.release(c)
	}
	s.tx.reset()
	s.vars = map[string]string{}
	s.varOrder = s.varOrder[:0]
	s.autocommit = true
	s.forgetLast()
	s.lastInsertID = 0
	s.hold.nextTxn = false
	s.stmts = map[uint32]*clientStmt{}
	s.longData = false
	s.multiStmts = s.caps.Has(mysqlproto.ClientMultiStatements)
}

// setSchema records the session's current schema.
func (s *session) setSchema(db string) {
	s.schema = db
	s.db.Store(&db)
}
