package control_test

import (
	"os"
	"testing"

	"github.com/galeon-db/galeon/internal/testkit"
)

// galeonBin is the galeon CLI, built once for the tests that run it as
// operators and node managers do.
var galeonBin string

func TestMain(m *testing.M) { os.Exit(testkit.RunWithGaleon(m, &galeonBin)) }
