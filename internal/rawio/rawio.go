// Package rawio reads and writes TCP sockets with raw system calls.
//
// Why: a proxy makes two to four socket calls per statement, and through
// net.Conn each one enters the Go scheduler's system-call path, which
// wakes the runtime's monitor thread whenever it sleeps (it sleeps
// whenever the proxy's single scheduler thread waits for the network)
// and lets it hand the thread's work to another thread when a call takes
// a while. Profiled under a large-result load, that machinery and the
// context switches it causes (nanosleep, futex, thread wake-ups) cost
// more than the reads and writes themselves. The sockets are
// non-blocking, so a read or write returns at once (EAGAIN when it would
// block); made as raw system calls (syscall.RawSyscall), they do not go
// through the scheduler at all. Waiting still does: on EAGAIN the call
// returns to syscall.RawConn, which parks the goroutine in the runtime's
// network poller as net.Conn would, deadlines included.
package rawio

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// Conn reads and writes a TCP connection with raw system calls. It is
// an io.ReadWriter for buffered readers and writers; everything else
// (deadlines, Close, addresses) stays with the net.Conn it came from. A
// Conn serves one reader and one writer goroutine at a time.
type Conn struct {
	rc syscall.RawConn
	// The callbacks and their arguments live in the Conn, so a call
	// allocates nothing.
	rbuf, wbuf      []byte
	rn, wn          int
	rerr, werr      error
	readFn, writeFn func(fd uintptr) bool
}

// New returns a raw reader and writer for c, or c itself (as an
// io.ReadWriter) when it is not a TCP connection (TLS, pipes in tests).
func New(c net.Conn) io.ReadWriter {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	r := &Conn{rc: rc}
	r.readFn = r.read
	r.writeFn = r.write
	return r
}

// Read reads what the socket holds, up to len(p), waiting for data if
// there is none.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rbuf, c.rn, c.rerr = p, 0, nil
	if err := c.rc.Read(c.readFn); err != nil {
		c.rbuf = nil
		return 0, err
	}
	c.rbuf = nil
	return c.rn, c.rerr
}

func (c *Conn) read(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.rbuf[0])), uintptr(len(c.rbuf)))
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return false // the poller waits for data and calls again
		case e != 0:
			c.rerr = e
		case n == 0:
			c.rerr = io.EOF
		default:
			c.rn = int(n)
		}
		return true
	}
}

// Write writes all of p, waiting for room in the socket as needed.
func (c *Conn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.wbuf, c.wn, c.werr = p, 0, nil
	err := c.rc.Write(c.writeFn)
	n := c.wn
	c.wbuf = nil
	if err == nil {
		err = c.werr
	}
	return n, err
}

func (c *Conn) write(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		rest := c.wbuf[c.wn:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return false // the poller waits for room and calls again
		case e != 0:
			c.werr = e
			return true
		}
		c.wn += int(n)
	}
	return true
}

// Queued is how many bytes the socket of c has received that nobody has
// read yet (FIONREAD), without waiting and whatever c's deadlines; ok is
// false when c is not a TCP connection or the call failed.
func Queued(c net.Conn) (n int, ok bool) {
	tc, isTCP := c.(*net.TCPConn)
	if !isTCP {
		return 0, false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var e syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		var v int32
		_, _, e = syscall.RawSyscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&v)))
		n = int(v)
	}); err != nil || e != 0 {
		return 0, false
	}
	return n, true
}
