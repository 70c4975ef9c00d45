package launcher

import (
	"os"
	"path/filepath"
	"testing"
)

// The reason a start failure names is the agent's last line as a terminal
// can show it: colours and cursor moves dropped, a bidi override escaped.
func TestStartFailureReasonNeverPrintsAgentOutputRaw(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{"starting\n\x1b[31mbash: claude: command not found\x1b[0m\r\n", "bash: claude: command not found"},
		{"x\x1b[2Aevil\u202etxt.exe\n[wave] runner exited\n", `xevil\u202etxt.exe`},
		{"", ""},
	} {
		p := filepath.Join(t.TempDir(), "agent.log")
		if err := os.WriteFile(p, []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := lastLogLine(p); got != tc.want {
			t.Errorf("lastLogLine of %q = %q, want %q", tc.log, got, tc.want)
		}
	}
}
