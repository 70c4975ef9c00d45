package backlogcli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// `backlog run --detach` checks what `backlog run` checks, queues the run
// as `submit` queues a launch and returns at once with its run id; the
// run goes on without the command, `wait --run-id` gets its exit code and
// every issue merges. A selection naming a missing issue is refused first
// (exit 2), queueing nothing.
func TestADetachedBacklogRunReturnsAtOnceAndMergesEveryIssue(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	r.Issue(2, "Add a farewell", "Files: src/bye/**")
	ctx := e2etest.Context(t)

	bad := r.RunEnv(ctx, "backlog", "run", "--issues", "1,9", "--detach", "--no-dashboard")
	if bad.Code != 2 || !strings.Contains(bad.Stderr, "#9") {
		t.Fatalf("--issues 1,9 --detach: exit %d, want 2 naming #9\n%s%s", bad.Code, bad.Stdout, bad.Stderr)
	}
	res := r.RunEnv(ctx, "backlog", "run", "--issues", "1,2", "--detach", "--json", "--no-dashboard")
	var s struct {
		RunID, Lane, StatePath string
		Queued                 bool
	}
	if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &s) != nil || s.RunID == "" || s.Lane != "main" || s.StatePath == "" {
		t.Fatalf("backlog run --detach --json: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(s.StatePath); err != nil {
		t.Fatalf("the submitted run's state file: %v", err)
	}
	if runs, _ := filepath.Glob(filepath.Join(filepath.Dir(s.StatePath), "*Z-*.json")); len(runs) != 1 {
		t.Fatalf("submitted runs %v, want this one alone (the refused one queued nothing)", runs)
	}
	w := r.RunEnv(context.Background(), "wait", "--run-id", s.RunID, "--timeout-seconds", "120")
	if w.Code != 0 || !strings.Contains(w.Stdout, "state=completed") {
		t.Fatalf("wait --run-id %s: exit %d\n%s%s", s.RunID, w.Code, w.Stdout, w.Stderr)
	}
	for _, is := range r.LiveIssues(t) {
		if is.State != "merged" {
			t.Errorf("#%d is %s after the detached run, want merged", is.Number, is.State)
		}
	}
	if n := len(r.LiveIssues(t)); n != 2 {
		t.Errorf("the run took %d issues, want 2", n)
	}
}
