package supervisor

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// workerPRNumber is issue n's worker PR on the fake, 0 before it is open.
func (g *ghFixture) workerPRNumber(n int) int {
	for _, p := range g.srv.PRs() {
		if strings.HasSuffix(p.Head, "-i"+itoa(n)) {
			return p.Number
		}
	}
	return 0
}

// threadOnFirstLook adds a thread to issue n's worker PR (and, as on
// GitHub, the review its comment belongs to) just before the supervisor's
// first look at its reviews, and returns the thread's id once it exists.
func (g *ghFixture) threadOnFirstLook(n int, edit func(id string)) {
	g.srv.BeforeNext(forgetest.RoutePullReviews, func() {
		if pr := g.workerPRNumber(n); pr != 0 {
			id := g.srv.AddThread(pr, "backlog-work/issue-1.md", 1,
				forgetest.ThreadComment{Author: "alice", Body: "THREAD-SAYS: add the fix file"})
			if edit != nil {
				edit(id)
			}
		}
	})
}

// TestWorkerPRUnresolvedThreadGetsOneReworkRoundThenMerges: a line
// comment left without "request changes" sends the issue back once, its
// words fenced in the prompt; still unresolved after the round, it is not
// answered again and the change merges.
func TestWorkerPRUnresolvedThreadGetsOneReworkRoundThenMerges(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "Commented on by a person", "Files: backlog-work/**")
	g.threadOnFirstLook(1, nil)
	res := g.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateMerged || is.Reworks != 1 || is.ReworkFrom != backlog.ReworkPRThread {
		t.Fatalf("#1: %s after %d round(s) from %q; want merged after 1 round of PR threads", is.State, is.Reworks, is.ReworkFrom)
	}
	p := prompt(t, res.Dir, 1, 2)
	if !fencedHas(p, "Unresolved review thread on backlog-work/issue-1.md:1:") || !fencedHas(p, "- alice: THREAD-SAYS: add the fix file") {
		t.Errorf("the rework prompt does not carry the thread, fenced:\n%s", p)
	}
	if c := count(g.events(res.Dir), backlog.EvRework, 1); c != 1 {
		t.Errorf("%d rework rounds, want the thread answered once", c)
	}
	if n := g.srv.Count(forgetest.RouteGraphQL); n < 2 {
		t.Errorf("%d looks at the threads, want one before each merge attempt", n)
	}
	if _, ok := g.originFile(r.Info.WaveBranch, "backlog-work/issue-1-fix.md"); !ok {
		t.Error("the reworked change is not on the wave branch")
	}
}

// TestWorkerPRResolvedOrOutdatedThreadChangesNothing: a thread a person
// resolved, or one on lines that changed since, sends nothing back.
func TestWorkerPRResolvedOrOutdatedThreadChangesNothing(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"resolved", "outdated"} {
		t.Run(how, func(t *testing.T) {
			g := newGHFixture(t)
			g.ghIssue(1, "Commented on by a person", "Files: backlog-work/**")
			g.threadOnFirstLook(1, func(id string) {
				if how == "resolved" {
					g.srv.ResolveThread(id)
				} else {
					g.srv.OutdateThread(id)
				}
			})
			res := g.run(1)
			if res.err != nil || res.ExitCode != exitcode.OK {
				t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
			}
			r, _, _ := runlog.Read(res.Dir)
			if is := r.Issues[1]; is.State != backlog.StateMerged || is.Reworks != 0 || is.Attempts != 1 {
				t.Fatalf("#1: %s after %d round(s), %d attempts; want merged at once", is.State, is.Reworks, is.Attempts)
			}
			if g.srv.Count(forgetest.RouteGraphQL) == 0 {
				t.Error("the threads were never looked at")
			}
		})
	}
}

// TestWorkerPRThreadsOutageIsWaitedOut: GraphQL answering 502 is a
// GitHub outage like any other: the run waits, then the thread is
// answered and the change merges.
func TestWorkerPRThreadsOutageIsWaitedOut(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "Commented on by a person", "Files: backlog-work/**")
	g.threadOnFirstLook(1, nil)
	for range 6 { // past the client's own retries
		g.srv.FailNextOn(forgetest.RouteGraphQL, http.StatusBadGateway)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, fastRetries, 1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0 after the outage", res.ExitCode, res.err)
	}
	if !strings.Contains(res.out, "waiting: "+forge.CauseGitHubServer+" (HTTP 502) since ") {
		t.Errorf("output never said the run waits for GitHub:\n%s", res.out)
	}
	r, _, _ := runlog.Read(res.Dir)
	if is := r.Issues[1]; is.State != backlog.StateMerged || is.Reworks != 1 || is.ReworkFrom != backlog.ReworkPRThread {
		t.Fatalf("#1: %s after %d round(s) from %q; want merged after 1 round of PR threads", is.State, is.Reworks, is.ReworkFrom)
	}
}

// TestWorkerPRThreadsForbiddenIsWarnedOnceAndMerges: a token that may
// not use GraphQL (403) is said once; merges go on without thread checks.
func TestWorkerPRThreadsForbiddenIsWarnedOnceAndMerges(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "One", "Files: backlog-work/**")
	g.ghIssue(2, "Two", "Files: backlog-work/**")
	g.threadOnFirstLook(1, nil)
	for range 10 {
		g.srv.FailNextOn(forgetest.RouteGraphQL, http.StatusForbidden)
	}
	res := g.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	for _, n := range []int{1, 2} {
		if is := r.Issues[n]; is.State != backlog.StateMerged || is.Reworks != 0 {
			t.Errorf("#%d: %s after %d round(s); want merged without a round", n, is.State, is.Reworks)
		}
	}
	if c := strings.Count(res.out, "merging without looking at unresolved threads"); c != 1 {
		t.Errorf("the missing thread access was said %d times, want once:\n%s", c, res.out)
	}
	if n := g.srv.Count(forgetest.RouteGraphQL); n != 1 {
		t.Errorf("%d GraphQL requests, want 1 (not asked again after the 403)", n)
	}
}

// TestWorkerPRThreadPastReworkRoundsParksWithItsWords: with no rounds
// left an unresolved thread parks the issue, the thread as its question.
func TestWorkerPRThreadPastReworkRoundsParksWithItsWords(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.config = strings.Replace(g.config, "backlog:\n", "backlog:\n  reworkRounds: 0\n", 1)
	g.ghIssue(1, "Commented on by a person", "Files: backlog-work/**")
	g.threadOnFirstLook(1, nil)
	res := g.run(1)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateParked || is.Reworks != 0 || !strings.Contains(is.Question, "THREAD-SAYS: add the fix file") {
		t.Fatalf("#1: %s after %d round(s), question %q; want parked with the thread's words", is.State, is.Reworks, is.Question)
	}
}
