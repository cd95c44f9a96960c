package rawio

import (
	"net"
	"testing"
	"time"
)

func TestQueued(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	if n, ok := Queued(client); !ok || n != 0 {
		t.Fatalf("nothing sent yet: Queued = %d, %v; want 0, true", n, ok)
	}
	if _, err := server.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	// Loopback delivers at once; allow the kernel a moment all the same.
	deadline := time.Now().Add(5 * time.Second)
	n, ok := Queued(client)
	for ok && n < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		n, ok = Queued(client)
	}
	if !ok || n != 5 {
		t.Fatalf("after 5 bytes sent: Queued = %d, %v; want 5, true", n, ok)
	}
	// Deadlines do not matter: an expired one is what the health check
	// has when it asks.
	_ = client.SetReadDeadline(time.Now().Add(-time.Second))
	if n, ok := Queued(client); !ok || n != 5 {
		t.Fatalf("with an expired deadline: Queued = %d, %v; want 5, true", n, ok)
	}
	_ = client.SetReadDeadline(time.Time{})
	buf := make([]byte, 5)
	if _, err := New(client).Read(buf); err != nil {
		t.Fatal(err)
	}
	if n, ok := Queued(client); !ok || n != 0 {
		t.Fatalf("after reading them: Queued = %d, %v; want 0, true", n, ok)
	}

	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, ok := Queued(a); ok {
		t.Error("Queued on a pipe (not TCP) says ok")
	}
}
