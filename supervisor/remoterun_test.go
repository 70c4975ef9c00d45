package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor/checkout"
)

// TestWorkersInTheirOwnClonesMergeAndASalvageRestoresTheSnapshot runs a
// backlog whose workers each clone origin over HTTP into a directory of
// their own and push back, as pods do (a checkout.Remote), with the real
// runner on the fixture's tmux: the supervisor sees their work only
// through origin. Issue 2's first attempt leaves an uncommitted file and
// fails; its runner's snapshot carries the file to the relaunch, which
// commits it, and it is merged.
func TestWorkersInTheirOwnClonesMergeAndASalvageRestoresTheSnapshot(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "One", "Files: a/**")
	f.issue(2, "Two", "Files: b/**\n\nlocal-agent: dirty=b/wip.md fail-attempts=1")
	f.issue(3, "Three", "Files: c/**")
	git(t, f.root, "add", "-A")
	git(t, f.root, "commit", "-q", "-m", "issues")
	git(t, f.root, "push", "-q", "origin", "main")
	url := gittest.ServeHTTP(t, f.origin, "", "")
	clones := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := &syncBuffer{}
	s, err := New(f.options(ctx, out, 1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	o := s.remoteOptions()
	o.URL = url
	o.Dir = func(n int) string { return filepath.Join(clones, "i"+strconv.Itoa(n)) }
	s.co = checkout.NewRemote(o)
	res, err := s.Run(ctx)
	t.Logf("supervisor output:\n%s", out.String())
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: exit %d, %v", res.ExitCode, err)
	}
	r, _, err := runlog.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	wave := r.Info.WaveBranch
	for n, file := range map[int]string{1: "backlog-work/issue-1.md", 2: "b/wip.md", 3: "backlog-work/issue-3.md"} {
		if r.Issues[n].State != backlog.StateMerged {
			t.Errorf("#%d is %s, want merged", n, r.Issues[n].State)
		}
		if _, ok := f.originFile(wave, file); !ok {
			t.Errorf("#%d: %s is not on the wave branch", n, file)
		}
		if r.Issues[n].Worktree != "" {
			t.Errorf("#%d records a worktree %s on this machine", n, r.Issues[n].Worktree)
		}
	}
	if is := r.Issues[2]; is.Salvages != 1 {
		t.Errorf("#2: %d salvages, want 1", is.Salvages)
	}
	a2 := filepath.Join(res.Dir, "runs", "i2-a2")
	if p, _ := os.ReadFile(filepath.Join(a2, "prompt.md")); !strings.Contains(string(p), "refs/wave/salvage/2/a1") {
		t.Errorf("the relaunch's prompt does not name the snapshot:\n%s", p)
	}
	if l, _ := os.ReadFile(filepath.Join(a2, "agent.log")); !strings.Contains(string(l), "found earlier uncommitted work in b/wip.md") {
		t.Errorf("the relaunch did not find the restored file; its log:\n%s", l)
	}
	if left := git(t, f.origin, "for-each-ref", "refs/wave/salvage", "refs/wave/runs"); left != "" {
		t.Errorf("left on origin after the merges:\n%s", left)
	}
}

// startRemoteRun supervises issues in the background with workers in
// clones of their own that push to origin over HTTP, as pods do.
func (f *fixture) startRemoteRun(t *testing.T, issues ...int) *openRun {
	t.Helper()
	url := gittest.ServeHTTP(t, f.origin, "", "")
	clones := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	out := &syncBuffer{}
	s, err := New(f.options(ctx, out, issues...))
	if err != nil {
		t.Fatal(err)
	}
	o := s.remoteOptions()
	o.URL = url
	o.Dir = func(n int) string { return filepath.Join(clones, "i"+strconv.Itoa(n)) }
	s.co = checkout.NewRemote(o)
	or := &openRun{done: make(chan result, 1)}
	go func() {
		res, err := s.Run(ctx)
		or.done <- result{Result: res, out: out.String(), err: err}
	}()
	or.dir = func() string { d, _ := runlog.OpenDir(f.layout().StateDir); return d }
	return or
}

// TestAPodsCandidateMadeAnOrphanBeforeItsMergeIsParkedWhileTheOtherMerges:
// issue 1's worker finishes while issue 2's merge is being verified; then
// its candidate on origin is replaced by an orphan commit (what a pod
// holding origin's credential can push at any time). When the train
// takes issue 1 up, the fetch of its candidate refuses the orphan: the
// issue is parked saying so, and issue 2 is merged and the run ends (an
// orphan merged nowhere, rather than the run ending on "no merge base").
func TestAPodsCandidateMadeAnOrphanBeforeItsMergeIsParkedWhileTheOtherMerges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	gate := t.TempDir()
	f.issue(1, "One", "Files: a/**\n\nlocal-agent: wait="+filepath.Join(gate, "ready1"))
	f.issue(2, "Two", "Files: b/**")
	f.verifyGate(`if [ "$WAVE_ISSUE_NUMBER" = 2 ]; then
  touch ` + shellQuote(gate) + `/ready1
  i=0; until [ -e ` + shellQuote(gate) + `/go ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 1; sleep 0.05; done
fi
`)
	f.config = strings.Replace(f.config, "\nbacklog:\n", "\nbacklog:\n  verifyParallel: 1\n", 1)
	git(t, f.root, "add", "-A")
	git(t, f.root, "commit", "-q", "-m", "issues")
	git(t, f.root, "push", "-q", "origin", "main")
	run := f.startRemoteRun(t, 1, 2)
	run.until(t, f, "#1 ready to merge", func(ev backlog.Event) bool { return ev.Kind == backlog.EvReady && ev.Issue == 1 })
	r, _, err := runlog.Read(run.dir())
	if err != nil {
		t.Fatal(err)
	}
	orphan := gittest.CommitOn(t, f.origin, "forged", "", map[string]string{"a/x.txt": "no history\n"})
	git(t, f.origin, "update-ref", "refs/wave/candidates/"+r.Issues[1].Branch, orphan)
	git(t, f.origin, "update-ref", "-d", "refs/heads/forged")
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := <-run.done
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43 (#1 parked)\n%s", res.ExitCode, res.err, res.out)
	}
	r, _, err = runlog.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if is := r.Issues[1]; is.State != backlog.StateParked || !strings.Contains(is.Detail, "shares no history") {
		t.Errorf("#1: %s (%s), want parked: its candidate shares no history", is.State, is.Detail)
	}
	if is := r.Issues[2]; is.State != backlog.StateMerged {
		t.Errorf("#2: %s (%s), want merged", is.State, is.Detail)
	}
	if gittest.IsAncestor(f.origin, orphan, r.Info.WaveBranch) {
		t.Error("the orphan reached the wave branch")
	}
}
