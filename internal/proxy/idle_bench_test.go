package proxy_test

import (
	"bufio"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
)

// BenchmarkIdleSession measures what an idle, logged-in client session
// holds in the proxy: heap and goroutine stacks per session, after a
// GC (run with -benchtime=2000x; the figure is per session). No backend
// is needed: galeon authenticates clients itself and an idle session
// holds no backend connection. The client side here is a bare socket
// (a few hundred bytes of it count in the heap figure).
func BenchmarkIdleSession(b *testing.B) {
	cfg := config.Defaults()
	cfg.Proxy.Listen = "127.0.0.1:0"
	cfg.Servers = []config.Server{{Name: "node1", Address: "127.0.0.1:1", WriterWeight: 100}}
	cfg.Users = []config.User{{Name: "app", Password: "secret"}}
	_, addr := proxytest.Start(b, &cfg, nil)

	login := func() net.Conn {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		pc := mysqlproto.NewConn(bufio.NewReaderSize(nc, 1024), bufio.NewWriterSize(nc, 1024), 1<<20)
		pkt, err := pc.ReadPacket()
		if err != nil {
			b.Fatal(err)
		}
		hs, err := mysqlproto.ParseHandshake(pkt)
		if err != nil {
			b.Fatal(err)
		}
		auth, err := mysqlproto.NewClientAuth(&mysqlproto.ClientConfig{User: "app", Password: "secret"}, hs)
		if err != nil {
			b.Fatal(err)
		}
		if err := auth.Run(pc); err != nil {
			b.Fatal(err)
		}
		return nc
	}
	login().Close() // warm the proxy's one-off state
	var before, after runtime.MemStats
	settle := func(m *runtime.MemStats) {
		time.Sleep(100 * time.Millisecond) // let the sessions reach their read
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(m)
	}
	settle(&before)
	conns := make([]net.Conn, 0, b.N)
	b.ResetTimer()
	for range b.N {
		conns = append(conns, login())
	}
	b.StopTimer()
	settle(&after)
	if f := os.Getenv("GALEON_IDLE_HEAPPROFILE"); f != "" {
		// The heap as the idle sessions hold it (go tool pprof
		// -sample_index=inuse_space; run with -memprofilerate=1).
		out, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		_ = pprof.WriteHeapProfile(out)
		out.Close()
	}
	n := float64(b.N)
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/n, "heap-B/session")
	b.ReportMetric(float64(int64(after.StackInuse)-int64(before.StackInuse))/n, "stack-B/session")
	b.ReportMetric(float64(int64(after.HeapObjects)-int64(before.HeapObjects))/n, "objects/session")
	for _, c := range conns {
		c.Close()
	}
}
