package labsize

import (
	"os"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

// TestMain removes the svclab that roottest.SharedBinary built for these
// tests once they end.
func TestMain(m *testing.M) { os.Exit(roottest.Main(m)) }
