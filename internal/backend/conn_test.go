package backend

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/mysqlproto/prototest"
)

// TestReadAnswerAfterATimedOutRead: a ping whose read timed out before
// the answer came (the health check's case of a proxy that ran late) can
// still be read once Unread says the answer is there: an OK is an answer
// and leaves the connection usable; an error packet is the node's error,
// not an answer.
func TestReadAnswerAfterATimedOutRead(t *testing.T) {
	shutdown := mysqlproto.NewSQLError(1053, "Server shutdown in progress")
	for _, c := range []struct {
		name  string
		reply *mysqlproto.SQLError // nil: OK
	}{{"ok", nil}, {"error", shutdown}} {
		t.Run(c.name, func(t *testing.T) {
			got, release := make(chan struct{}, 1), make(chan struct{})
			releaseOnce := sync.OnceFunc(func() { close(release) })
			t.Cleanup(releaseOnce)
			pings := 0
			addr, _ := prototest.FakeNode(t, "pw", 4096, func(pc *mysqlproto.Conn, nc net.Conn, caps mysqlproto.Capability, cmd []byte) bool {
				pings++
				if pings == 1 { // the first ping is answered when the test says so
					got <- struct{}{}
					<-release
					if c.reply != nil {
						_ = pc.WriteErr(c.reply, caps)
						return pc.Flush() == nil
					}
				}
				return prototest.OK(pc, nc, caps, cmd)
			})
			conn, err := Dial(context.Background(), addr, prof, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(300 * time.Millisecond))
			if err := conn.Ping(); err == nil {
				t.Fatal("the ping was answered before its deadline: the fake node did not wait")
			} else if ne := net.Error(nil); !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("ping: %v, want a timeout", err)
			}
			select {
			case <-got:
			case <-time.After(5 * time.Second):
				t.Fatal("the ping never reached the node")
			}
			if conn.Unread() {
				t.Fatal("Unread before the node answered")
			}
			releaseOnce()
			for start := time.Now(); !conn.Unread(); time.Sleep(5 * time.Millisecond) {
				if time.Since(start) > 5*time.Second {
					t.Fatal("the node's answer never showed as unread")
				}
			}
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			err = conn.ReadAnswer()
			if conn.Unread() {
				t.Error("ReadAnswer left the answer unread")
			}
			if c.reply == nil {
				if err != nil {
					t.Fatalf("ReadAnswer: %v, want the OK", err)
				}
				if err := conn.Ping(); err != nil {
					t.Fatalf("the next ping on the connection: %v", err)
				}
				return
			}
			var se *mysqlproto.SQLError
			if !errors.As(err, &se) || se.Code != 1053 {
				t.Fatalf("ReadAnswer: %v, want the node's error 1053", err)
			}
		})
	}
}
