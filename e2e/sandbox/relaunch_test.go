package sandbox

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// plantThenRelaunch runs issue #1 with a worker that, on its first run,
// plants (bash) in its clone and fails; the supervisor snapshots the
// clone and relaunches it there, where the worker runs look (bash,
// printing "LEAK: …" for anything it should not have reached), then
// does its work. It returns the second run's log.
func plantThenRelaunch(t *testing.T, home, plant, look string) string {
	t.Helper()
	r := e2etest.NewBacklogRepo(t)
	script := fmt.Sprintf(`export HOME_OUTSIDE=%s
if [ ! -e .git/planted-once ]; then
  touch .git/planted-once
%s
  echo "planted"; exit 3
fi
%s
`, e2etest.ShellQuote(home), plant, look)
	shellWorkers(t, r, script+work, "0")
	r.Issue(1, "One", "Files: src/i1/**")
	res := runWith(t, r, home, nil, "1")
	first, second := agentLogOf(t, r, 1, 1), agentLogOf(t, r, 1, 2)
	if res.Code != 0 || !strings.Contains(first, "planted") || !strings.Contains(second, "work of #1") && !strings.Contains(second, "backlog-result") {
		t.Fatalf("run: exit %d\n%s\n%s\nfirst run:\n%s\nsecond run:\n%s", res.Code, res.Stdout, res.Stderr, first, second)
	}
	return second
}

// agentLogOf is the log of issue's run attempt.
func agentLogOf(t *testing.T, r *e2etest.BacklogRepo, issue, attempt int) string {
	t.Helper()
	return agentLogGlob(t, r, fmt.Sprintf("i%d-a%d", issue, attempt))
}

// A worker writes the user's secret directories into its clone's
// objects/info/alternates and fails: its relaunch in the same clone gets
// a sandbox that mounts none of them.
func TestAWorkersAlternatesMountNothingInItsNextSandbox(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	home := userHome(t)
	log := plantThenRelaunch(t, home,
		`  printf '%s\n' "$HOME_OUTSIDE/.ssh" "$HOME_OUTSIDE/other-project" >> .git/objects/info/alternates`,
		`for f in .ssh/id_ed25519 other-project/notes.md; do c=$(cat "$HOME_OUTSIDE/$f" 2>/dev/null) && echo "LEAK: $c"; done`)
	if strings.Contains(log, "LEAK") || strings.Contains(log, sshKey) {
		t.Errorf("the relaunched worker read what its alternates named:\n%s", log)
	}
}
