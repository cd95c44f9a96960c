// Package foundation holds the end-to-end tests of galeon's foundation:
// the sandbox (Go API and CLI) and `galeon status`, against real MariaDB
// Galera clusters started on loopback.
package foundation

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// galeonBin is the galeon binary built once for the CLI tests.
var galeonBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "galeon-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	galeonBin = filepath.Join(dir, "galeon")
	build := exec.Command("go", "build", "-o", galeonBin, "github.com/galeon-db/galeon/cmd/galeon")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build galeon:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// galeon runs the CLI and returns its combined output and error.
func galeon(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(galeonBin, args...).CombinedOutput()
	return string(out), err
}
