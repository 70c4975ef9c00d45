package supervisor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// TestAMergeWhoseVerifyCannotStartIsParkedWhileTheOtherMerges: worker 1
// commits a file whose name (over 300 bytes) git's checks accept and no
// filesystem here can hold, so the scratch checkout of its merge, where
// backlog.verify would run, can never be made. Its verify is tried again
// after a growing backoff (never at once), and after maxNoVerdict tries
// its issue is parked with a question naming the issue, the worker's
// commit and the error; worker 2 is merged and the run ends. The name
// spells a full disk: git quotes it, and the run never waits it out.
func TestAMergeWhoseVerifyCannotStartIsParkedWhileTheOtherMerges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "A name too long", "Files: a/**")
	f.issue(2, "Two", "Files: b/**")
	f.shellWorkers(`if [ "$WAVE_ISSUE_NUMBER" = 1 ]; then
  name="no space left on device $(printf 'x%.0s' $(seq 300))"
  blob=$(echo w | git hash-object -w --stdin)
  tree=$( (git ls-tree HEAD; printf '100644 blob %s\t%s\n' "$blob" "$name") | git mktree)
  git update-ref HEAD "$(gitc commit-tree "$tree" -p HEAD -m 'a name no filesystem holds')"
else
  mkdir -p b && echo w > b/w && gitc add b && gitc commit -q -m work
fi
echo "[backlog-result] state=done detail=shell worker"
`)
	f.config = strings.Replace(f.config, "\nbacklog:\n", "\nbacklog:\n  verify: [sh, -c, 'true']\n", 1)
	var waits []int // the tries Backoff was asked for, on the loop
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := f.runCtx(ctx, func(o *Options) {
		o.Backoff = func(try int) time.Duration {
			waits = append(waits, try)
			return min(10*time.Millisecond<<try, time.Second)
		}
	}, 1, 2)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43 (#1 parked)", res.ExitCode, res.err)
	}
	r, _, err := runlog.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if is := r.Issues[2]; is.State != backlog.StateMerged {
		t.Errorf("#2: %s (%s), want merged", is.State, is.Detail)
	}
	is := r.Issues[1]
	tip := strings.TrimSpace(git(t, f.root, "rev-parse", "refs/heads/"+is.Branch))
	if is.State != backlog.StateParked {
		t.Fatalf("#1: %s (%s), want parked", is.State, is.Detail)
	}
	for _, want := range []string{"#1", tip, "File name too long", fmt.Sprintf("%d times", maxNoVerdict)} {
		if !strings.Contains(is.Question, want) {
			t.Errorf("#1's question lacks %q:\n%s", want, is.Question)
		}
	}
	// Every try after the first waited its backoff, growing: the tries
	// of #1's verify are spaced out, never one after the other at once.
	want := make([]int, max(len(waits), maxNoVerdict-1))
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(waits, want) {
		t.Errorf("backoffs asked for %v, want %v (one per retry of #1's verify)", waits, want)
	}
	if strings.Contains(res.out, "waiting:") {
		t.Errorf("the worker's file name was taken for a full disk:\n%s", res.out)
	}
	if n := strings.Count(res.out, "#1: its verify at"); n < maxNoVerdict {
		t.Errorf("%d tries of #1's verify reported, want %d:\n%s", n, maxNoVerdict, res.out)
	}
}
