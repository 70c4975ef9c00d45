package realrepo

import (
	"os"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }
