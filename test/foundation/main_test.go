// Package foundation holds the end-to-end tests of galeon's foundation:
// the sandbox (Go API and CLI) and `galeon status`, against real MariaDB
// Galera clusters started on loopback.
package foundation

import (
	"os"
	"os/exec"
	"testing"

	"github.com/galeon-db/galeon/internal/testkit"
)

// galeonBin is the galeon binary built once for the CLI tests.
var galeonBin string

func TestMain(m *testing.M) { os.Exit(testkit.RunWithGaleon(m, &galeonBin)) }

// galeon runs the CLI and returns its combined output and error.
func galeon(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(galeonBin, args...).CombinedOutput()
	return string(out), err
}
