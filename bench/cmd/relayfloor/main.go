// Command relayfloor is the least a Go proxy does per statement: a TCP
// relay that, like HAProxy in TCP mode, gives each client connection one
// backend connection (round-robin over -backends) and copies bytes both
// ways, with galeon's own socket calls (package rawio). It knows nothing
// of MySQL: no parsing, no routing, no pools, no statistics. Run against
// the same nodes as HAProxy and galeon, it tells the cost of relaying in
// Go on this machine (the floor) from the cost of galeon's own work.
// GOMAXPROCS sets its threads, as galeon's proxy.threads does. With
// -epoll N it runs N event loops of its own instead, as HAProxy does (one
// OS thread, one epoll set and one listening socket each), which tells
// what leaving Go's poller and scheduler would be worth.
//
//	relayfloor -listen 127.0.0.1:7453 -backends 127.0.0.1:7502,127.0.0.1:7503
//	relayfloor -epoll 2 -listen 127.0.0.1:7455 -backends 127.0.0.1:7502,127.0.0.1:7503
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/galeon-db/galeon/internal/rawio"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:7453", "address to accept clients on")
	backends := flag.String("backends", "", "comma-separated backend addresses, used round-robin per client connection")
	loops := flag.Int("epoll", 0, "0: goroutines on Go's network poller; N: N event loops of our own, one OS thread and one epoll set each (Linux)")
	flag.Parse()
	addrs := strings.Split(*backends, ",")
	if *backends == "" {
		fmt.Fprintln(os.Stderr, "relayfloor: -backends is required")
		os.Exit(2)
	}
	if *loops > 0 {
		// SIGINT and SIGTERM end the process as their default does.
		fmt.Fprintln(os.Stderr, "relayfloor:", epollLoops(*listen, addrs, *loops))
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relayfloor:", err)
		os.Exit(1)
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var next atomic.Uint64
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			fmt.Fprintln(os.Stderr, "relayfloor: accept:", err)
			return
		}
		addr := addrs[(next.Add(1)-1)%uint64(len(addrs))]
		go relay(c, addr)
	}
}

// relay copies between the client c and a new connection to addr until
// either side closes.
func relay(c net.Conn, addr string) {
	defer c.Close()
	b, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relayfloor: dial:", err)
		return
	}
	defer b.Close()
	done := make(chan struct{})
	go func() {
		copyRaw(rawio.New(c), rawio.New(b))
		b.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	copyRaw(rawio.New(b), rawio.New(c))
	c.(*net.TCPConn).CloseWrite()
	<-done
}

// copyRaw copies what src reads to dst until src ends or either fails.
func copyRaw(dst io.Writer, src io.Reader) {
	buf := make([]byte, 16<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintln(os.Stderr, "relayfloor: read:", err)
			}
			return
		}
	}
}
