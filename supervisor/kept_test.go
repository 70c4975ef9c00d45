package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// A person answers a question on GitHub by hand (a comment, the
// needs-input label removed). The next run that day gets the same wave
// name (the first merged nothing, so its empty wave branch went), so it
// wants the same worker branch, which the first run's kept worktree has
// checked out: it takes that worktree over, the worker's uncommitted work
// included, and merges the issue.
func TestAnsweredByHandTheNextRunTakesOverTheKeptWorktree(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "Pick a store", "Files: a/**\n\nlocal-agent: result=needs-input question=\"Which store?\"")
	first := g.run(1)
	if first.err != nil || first.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run 1: exit %d, %v\n%s", first.ExitCode, first.err, first.out)
	}
	v1, err := Status(context.Background(), first.Dir, nil, false, time.Now())
	if err != nil || len(v1.Issues) != 1 || v1.Issues[0].Worktree == "" {
		t.Fatalf("run 1 status: %+v, %v", v1, err)
	}
	kept := v1.Issues[0].Worktree
	if err := os.WriteFile(filepath.Join(kept, "notes.txt"), []byte("the worker's unsaved notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.srv.AddComment(1, "alice", backlog.AnswerHeading+"\n\nUse sqlite.")
	if err := g.client().RemoveLabel(context.Background(), 1, "needs-input"); err != nil {
		t.Fatal(err)
	}
	second := g.run(1)
	if second.err != nil || second.ExitCode != exitcode.OK {
		t.Fatalf("run 2: exit %d, %v\n%s", second.ExitCode, second.err, second.out)
	}
	if !strings.Contains(second.out, "took over the worktree an earlier run kept") {
		t.Errorf("run 2 does not say it took the kept worktree over:\n%s", second.out)
	}
	v2, err := Status(context.Background(), second.Dir, nil, false, time.Now())
	if err != nil || len(v2.Issues) != 1 || v2.Issues[0].State != backlog.StateMerged {
		t.Fatalf("run 2 status: %+v, %v", v2.Issues, err)
	}
	// The worker went on in the kept worktree: its unsaved notes are in
	// the merge on origin's wave branch.
	if b, ok := gittest.File(g.origin, v2.Run.WaveBranch, "notes.txt"); !ok || !strings.Contains(b, "unsaved notes") {
		t.Errorf("the worker's uncommitted notes did not come along: %q (found %v)", b, ok)
	}
}
