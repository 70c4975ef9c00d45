package human

import (
	"os"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/e2etest"
)

func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }
