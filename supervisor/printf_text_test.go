package supervisor

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// What `backlog run` prints quotes issue text and git's words: none of it
// reaches the terminal able to move the cursor, set its title or show a
// line in another order than it holds; the questions block keeps its
// lines.
func TestBacklogRunNeverPrintsIssueTextRaw(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	s := &Supervisor{o: Options{Out: &b}}
	s.printf("warning: %s", "docs/backlog/4-\x1b]0;owned\x07.md: bad")
	s.printf("#%d is claimed by %s; skipping it", 3, "run x on host\x1b[2J\u202eevil")
	s.printf("questions for a person:\n%s", strings.Join([]string{"  #1 which\u2066 one?", "  #2 now\r?"}, "\n"))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("printed %d lines, want 5: %q", len(lines), b.String())
	}
	for _, l := range lines {
		if termtext.HasControl(l) {
			t.Errorf("printed %q raw", l)
		}
	}
	for _, want := range []string{`4-\x1b]0;owned\x07.md`, `host\x1b[2J\u202eevil`, `#1 which\u2066 one?`, `#2 now\x0d?`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output %q does not show %q", b.String(), want)
		}
	}
}
