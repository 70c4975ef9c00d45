package supervisor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// fixVerify is a backlog.verify that fails, saying why, until the change
// carries the file the simulated worker commits in a rework round.
const fixVerify = `  verify: [sh, -c, "echo 'VERIFY-SAYS: backlog-work/issue-1-fix.md is missing'; test -e backlog-work/issue-1-fix.md"]` + "\n"

// prompt is the prompt of issue n's worker at attempt a.
func prompt(t *testing.T, dir string, n, a int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "runs", "i"+itoa(n)+"-a"+itoa(a), "prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fencedHas reports whether want is on a line inside a fenced block.
func fencedHas(text, want string) bool {
	in := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in
		case in && strings.Contains(l, want):
			return true
		}
	}
	return false
}

func count(evs []backlog.Event, kind string, n int) int {
	c := 0
	for _, ev := range evs {
		if ev.Kind == kind && ev.Issue == n {
			c++
		}
	}
	return c
}

func TestVerifyFailureIsReworkedOnceWithItsLogAndMerges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = baseConfig + fixVerify
	f.issue(1, "Needs a fix", "Files: backlog-work/**")
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateMerged || is.Reworks != 1 || is.ReworkFrom != backlog.ReworkVerify || is.Attempts != 2 {
		t.Fatalf("#1: %s after %d rework round(s) from %q, %d attempts; want merged after 1 round of verify, 2 attempts",
			is.State, is.Reworks, is.ReworkFrom, is.Attempts)
	}
	if p := prompt(t, res.Dir, 1, 2); !fencedHas(p, "VERIFY-SAYS: backlog-work/issue-1-fix.md is missing") || !strings.Contains(p, "## Rework requested (round 1 of 2)") {
		t.Errorf("the rework prompt does not carry the verify log's tail in a fenced block:\n%s", p)
	}
	if p := prompt(t, res.Dir, 1, 1); strings.Contains(p, "Rework requested") {
		t.Error("the first attempt's prompt asks for a rework")
	}
	if _, ok := f.originFile(r.Info.WaveBranch, "backlog-work/issue-1-fix.md"); !ok {
		t.Error("the reworked change is not on the wave branch")
	}
	body, _ := os.ReadFile(filepath.Join(res.Dir, runlog.FinalPRFile))
	if !strings.Contains(string(body), "merged after 1 rework round") {
		t.Errorf("the final PR body does not say the rework round:\n%s", body)
	}
	v, err := Status(t.Context(), res.Dir, nil, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(v)
	if !strings.Contains(string(js), `"reworks":1,"reworkFrom":"verify","feedback":"The verify step failed`) {
		t.Errorf("status --json lacks the rework round: %s", js)
	}
	if len(v.Issues) != 1 || backlog.ReworkLabel(v.Issues[0].Reworks, v.Issues[0].ReworkFrom) != "1 rework round (verify)" {
		t.Errorf("status does not show the rework round: %+v", v.Issues)
	}
}

// A review configured for a kubernetes lane is refused before anything
// is claimed: reviewers run in a local scratch directory, which a pod
// does not have, so every reviewed issue would fail after its work was done.
func TestAReviewOnAKubernetesLaneIsRefusedBeforeAnyClaim(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = baseConfig + "  review:\n    executor:\n      id: local\n"
	f.issue(1, "Reviewed", "Files: backlog-work/**")
	o := f.options(t.Context(), &syncBuffer{}, 1)
	lane := *o.Lane
	lane.Runtime.Backend = config.BackendKubernetes
	o.Lane = &lane
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "backlog.review") || !strings.Contains(err.Error(), "kubernetes") {
		t.Fatalf("run on a kubernetes lane with a review: %v; want an error naming backlog.review and kubernetes", err)
	}
	if refs := gittest.Run(t, f.origin, "for-each-ref", "refs/heads/wave-claims"); strings.TrimSpace(refs) != "" {
		t.Errorf("claims were made before the refusal:\n%s", refs)
	}
}

func TestReviewerFailVerdictIsReworkedThenMerges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = baseConfig + "  review:\n    executor:\n      id: local\n"
	f.issue(1, "Reviewed", "Files: backlog-work/**\n\nlocal-agent: review=unfixed")
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if is := r.Issues[1]; is.State != backlog.StateMerged || is.Reworks != 1 || is.ReworkFrom != backlog.ReworkReview {
		t.Fatalf("#1: %s after %d round(s) from %q; want merged after 1 round of review", is.State, is.Reworks, is.ReworkFrom)
	}
	if p := prompt(t, res.Dir, 1, 2); !fencedHas(p, "lacks backlog-work/issue-1-fix.md") {
		t.Errorf("the rework prompt does not carry the reviewer's verdict, fenced:\n%s", p)
	}
}

func TestPastReworkRoundsTheIssueParksWithTheFeedbackAsItsQuestion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = baseConfig + "  reworkRounds: 1\n  verify: [sh, -c, \"echo NEVER-PASSES; exit 1\"]\n"
	f.issue(1, "Never passes", "Files: backlog-work/**")
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateParked || is.Reworks != 1 || is.Attempts != 2 {
		t.Fatalf("#1: %s after %d round(s), %d attempts; want parked after 1 round, 2 attempts", is.State, is.Reworks, is.Attempts)
	}
	if !strings.Contains(is.Question, "NEVER-PASSES") || !strings.Contains(is.Detail, "after 1 rework round") {
		t.Errorf("parked with question %q detail %q; want the verify log's tail as the question", is.Question, is.Detail)
	}
}

func TestWorkerPRChangesRequestedGetsAReworkRound(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "Reviewed by a person", "Files: backlog-work/**")
	// A collaborator asks for changes as soon as the worker PR is open,
	// before the supervisor's first look at its reviews.
	g.srv.BeforeNext(forgetest.RoutePullReviews, func() {
		for _, p := range g.srv.PRs() {
			if strings.HasSuffix(p.Head, "-i1") {
				g.srv.AddReview(p.Number, "alice", "", "CHANGES_REQUESTED", "Please add the fix file.",
					forgetest.ReviewComment{Path: "backlog-work/issue-1.md", Line: 1, Body: "NEEDS-A-FIX here"})
			}
		}
	})
	res := g.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateMerged || is.Reworks != 1 || is.ReworkFrom != backlog.ReworkPRReview {
		t.Fatalf("#1: %s after %d round(s) from %q; want merged after 1 round of PR review", is.State, is.Reworks, is.ReworkFrom)
	}
	p := prompt(t, res.Dir, 1, 2)
	if !fencedHas(p, "Please add the fix file.") || !fencedHas(p, "on backlog-work/issue-1.md:1: NEEDS-A-FIX here") {
		t.Errorf("the rework prompt does not carry the review and its comment, fenced:\n%s", p)
	}
	if _, ok := g.originFile(r.Info.WaveBranch, "backlog-work/issue-1-fix.md"); !ok {
		t.Error("the reworked change is not on the wave branch")
	}
}

// startCut is the real runs, except that starting the worker's attempt
// at cuts the supervisor dead (its context cancelled, nothing started):
// a kill -9 right after the worker's start was recorded.
type startCut struct {
	Runs
	at     int
	cancel context.CancelFunc
}

func (s startCut) Start(ctx context.Context, ps []*runtime.Payload) error {
	if len(ps) == 1 && ps[0].Attempt == s.at && strings.HasPrefix(ps[0].SessionName, SessionPrefix) {
		s.cancel()
		return ctx.Err()
	}
	return s.Runs.Start(ctx, ps)
}

// TestKillBetweenReworkRoundAndRelaunchCountsOneRound: a supervisor
// killed after recording a rework round, before its relaunch was
// recorded (or before its session started), resumes into that round: the
// worker is relaunched once with the feedback and the round counts once.
func TestKillBetweenReworkRoundAndRelaunchCountsOneRound(t *testing.T) {
	t.Parallel()
	for _, keepStart := range []bool{false, true} {
		name := map[bool]string{false: "before the relaunch is recorded", true: "before its session starts"}[keepStart]
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.config = baseConfig + fixVerify
			f.issue(1, "Needs a fix", "Files: backlog-work/**")
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			first := f.runCtx(ctx, func(o *Options) { o.Runs = startCut{Runs: o.Runs, at: 2, cancel: cancel} }, 1)
			if first.err == nil {
				t.Fatal("the first life was not cut at the relaunch")
			}
			evs := f.events(first.Dir)
			last := evs[len(evs)-1]
			if last.Kind != backlog.EvWorkerStarted || last.Attempt != 2 || evs[len(evs)-2].Kind != backlog.EvRework {
				t.Fatalf("the first life ended with %+v, want the rework round then the relaunch recorded", last)
			}
			if !keepStart {
				path := filepath.Join(first.Dir, runlog.EventsFile)
				b, _ := os.ReadFile(path)
				lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
				if err := os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res := f.run(1)
			if res.err != nil || res.ExitCode != exitcode.OK || !res.Resumed {
				t.Fatalf("resume: exit %d resumed %v, %v", res.ExitCode, res.Resumed, res.err)
			}
			r, _, _ := runlog.Read(res.Dir)
			if is := r.Issues[1]; is.State != backlog.StateMerged || is.Reworks != 1 {
				t.Fatalf("#1: %s after %d rework round(s), want merged after 1", is.State, is.Reworks)
			}
			if c := count(f.events(res.Dir), backlog.EvRework, 1); c != 1 {
				t.Errorf("%d rework events, want 1", c)
			}
			if p := prompt(t, res.Dir, 1, r.Issues[1].Attempts); !fencedHas(p, "VERIFY-SAYS") {
				t.Errorf("the resumed relaunch lost the feedback:\n%s", p)
			}
		})
	}
}
