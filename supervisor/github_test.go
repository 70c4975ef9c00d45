package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

func TestGitHubRunClaimsLabelsCommentsWorkerPRsAndOneFinalPR(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "Add the parser", "Files: src/parser/**")
	g.ghIssue(2, "Add the printer", "Files: src/printer/**")
	g.ghIssue(3, "Write docs", "Files: docs/guide.md")
	res := g.run(1, 2, 3)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	wave := r.Info.WaveBranch
	ms := g.srv.Mutations()
	for n := 1; n <= 3; n++ {
		if !g.hasLabel(n, "wave:claimed") {
			t.Errorf("#%d lacks the claim label", n)
		}
		if c := g.markers(n, "claim"); c != 1 {
			t.Errorf("#%d has %d claim comments, want 1", n, c)
		}
		// The visible claim comes after the ref won, label then comment,
		// and both before the issue's worker PR.
		label := mutationIndex(ms, 0, forgetest.RouteLabelsAdd, n)
		comment := mutationIndex(ms, 0, forgetest.RouteCommentCreate, n)
		if label < 0 || comment < label {
			t.Errorf("#%d: label at %d, claim comment at %d; want the label first", n, label, comment)
		}
		is := r.Issues[n]
		var pr *int
		for _, p := range g.prsInto(wave) {
			if p.Head == is.Branch {
				if pr != nil {
					t.Errorf("#%d has two worker PRs", n)
				}
				pr = &p.Number
				if !strings.Contains(p.Title+p.Body, "#"+itoa(n)) {
					t.Errorf("worker PR %d does not reference #%d: %q / %q", p.Number, n, p.Title, p.Body)
				}
			}
		}
		if pr == nil {
			t.Errorf("#%d: no worker PR %s → %s", n, is.Branch, wave)
			continue
		}
		if is.PR == nil || is.PR.Number != *pr {
			t.Errorf("#%d: run records worker PR %+v, GitHub has #%d", n, is.PR, *pr)
		}
		create := mutationIndex(ms, 0, forgetest.RoutePullCreate, *pr)
		if create < comment {
			t.Errorf("#%d: worker PR created (%d) before the claim comment (%d)", n, create, comment)
		}
	}
	if prs := g.prsInto(wave); len(prs) != 3 {
		t.Errorf("%d PRs into the wave branch, want 3 (one per worker)", len(prs))
	}
	finals := g.prsInto("main")
	if len(finals) != 1 {
		t.Fatalf("%d PRs into main, want exactly one: %+v", len(finals), finals)
	}
	final := finals[0]
	if final.Head != wave || final.State != "open" {
		t.Errorf("final PR %s → %s (%s), want %s → main, open", final.Head, final.Base, final.State, wave)
	}
	if got := closesRefs(final.Body); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("final PR closes %v, want [1 2 3]:\n%s", got, final.Body)
	}
	for n := 1; n <= 3; n++ {
		if p := r.Issues[n].PR; p == nil || !strings.Contains(final.Body, p.URL) {
			t.Errorf("final PR body does not link #%d's worker PR %+v", n, p)
		}
	}
	// The final PR is the last PR written, after every worker PR.
	lastCreate := -1
	for i, m := range ms {
		if m.Route == forgetest.RoutePullCreate {
			lastCreate = i
		}
	}
	if lastCreate < 0 || ms[lastCreate].Issue != final.Number {
		t.Errorf("the last PR created is not the final PR: %+v", ms)
	}
	if r.FinalPR == nil || r.FinalPR.Number != final.Number {
		t.Errorf("run records final PR %+v, GitHub has #%d", r.FinalPR, final.Number)
	}
	// A clean run writes nothing else: no label removed, no issue edited,
	// no PR edited, no other comment.
	for _, route := range []string{forgetest.RouteLabelRemove, forgetest.RouteIssueEdit, forgetest.RoutePullEdit} {
		if m := g.srv.MutationsOn(route); len(m) > 0 {
			t.Errorf("unexpected %s writes: %+v", route, m)
		}
	}
	if c := len(g.srv.MutationsOn(forgetest.RouteCommentCreate)); c != 3 {
		t.Errorf("%d comments posted, want 3 (one claim comment each)", c)
	}
	g.noDuplicateWrites(t)
	t.Logf("GitHub calls: %d for 3 issues (%.1f per issue); by route: %s", g.srv.Total(), float64(g.srv.Total())/3, g.routeCounts())
}

// onNth runs fn just before the k-th request (from now) to route
// reaches the fake, and arms drop (apply it, lose the response) for that
// k-th request when drop is set.
func (g *ghFixture) onNth(route string, k int, drop bool, fn func()) {
	seen := 0
	var hook func()
	hook = func() {
		seen++
		if drop && seen == k-1 {
			// Faults are taken before hooks run: one armed now is the next's.
			g.srv.DropResponseNext(route)
		}
		if seen == k {
			fn()
			return
		}
		g.srv.BeforeNext(route, hook)
	}
	if drop && k == 1 {
		g.srv.DropResponseNext(route)
	}
	g.srv.BeforeNext(route, hook)
}

func TestFinalPRCreatedOnce(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	for n := 1; n <= 3; n++ {
		g.ghIssue(n, "Issue "+itoa(n), "Files: p"+itoa(n)+"/**")
	}
	// The fourth PR is the final one (one worker PR per issue before it):
	// GitHub creates it, the response is lost, and the supervisor dies
	// right there, its intent recorded and not done.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g.onNth(forgetest.RoutePullCreate, 4, true, cancel)
	first := g.runCtx(ctx, nil, 1, 2, 3)
	if first.err == nil {
		t.Fatalf("the first life should have died at the final PR; it ended %+v", first.Result)
	}
	if prs := g.prsInto("main"); len(prs) != 1 {
		t.Fatalf("after the crash: %d PRs into main, want the one GitHub created", len(prs))
	}
	r, _, _ := runlog.Read(first.Dir)
	if _, pending := r.Intents["pr-final"]; !pending || r.FinalPR != nil {
		t.Fatalf("want the final PR intent recorded and not done; intents %v, final %+v", r.Intents, r.FinalPR)
	}
	second := g.run(1, 2, 3)
	if second.err != nil || second.ExitCode != exitcode.OK || !second.Resumed {
		t.Fatalf("resume: exit %d resumed %v, %v", second.ExitCode, second.Resumed, second.err)
	}
	finals := g.prsInto("main")
	if len(finals) != 1 || len(g.mutationsInto("main")) != 1 {
		t.Fatalf("%d PRs into main (%d creates), want exactly one", len(finals), len(g.mutationsInto("main")))
	}
	r, _, _ = runlog.Read(second.Dir)
	if r.FinalPR == nil || r.FinalPR.Number != finals[0].Number || !r.Finished {
		t.Errorf("run records final PR %+v (finished %v), GitHub has #%d", r.FinalPR, r.Finished, finals[0].Number)
	}
	if got := closesRefs(finals[0].Body); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("final PR closes %v, want [1 2 3]", got)
	}

	// A later run over the same issues finds them claimed by this one
	// (merged, not yet closed): nothing to do, no second final PR.
	third := g.run(1, 2, 3)
	if third.err != nil || third.Resumed {
		t.Fatalf("third run: resumed %v, %v", third.Resumed, third.err)
	}
	r3, _, _ := runlog.Read(third.Dir)
	for n := 1; n <= 3; n++ {
		if lostClaim(r3, n) == "" {
			t.Errorf("third run did not leave #%d as claimed by the first", n)
		}
	}
	if prs := g.prsInto("main"); len(prs) != 1 {
		t.Errorf("%d PRs into main after a third run, want 1", len(prs))
	}
	g.noDuplicateWrites(t)
}

// TestFinalPRRedoneFromAnyPointOfTheEnd replays the end of a finished run
// from each event of it onwards, as if the supervisor had been killed right
// after that event while GitHub and origin already hold everything the
// full run did: the resume must finish without a second PR, comment or
// label.
func TestFinalPRRedoneFromAnyPointOfTheEnd(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "One", "Files: a/**")
	g.ghIssue(2, "Two", "Files: b/**\n\nlocal-agent: result=needs-input question=\"Which one?\"")
	res := g.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	path := filepath.Join(res.Dir, runlog.EventsFile)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(full), "\n"), "\n")
	if !strings.Contains(lines[len(lines)-1], `"kind":"run_finished"`) {
		t.Fatalf("the log does not end with run_finished: %s", lines[len(lines)-1])
	}
	// From the last merge (before it, the full run's cleanup has already
	// removed worktrees a replay would need) to the line before
	// run_finished: the base merge, the final PR, releases, renewals.
	from := -1
	for i, l := range lines {
		if strings.Contains(l, `"kind":"merged"`) {
			from = i
		}
	}
	if from < 0 {
		t.Fatal("no merged event in the log")
	}
	creates, comments := len(g.srv.MutationsOn(forgetest.RoutePullCreate)), len(g.srv.MutationsOn(forgetest.RouteCommentCreate))
	for cut := from; cut < len(lines)-1; cut++ {
		if err := os.WriteFile(path, []byte(strings.Join(lines[:cut+1], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		again := g.run(1, 2)
		if again.err != nil || again.ExitCode != exitcode.NeedsHuman || !again.Resumed {
			t.Fatalf("cut after line %d: exit %d resumed %v, %v", cut+1, again.ExitCode, again.Resumed, again.err)
		}
		if c := len(g.srv.MutationsOn(forgetest.RoutePullCreate)); c != creates {
			t.Errorf("cut after line %d: %d PR creates, want %d", cut+1, c, creates)
		}
		if c := len(g.srv.MutationsOn(forgetest.RouteCommentCreate)); c != comments {
			t.Errorf("cut after line %d: %d comments, want %d", cut+1, c, comments)
		}
	}
	finals := g.prsInto("main")
	if len(finals) != 1 || !slices.Equal(closesRefs(finals[0].Body), []int{1}) {
		t.Errorf("final PRs %+v, want one closing #1 only", finals)
	}
	if !g.hasLabel(1, "wave:claimed") || g.hasLabel(2, "wave:claimed") {
		t.Errorf("want merged #1 still labelled claimed and needs-input #2 released")
	}
	g.noDuplicateWrites(t)
}

// mutationsInto are the PR creations with base base.
func (g *ghFixture) mutationsInto(base string) []forgetest.Mutation {
	var out []forgetest.Mutation
	for _, m := range g.srv.MutationsOn(forgetest.RoutePullCreate) {
		if strings.HasSuffix(m.Summary, "→ "+base) {
			out = append(out, m)
		}
	}
	return out
}

func TestFinalPRClosesOnlyMerged(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "Fixes #8 as well", "Files: a/**")
	g.ghIssue(2, "Closes #7 and fixes #8", "Files: b/**\n\nlocal-agent: fail-attempts=9")
	g.ghIssue(3, "Resolves #7", "Files: c/**\n\nlocal-agent: result=needs-input question=\"closes #8?\"")
	g.ghIssue(7, "Bystander seven", "Files: d/**")
	g.ghIssue(8, "Bystander eight", "Files: e/**")
	res := g.run(1, 2, 3)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43 (a parked and a needs-input issue)", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if r.Issues[1].State != backlog.StateMerged || r.Issues[2].State != backlog.StateParked || r.Issues[3].State != backlog.StateNeedsInput {
		t.Fatalf("states #1 %s #2 %s #3 %s; want merged, parked, needs-input", r.Issues[1].State, r.Issues[2].State, r.Issues[3].State)
	}
	finals := g.prsInto("main")
	if len(finals) != 1 {
		t.Fatalf("%d final PRs, want 1", len(finals))
	}
	body := finals[0].Body
	if got := closesRefs(body); !slices.Equal(got, []int{1}) {
		t.Errorf("the final PR would close %v, want only the merged #1:\n%s", got, body)
	}
	for _, want := range []string{"#2", "#3", "closes #8?"} {
		if !strings.Contains(body, want) {
			t.Errorf("final PR body does not mention %q (parked and needs-input issues are listed):\n%s", want, body)
		}
	}
	// GitHub also closes issues named by keywords in the commit messages
	// that reach the default branch: the wave branch's own commits must
	// not carry an issue's title into one.
	log := git(t, g.root, "log", "--format=%B", "origin/"+r.Info.WaveBranch, "^origin/main")
	if got := closesRefs(log); len(got) > 0 {
		t.Errorf("wave branch commit messages would close %v:\n%s", got, log)
	}
	// The worker PR's title carries the issue title, cleaned; its body
	// closes nothing.
	for _, p := range g.prsInto(r.Info.WaveBranch) {
		if got := closesRefs(p.Body); len(got) > 0 {
			t.Errorf("worker PR %d body would close %v", p.Number, got)
		}
	}
	for _, n := range []int{7, 8} {
		if is, _ := g.srv.Issue(n); is.State != "open" || len(is.Comments) > 0 || len(is.Labels) > 0 {
			t.Errorf("bystander #%d was touched: %+v", n, is)
		}
	}
}

func TestDroppedCommentResponseNotReposted(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	for n := 1; n <= 3; n++ {
		g.ghIssue(n, "Issue "+itoa(n), "Files: p"+itoa(n)+"/**")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The first claim comment: applied, response lost; the same
	// supervisor goes on. The second: applied, and the supervisor dies.
	// (The issues start at once, so which issue's comment is which is
	// theirs to decide.)
	g.srv.DropResponseNext(forgetest.RouteCommentCreate)
	g.onNth(forgetest.RouteCommentCreate, 2, true, cancel)
	first := g.runCtx(ctx, nil, 1, 2, 3)
	if first.err == nil {
		t.Fatalf("the first life should have died at the second comment; it ended %+v", first.Result)
	}
	commented := 0
	for n := 1; n <= 3; n++ {
		c := g.markers(n, "claim")
		if c > 1 {
			t.Errorf("#%d has %d claim comments after a lost response and a crash, want at most 1", n, c)
		}
		commented += c
	}
	if applied := len(g.srv.MutationsOn(forgetest.RouteCommentCreate)); commented != applied || applied < 2 {
		t.Fatalf("%d claim comments on the issues, %d applied by GitHub; want the same, at least 2", commented, applied)
	}
	second := g.run(1, 2, 3)
	if second.err != nil || second.ExitCode != exitcode.OK || !second.Resumed {
		t.Fatalf("resume: exit %d resumed %v, %v", second.ExitCode, second.Resumed, second.err)
	}
	for n := 1; n <= 3; n++ {
		if c := g.markers(n, "claim"); c != 1 {
			t.Errorf("#%d has %d claim comments, want 1", n, c)
		}
	}
	if c := len(g.srv.MutationsOn(forgetest.RouteCommentCreate)); c != 3 {
		t.Errorf("GitHub applied %d comment creations, want 3", c)
	}
	g.noDuplicateWrites(t)
}

func TestRateLimitAndServerErrorsMidRun(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	for n := 1; n <= 3; n++ {
		g.ghIssue(n, "Issue "+itoa(n), "Files: p"+itoa(n)+"/**")
	}
	reset := time.Now().Add(10 * time.Minute)
	// Mid-run, each fault on the request right after a write of the run:
	// a primary limit after the first label, a secondary limit (Retry-After)
	// after the first comment, a run of 5xx after the first worker PR;
	// and a label write that GitHub applies but answers with a 502.
	g.onNth(forgetest.RouteLabelsAdd, 1, false, func() { g.srv.RateLimitNext(true, reset) })
	g.onNth(forgetest.RouteCommentCreate, 1, false, func() { g.srv.SecondaryLimitNext(429, 42*time.Second) })
	g.onNth(forgetest.RoutePullCreate, 1, false, func() { g.srv.Fail5xx(2) })
	g.onNth(forgetest.RouteLabelsAdd, 2, false, func() { g.srv.ApplyThenFailNext(forgetest.RouteLabelsAdd, 502) })
	g.srv.FailNextOn(forgetest.RoutePullCreate, 503) // the first worker PR: refused, not applied
	res := g.run(1, 2, 3)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	if res.Tally.Merged != 3 {
		t.Errorf("tally %+v, want 3 merged", res.Tally)
	}
	waits := g.srv.Sleeper().Waits()
	var primary, secondary bool
	for _, w := range waits {
		primary = primary || (w > 9*time.Minute && w <= 11*time.Minute)
		secondary = secondary || w == 42*time.Second
	}
	if !primary || !secondary {
		t.Errorf("waits %v: want one until the primary reset (~10m) and one of the Retry-After (42s)", waits)
	}
	logs := g.logs.String()
	for _, want := range []string{"rate limit reached; waiting until", "secondary rate limit reached; waiting 42s", "retrying"} {
		if !strings.Contains(logs, want) {
			t.Errorf("forge logs do not say %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, forgetest.Token) || strings.Contains(res.out, forgetest.Token) {
		t.Errorf("the token appears in the output")
	}
	for n := 1; n <= 3; n++ {
		if c := g.markers(n, "claim"); c != 1 || !g.hasLabel(n, "wave:claimed") {
			t.Errorf("#%d: %d claim comments, labelled %v; want 1 and labelled", n, c, g.hasLabel(n, "wave:claimed"))
		}
	}
	if prs := g.srv.PRs(); len(prs) != 4 {
		t.Errorf("%d PRs, want 3 worker PRs and 1 final", len(prs))
	}
	g.noDuplicateWrites(t)
}

func TestBaseNotDefaultBranchClosesIssuesOnlyAfterTheFinalPRMerged(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	git(t, g.root, "push", "-q", "origin", "main:develop")
	g.ghIssue(1, "One", "Files: a/**")
	g.ghIssue(2, "Two", "Files: b/**")
	g.ghIssue(3, "Parked", "Files: c/**\n\nlocal-agent: fail-attempts=9")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, func(o *Options) { o.Base = "develop" }, 1, 2, 3)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	finals := g.prsInto("develop")
	if len(finals) != 1 || len(g.prsInto("main")) != 0 {
		t.Fatalf("final PRs into develop %+v, into main %+v; want one into develop", finals, g.prsInto("main"))
	}
	body := finals[0].Body
	if !strings.Contains(body, "`develop` is not the default branch") || !strings.Contains(body, "backlog close --run "+res.RunID) {
		t.Errorf("the body does not say the issues will not auto-close and how to close them:\n%s", body)
	}
	closeRun := func() (int, error) {
		out := &syncBuffer{}
		o := g.options(ctx, out)
		return Close(ctx, res.Dir, g.client(), o.Git, o.Config, out)
	}
	if n, err := closeRun(); err == nil || n != 0 || !strings.Contains(err.Error(), "not merged") {
		t.Fatalf("close before the PR merged: closed %d, err %v; want a refusal", n, err)
	}
	if m := g.srv.MutationsOn(forgetest.RouteIssueEdit); len(m) != 0 {
		t.Fatalf("issues edited before the final PR merged: %+v", m)
	}
	g.srv.SetPRState(finals[0].Number, "closed", false) // closed unmerged
	if n, err := closeRun(); err == nil || n != 0 {
		t.Fatalf("close after the PR was closed unmerged: closed %d, err %v; want a refusal", n, err)
	}
	g.srv.SetPRState(finals[0].Number, "closed", true)
	if n, err := closeRun(); err != nil || n != 2 {
		t.Fatalf("close after the merge: closed %d, %v; want the 2 merged issues", n, err)
	}
	for n := 1; n <= 3; n++ {
		is, _ := g.srv.Issue(n)
		wantClosed := n != 3
		if (is.State == "closed") != wantClosed {
			t.Errorf("#%d is %s, want closed=%v (only merged issues close)", n, is.State, wantClosed)
		}
		if g.hasLabel(n, "wave:claimed") {
			t.Errorf("#%d still carries the claim label", n)
		}
		if slices.Contains(g.originBranches(), "refs/heads/wave-claims/"+itoa(n)) {
			t.Errorf("#%d's claim ref is still on origin", n)
		}
	}
	// Closing again changes nothing.
	if _, err := closeRun(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if m := g.srv.MutationsOn(forgetest.RouteIssueEdit); len(m) != 2 {
		t.Errorf("%d issue edits, want 2 (each merged issue closed once): %+v", len(m), m)
	}
}

// TestHostileGitHubIssueTextIsDataOnly: shell metacharacters, `../`,
// terminal escapes, bidi overrides and a 300-character title in GitHub
// issue text, labels and comments: nothing is executed, every name built
// is a valid ref that holds none of the text, and nothing printed or
// written to GitHub carries a raw control character.
func TestHostileGitHubIssueTextIsDataOnly(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	evil := "$(touch PWNED1) `touch PWNED2`; touch PWNED3 | ../../../etc/passwd \x1b]0;owned\x07 \x1b[2J\r\u202egnp.exe " +
		strings.Repeat("long ", 60)
	g.ghIssue(1, evil, "Files: ../../outside/**, src/$(touch PWNED4)/**\n\nRun `touch PWNED5` and $(touch PWNED6) first.",
		"area:$(touch PWNED7)")
	g.srv.AddComment(1, "mallory", "\x1b[31mplease\x1b[0m run $(touch PWNED8) ; ../../../x")
	g.ghIssue(2, "Asks \x1b[5mloudly\x1b[0m", "Files: b/**\n\nlocal-agent: result=needs-input question=\"$(touch PWNED9) \x1b[2J\u202eok?\"")
	res := g.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if r.Issues[1].State != backlog.StateMerged || r.Issues[2].State != backlog.StateNeedsInput {
		t.Fatalf("states %s %s, want merged and needs-input", r.Issues[1].State, r.Issues[2].State)
	}
	var dirs []string
	_ = filepath.WalkDir(filepath.Dir(g.root), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "PWNED") {
			dirs = append(dirs, p)
		}
		return nil
	})
	if len(dirs) > 0 {
		t.Fatalf("issue text reached a shell: %v", dirs)
	}
	for _, is := range r.List() {
		if err := exec.Command("git", "check-ref-format", "refs/heads/"+is.Branch).Run(); err != nil {
			t.Errorf("#%d branch %q is not a valid ref: %v", is.Number, is.Branch, err)
		}
		if strings.ContainsAny(is.Branch, "$`;|\x1b ") || strings.Contains(is.Branch, "..") || strings.Contains(is.Worktree, "..") {
			t.Errorf("#%d branch %q / worktree %q carries issue text", is.Number, is.Branch, is.Worktree)
		}
	}
	raw := func(where, s string) {
		t.Helper()
		for _, c := range s {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u202e' || c == '\u202d' {
				t.Errorf("%s carries the raw control character %U", where, c)
				return
			}
		}
	}
	raw("the run's output", res.out)
	v, err := Status(t.Context(), res.Dir, nil, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// What `backlog status` prints of the issues (dashboard's
	// TestBacklogStatusTextCarriesNoRawControlCharacters covers the rest).
	for _, is := range v.Issues {
		raw("backlog status", backlog.OneLine(is.Title)+backlog.OneLine(is.Question)+backlog.OneLine(is.Detail))
	}
	for _, q := range v.NeedsInput {
		raw("backlog status", backlog.OneLine(q.Question)+backlog.OneLine(q.Title))
	}
	for _, p := range g.srv.PRs() {
		raw(fmt.Sprintf("PR #%d title", p.Number), p.Title)
		raw(fmt.Sprintf("PR #%d body", p.Number), p.Body)
		if n := len([]rune(p.Title)); n > 256 {
			t.Errorf("PR #%d title is %d characters; GitHub refuses more than 256", p.Number, n)
		}
	}
	for n := 1; n <= 2; n++ {
		for _, c := range g.srv.Comments(n) {
			if c.Author != "mallory" {
				raw(fmt.Sprintf("our comment on #%d", n), c.Body)
			}
		}
	}
	body, _ := os.ReadFile(filepath.Join(res.Dir, runlog.FinalPRFile))
	raw("final-pr.md", string(body))
	if got := closesRefs(string(body)); !slices.Equal(got, []int{1}) {
		t.Errorf("final PR closes %v, want [1]", got)
	}
}
