package backend

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/rawio"
)

// Conn is one authenticated connection to a node.
type Conn struct {
	*mysqlproto.Conn
	nc   net.Conn
	bw   *bufio.Writer
	pool *Pool
	// Caps are the capabilities negotiated with the node.
	Caps mysqlproto.Capability
	// ThreadID is the node's connection id (CONNECTION_ID()).
	ThreadID uint32
	greeting *mysqlproto.Handshake

	// Session state as applied on this connection; the proxy diffs it
	// against a client session's wanted state before use.
	Schema string
	// Vars maps a session variable name to the SET expression applied.
	Vars map[string]string
	// VarOrder keeps the order variables were set in.
	VarOrder []string
	// MultiStatements is the COM_SET_OPTION state.
	MultiStatements bool
	// DirtyReads: wsrep_dirty_reads is ON on this connection (set by the
	// proxy for a stale read, see proxy's dirtyReads).
	DirtyReads bool
	// Stmts caches statements prepared on this connection, by SQL text.
	Stmts map[string]*Stmt
	// Dirty marks state that cannot be diffed (temporary tables, user
	// variables, locks): the pool closes the connection when it comes
	// back (see Pool.Put for why it is not reset).
	Dirty bool
	// LastInsertID is what LAST_INSERT_ID() returns on this connection.
	LastInsertID uint64
	// Diag: a statement left warnings or an error on the connection that
	// may still be there (only a statement that reads a table, or a
	// reset, clears them in MariaDB).
	Diag bool

	gen uint64 // bumped on every Put, under the pool's lock
	// globalsGen is the pool's generation of the node's globals when
	// the connection was opened (see Pool.SetGlobals).
	globalsGen uint64

	lastUsed    time.Time
	broken      bool
	writerEpoch uint64
	// parked: in use, but held by an idle session
	// with no transaction open (Pool.Park).
	parked bool
	fenced atomic.Bool
}

// Stmt is a statement prepared on one backend connection.
type Stmt struct {
	ID         uint32
	NumParams  uint16
	NumColumns uint16
	// TypesSent: the node has the parameter types for this statement
	// (COM_STMT_EXECUTE may omit them once sent).
	TypesSent bool
}

// Server returns the node name this connection belongs to.
func (c *Conn) Server() string { return c.pool.server.Name }

// Pool returns the pool the connection belongs to.
func (c *Conn) Pool() *Pool { return c.pool }

// MarkBroken makes Release close the connection instead of pooling it.
func (c *Conn) MarkBroken() { c.broken = true }

// Broken reports whether the connection was marked broken.
func (c *Conn) Broken() bool { return c.broken }

// SetDeadline bounds the next reads and writes (zero clears it).
func (c *Conn) SetDeadline(t time.Time) { _ = c.nc.SetDeadline(t) }

// Close closes the network connection.
func (c *Conn) Close() error { return c.nc.Close() }

// maxReplyPacket bounds one packet a node sends: MariaDB's largest
// max_allowed_packet (1 GiB), so a row a node may send a client directly
// also passes through galeon.
const maxReplyPacket = 1 << 30

// dial connects and authenticates to addr.
func dial(ctx context.Context, addr string, cfg mysqlproto.ClientConfig, timeout time.Duration) (*Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)
	rw := rawio.New(nc) // socket calls that bypass the scheduler (package rawio)
	br := bufio.NewReaderSize(rw, 16*1024)
	bw := bufio.NewWriterSize(rw, 16*1024)
	pc := mysqlproto.NewConn(br, bw, maxReplyPacket)
	pkt, err := pc.ReadPacket()
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("read handshake: %w", err)
	}
	hs, err := mysqlproto.ParseHandshake(pkt)
	if err != nil {
		nc.Close()
		return nil, err
	}
	auth, err := mysqlproto.NewClientAuth(&cfg, hs)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if err := auth.Run(pc); err != nil {
		nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	if auth.Capabilities().Has(mysqlproto.ClientCompress) {
		bw.Reset(pc.StartCompression(rw))
	}
	hs.AuthData = nil
	return &Conn{
		Conn: pc, nc: nc, bw: bw, Caps: auth.Capabilities(), ThreadID: hs.ConnectionID, greeting: hs,
		Schema: cfg.Database, Vars: map[string]string{}, Stmts: map[string]*Stmt{},
		MultiStatements: auth.Capabilities().Has(mysqlproto.ClientMultiStatements),
	}, nil
}

// SimpleCommand sends a command whose answer is a single OK/ERR packet
// (COM_PING, COM_INIT_DB, COM_RESET_CONNECTION, a SET) and returns the
// server's error, if any, as *mysqlproto.SQLError.
func (c *Conn) SimpleCommand(payload []byte) error {
	c.ResetSeq()
	if err := c.WritePacket(payload); err != nil {
		c.broken = true
		return err
	}
	if err := c.Flush(); err != nil {
		c.broken = true
		return err
	}
	return c.readOKorErr()
}

func (c *Conn) readOKorErr() error {
	pkt, err := c.ReadPacket()
	if err != nil {
		c.broken = true
		return err
	}
	switch {
	case mysqlproto.IsErr(pkt):
		e, perr := mysqlproto.ParseErr(pkt)
		if perr != nil {
			c.broken = true
			return perr
		}
		return e
	case mysqlproto.IsOK(pkt) || mysqlproto.IsEOF(pkt, false):
		return nil
	}
	c.broken = true
	return fmt.Errorf("unexpected reply 0x%02x", pkt[0])
}

// Query runs a statement and discards its result (of any shape), for
// state replay. It returns the server's error if any.
func (c *Conn) Query(q string) error {
	c.ResetSeq()
	if err := c.WritePacket(mysqlproto.AppendComQuery(nil, q, c.Caps)); err != nil {
		c.broken = true
		return err
	}
	if err := c.Flush(); err != nil {
		c.broken = true
		return err
	}
	return c.Discard(mysqlproto.ResponseQuery)
}

// Discard reads and drops one whole response of the given kind.
func (c *Conn) Discard(kind mysqlproto.ResponseKind) error {
	var f mysqlproto.ResponseFramer
	f.Reset(kind, c.Caps)
	for {
		pkt, err := c.ReadPacket()
		if err != nil {
			c.broken = true
			return err
		}
		st, err := f.Next(pkt)
		if err != nil {
			c.broken = true
			return err
		}
		if st == mysqlproto.FrameDone {
			if code, isErr := f.ErrorCode(); isErr {
				e, _ := mysqlproto.ParseErr(pkt)
				if e == nil {
					e = mysqlproto.NewSQLError(code, "error %d", code)
				}
				return e
			}
			return nil
		}
		if st == mysqlproto.FrameLocalInfile {
			c.broken = true
			return fmt.Errorf("unexpected LOCAL INFILE request")
		}
	}
}

// Dial opens a standalone connection (health checks), outside any pool.
func Dial(ctx context.Context, addr string, prof Profile, timeout time.Duration) (*Conn, error) {
	cfg := mysqlproto.ClientConfig{User: prof.User, Password: prof.Password, AllowPublicKeyRetrieval: true}
	return dial(ctx, addr, cfg, timeout)
}

// Greeting is the handshake the node sent when this connection opened
// (without the scramble).
func (c *Conn) Greeting() *mysqlproto.Handshake { return c.greeting }

// Quit says goodbye (COM_QUIT) and closes the connection, so the node
// does not count it as aborted.
func (c *Conn) Quit() {
	c.ResetSeq()
	if c.WritePacket([]byte{byte(mysqlproto.ComQuit)}) == nil {
		_ = c.Flush()
	}
	c.nc.Close()
}

// Ping sends COM_PING.
func (c *Conn) Ping() error { return c.SimpleCommand([]byte{byte(mysqlproto.ComPing)}) }

// Unread reports whether the node sent bytes nobody has read yet: after
// a read that timed out, whether its answer had arrived by the time the
// proxy noticed the timeout (the proxy ran late, the node did not).
func (c *Conn) Unread() bool {
	n, ok := rawio.Queued(c.nc)
	return ok && n > 0
}

// ReadAnswer reads the OK or error answer to a command (such as Ping)
// whose first read timed out before any of the answer arrived (Unread
// tells that it is there now).
func (c *Conn) ReadAnswer() error { return c.readOKorErr() }

// WriterEpoch is the epoch the connection was taken as writer in, or 0.
func (c *Conn) WriterEpoch() uint64 { return c.writerEpoch }

// Fence closes the connection under whoever uses it: a statement running
// on it fails at once. Used when the writer role moves away from its node.
func (c *Conn) Fence() {
	c.fenced.Store(true)
	c.nc.Close()
}

// Fenced reports whether Fence closed the connection.
func (c *Conn) Fenced() bool { return c.fenced.Load() }
