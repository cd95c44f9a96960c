//go:build linux

package main

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// epollLoops serves clients with n event loops in the manner of HAProxy's
// threads: each loop is one OS thread with its own epoll set and its own
// listening socket on addr (SO_REUSEPORT: the kernel spreads the
// connections), and a connection stays on the loop that accepted it.
// Sockets are read and written with raw system calls; Go's network poller
// and scheduler take no part once the loops run. It never returns.
func epollLoops(addr string, backends []string, n int) error {
	la, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return err
	}
	bas := make([]*net.TCPAddr, len(backends))
	for i, b := range backends {
		if bas[i], err = net.ResolveTCPAddr("tcp4", b); err != nil {
			return err
		}
	}
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		lfd, err := listenReusePort(la)
		if err != nil {
			return err
		}
		go func(i int) { errs <- loop(lfd, bas, i) }(i)
	}
	return <-errs
}

func sockaddr(a *net.TCPAddr) *syscall.SockaddrInet4 {
	sa := &syscall.SockaddrInet4{Port: a.Port}
	copy(sa.Addr[:], a.IP.To4())
	return sa
}

func listenReusePort(a *net.TCPAddr) (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	const soReusePort = 15 // SO_REUSEPORT
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, soReusePort, 1); err != nil {
		return -1, err
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return -1, err
	}
	if err := syscall.Bind(fd, sockaddr(a)); err != nil {
		return -1, err
	}
	return fd, syscall.Listen(fd, 4096)
}

// loop is one event loop: accept, then copy whatever a socket has to its
// peer. A write that finds the peer's socket full waits for it (poll):
// relayed statements and their results here are far smaller than a
// socket's buffer.
func loop(lfd int, backends []*net.TCPAddr, id int) error {
	runtime.LockOSThread()
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, lfd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(lfd)}); err != nil {
		return err
	}
	peer := map[int32]int{}
	events := make([]syscall.EpollEvent, 256)
	buf := make([]byte, 16<<10)
	next := id
	closePair := func(fd int) {
		p := peer[int32(fd)]
		delete(peer, int32(fd))
		delete(peer, int32(p))
		syscall.Close(fd)
		syscall.Close(p)
	}
	for {
		n, err := syscall.EpollWait(ep, events, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == lfd {
				for {
					cfd, _, err := syscall.Accept4(lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
					if err != nil {
						break // EAGAIN: none left
					}
					syscall.SetsockoptInt(cfd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
					b := backends[next%len(backends)]
					next++
					bfd, err := dial(b)
					if err != nil {
						fmt.Fprintln(os.Stderr, "relayfloor: dial:", err)
						syscall.Close(cfd)
						continue
					}
					peer[int32(cfd)], peer[int32(bfd)] = bfd, cfd
					for _, f := range []int{cfd, bfd} {
						if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, f, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(f)}); err != nil {
							return err
						}
					}
				}
				continue
			}
			p, ok := peer[int32(fd)]
			if !ok {
				continue // closed earlier in this batch
			}
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			if e == syscall.EAGAIN || e == syscall.EINTR {
				continue
			}
			if e != 0 || r == 0 || !writeAll(p, buf[:r]) {
				closePair(fd)
			}
		}
	}
}

// dial connects to a (loopback: at once) and makes the socket non-blocking.
func dial(a *net.TCPAddr) (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := syscall.Connect(fd, sockaddr(a)); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	return fd, syscall.SetNonblock(fd, true)
}

func writeAll(fd int, b []byte) bool {
	for len(b) > 0 {
		w, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			b = b[w:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			pfd := []struct {
				fd             int32
				events, revent int16
			}{{int32(fd), 4 /* POLLOUT */, 0}}
			syscall.Syscall(syscall.SYS_POLL, uintptr(unsafe.Pointer(&pfd[0])), 1, 1000)
		default:
			return false
		}
	}
	return true
}
