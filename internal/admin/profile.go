package admin

import (
	"bytes"
	"net/http"
	"runtime/pprof"
	"strconv"
	"time"
)

// GET /api/profile?seconds=N: a CPU profile of the whole process (the
// proxy's sessions, its monitor, this server) over the next N seconds
// (1 to maxProfileSeconds, default defaultProfileSeconds), in pprof's
// format: `go tool pprof -top galeon FILE`. It is how bench/run.sh
// breaks galeon's CPU per statement down, and how an operator sees where
// a busy proxy's CPU goes without restarting it (--cpuprofile profiles
// from start to exit). The profiler interrupts the process 100 times a
// second while it runs; one profile at a time. GET only: a HEAD would
// profile for nothing.

const (
	defaultProfileSeconds = 10
	maxProfileSeconds     = 60
)

func (s *Server) serveProfile(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeJSONError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here: GET /api/profile?seconds=N")
		return
	}
	secs := defaultProfileSeconds
	if v := r.URL.Query().Get("seconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxProfileSeconds {
			writeJSONError(w, http.StatusBadRequest, "seconds="+strconv.Quote(v)+": give a whole number of seconds from 1 to "+strconv.Itoa(maxProfileSeconds))
			return
		}
		secs = n
	}
	// The server's write timeout counts from the request: the answer
	// comes after the profile's seconds.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Duration(secs)*time.Second + 30*time.Second))
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		writeJSONError(w, http.StatusConflict, "a CPU profile is already being taken in this process (another /api/profile request, or galeon started with --cpuprofile): try again when it ends")
		return
	}
	t := time.NewTimer(time.Duration(secs) * time.Second)
	select {
	case <-t.C:
	case <-r.Context().Done():
		// The caller left, or the server is stopping: no profile, and a
		// caller still there is told so.
		t.Stop()
		pprof.StopCPUProfile()
		writeJSONError(w, http.StatusServiceUnavailable, "profile interrupted: the request ended or the proxy is stopping")
		return
	}
	pprof.StopCPUProfile()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="galeon-cpu.pprof"`)
	_, _ = w.Write(buf.Bytes())
}
