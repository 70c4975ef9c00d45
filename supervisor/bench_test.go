package supervisor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// BenchmarkDispatch20 is a bounded run of 20 issues with instant local
// workers against the fake GitHub (worker PRs on) and a bare origin, real
// tmux. Reported per run: claim→PR (first claim to the final PR recorded,
// seconds), start→claim and PR→end (run_started to the first claim, the
// final PR to run_finished: releases, claim renewals, cleanup),
// gh-calls/issue (every HTTP request the fake received),
// git-calls/issue (git processes the supervisor ran; workers' own not
// counted), ms/merge (merge_started → merged of a clean merge without
// verify, averaged; it includes pushing the worker branch and opening its
// PR) and ms/git-merge (the worker PR recorded → merged: the merge engine
// alone — fetch, merge-tree, commit-tree, update-ref, push under lease,
// fetch and ancestry check).
//
//	go test ./supervisor -run '^$' -bench Dispatch20 -benchtime 3x
func BenchmarkDispatch20(b *testing.B) {
	const issues = 20
	var claimToPR, startToClaim, prToEnd, ghCalls, gitCalls, perMerge, perGitMerge float64
	for b.Loop() {
		b.StopTimer()
		g := newGHFixture(b)
		nums := make([]int, issues)
		for i := range nums {
			nums[i] = i + 1
			g.ghIssue(i+1, fmt.Sprintf("Issue %d", i+1), fmt.Sprintf("Files: part%d/**", i+1))
		}
		var repo *gitops.Repo
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		b.StartTimer()
		res := g.runCtx(ctx, func(o *Options) { repo = o.Git }, nums...)
		b.StopTimer()
		cancel()
		if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != issues {
			b.Fatalf("run: exit %d, tally %+v, %v\n%s", res.ExitCode, res.Tally, res.err, res.out)
		}
		evs := g.events(res.Dir)
		var startedAt, firstClaim, finalPR, finished time.Time
		started, opened := map[int]time.Time{}, map[int]time.Time{}
		var merges, gitMerges time.Duration
		for _, ev := range evs {
			switch {
			case ev.Kind == backlog.EvRunStarted:
				startedAt = ev.At
			case ev.Kind == backlog.EvRunFinished:
				finished = ev.At
			case ev.Kind == backlog.EvClaimed && firstClaim.IsZero():
				firstClaim = ev.At
			case ev.Kind == backlog.EvPR && ev.Issue == 0:
				finalPR = ev.At
			case ev.Kind == backlog.EvPR:
				opened[ev.Issue] = ev.At
			case ev.Kind == backlog.EvMergeStarted:
				started[ev.Issue] = ev.At
			case ev.Kind == backlog.EvMerged:
				merges += ev.At.Sub(started[ev.Issue])
				gitMerges += ev.At.Sub(opened[ev.Issue])
			}
		}
		claimToPR += finalPR.Sub(firstClaim).Seconds()
		startToClaim += firstClaim.Sub(startedAt).Seconds()
		prToEnd += finished.Sub(finalPR).Seconds()
		ghCalls += float64(g.srv.Total()) / issues
		gitCalls += float64(repo.Calls()) / issues
		perMerge += float64(merges.Milliseconds()) / issues
		perGitMerge += float64(gitMerges.Milliseconds()) / issues
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(claimToPR/n, "claim→PR-s")
	b.ReportMetric(startToClaim/n, "start→claim-s")
	b.ReportMetric(prToEnd/n, "PR→end-s")
	b.ReportMetric(ghCalls/n, "gh-calls/issue")
	b.ReportMetric(gitCalls/n, "git-calls/issue")
	b.ReportMetric(perMerge/n, "ms/merge")
	b.ReportMetric(perGitMerge/n, "ms/git-merge")
}

// BenchmarkChecksWait20 is BenchmarkDispatch20 gated on a required CI
// check (backlog.checks: [ci]) that stays pending for 60 s on every head
// (the 20 worker heads and the final PR's), looked at every 10 s (the
// default). Reported per issue: counted-calls (what GitHub's rate limit
// counts: every request but the conditional ones answered 304) and
// gh-calls (every request).
//
//	go test ./supervisor -run '^$' -bench ChecksWait20 -benchtime 1x
func BenchmarkChecksWait20(b *testing.B) {
	const issues = 20
	var counted, total, wall float64
	for b.Loop() {
		b.StopTimer()
		g := newGHFixture(b)
		g.backlogKeys("  checks: [ci]\n")
		g.srv.SetChecks(forgetest.Check{Name: "ci", PendingFor: 60 * time.Second})
		nums := make([]int, issues)
		for i := range nums {
			nums[i] = i + 1
			g.ghIssue(i+1, fmt.Sprintf("Issue %d", i+1), fmt.Sprintf("Files: part%d/**", i+1))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		start := time.Now()
		b.StartTimer()
		res := g.runCtx(ctx, nil, nums...)
		b.StopTimer()
		wall += time.Since(start).Seconds()
		cancel()
		if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != issues {
			b.Fatalf("run: exit %d, tally %+v, %v\n%s", res.ExitCode, res.Tally, res.err, res.out)
		}
		counted += float64(g.srv.Counted()) / issues
		total += float64(g.srv.Total()) / issues
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(counted/n, "counted-calls/issue")
	b.ReportMetric(total/n, "gh-calls/issue")
	b.ReportMetric(wall/n, "run-s")
}

// BenchmarkPlan1000 is `backlog plan` of 1,000 open issues on the fake
// GitHub, 50 of them labelled needs-input by people, 10 of those with a
// person's comment. Reported: calls (every request) per plan.
//
//	go test ./supervisor -run '^$' -bench Plan1000 -benchtime 1x
func BenchmarkPlan1000(b *testing.B) {
	var calls float64
	for b.Loop() {
		b.StopTimer()
		g := newGHFixture(b)
		for n := 1; n <= 1000; n++ {
			if n%20 != 0 {
				g.ghIssue(n, "Issue", "Files: part/**")
				continue
			}
			g.ghIssue(n, "Waits for a person", "Files: part/**", "needs-input")
			if n%100 == 0 {
				g.srv.AddComment(n, "alice", "Which database?")
			}
		}
		ctx := context.Background()
		o := g.options(ctx, &syncBuffer{})
		b.StartTimer()
		v, err := Preview(ctx, PreviewOptions{Config: o.Config, Source: o.Source, Git: o.Git, StateDir: g.layout().StateDir})
		b.StopTimer()
		if err != nil || len(v.NeedsInput) != 50 {
			b.Fatalf("plan: %d needs-input, %v", len(v.NeedsInput), err)
		}
		calls += float64(g.srv.Total())
		b.StartTimer()
	}
	b.ReportMetric(calls/float64(b.N), "calls")
}

// BenchmarkVerifyPipeline10 is a bounded run of 10 local issues on
// disjoint surfaces, width 5, instant local workers, real tmux and a bare
// origin, with `backlog.verify: [sleep, "5"]`: a verify step as slow as
// a small test suite. Sub-benchmarks: the merge pipeline at
// backlog.verifyParallel's default (min(width, 4)) and at 1 (one verify
// at a time, as before the pipeline). Reported per run: run-s (wall,
// Run's start to its end) and verify-rounds (verifies begun, all
// issues).
//
//	go test ./supervisor -run '^$' -bench VerifyPipeline10 -benchtime 1x
func BenchmarkVerifyPipeline10(b *testing.B) {
	for _, c := range []struct {
		name     string
		parallel int
	}{{"default", 0}, {"one-at-a-time", 1}} {
		b.Run(c.name, func(b *testing.B) {
			var wall, rounds float64
			for b.Loop() {
				b.StopTimer()
				f := newFixture(b)
				f.config = strings.Replace(f.config, "backlog:\n",
					fmt.Sprintf("backlog:\n  verify: [sleep, \"5\"]\n  verifyParallel: %d\n", c.parallel), 1)
				for n := 1; n <= 10; n++ {
					f.issue(n, fmt.Sprintf("Part %d", n), fmt.Sprintf("Files: part%d/**", n))
				}
				w, evs := benchRun(b, f, 10, issueList(10))
				wall += w
				for _, r := range verifyRounds(evs) {
					rounds += float64(r)
				}
				b.StartTimer()
			}
			b.ReportMetric(wall/float64(b.N), "run-s")
			b.ReportMetric(rounds/float64(b.N), "verify-rounds")
		})
	}
}

// BenchmarkVerifyPipelineFailing20 is 20 local issues, width 5, a verify
// step that takes 5 s and fails on a change holding a BROKEN file; the
// workers are ready in the issues' order, and #7's first change is
// broken (its rework round mends it). Reported per run: run-s (wall),
// merged (issues merged, want 20: every other issue, and #7 after its
// rework), extra-rounds (verifies begun beyond one per issue, #7's own
// excepted: what its failure cost the others) and max-extra (the most
// one issue spent beyond its one; want ≤ 1).
//
//	go test ./supervisor -run '^$' -bench VerifyPipelineFailing20 -benchtime 1x
func BenchmarkVerifyPipelineFailing20(b *testing.B) {
	const issues, broken = 20, 7
	var wall, merged, extra, maxExtra float64
	for b.Loop() {
		b.StopTimer()
		f := newFixture(b)
		for n := 1; n <= issues; n++ {
			f.issue(n, fmt.Sprintf("Part %d", n), fmt.Sprintf("Files: part%d/**", n))
		}
		f.brokenWorkers(broken)
		f.verifyGate(`sleep 5
if ls part*/BROKEN >/dev/null 2>&1; then echo "a BROKEN file is in the tree"; exit 1; fi
`)
		w, evs := benchRun(b, f, issues, issueList(issues))
		wall += w
		merged += float64(len(mergedOrder(evs)))
		most := 0
		for n, r := range verifyRounds(evs) {
			if n != broken && r > 1 {
				extra += float64(r - 1)
				most = max(most, r-1)
			}
		}
		maxExtra += float64(most)
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(wall/n, "run-s")
	b.ReportMetric(merged/n, "merged")
	b.ReportMetric(extra/n, "extra-rounds")
	b.ReportMetric(maxExtra/n, "max-extra")
}

// benchRun supervises issues at width 5 to the end (all merged, or the
// benchmark fails) and returns its wall time in seconds and its events.
func benchRun(b *testing.B, f *fixture, want int, issues []int) (float64, []backlog.Event) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	b.StartTimer()
	res := f.runCtx(ctx, func(o *Options) { o.Width = 5 }, issues...)
	b.StopTimer()
	wall := time.Since(start).Seconds()
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != want {
		b.Fatalf("run: exit %d, tally %+v, %v\n%s", res.ExitCode, res.Tally, res.err, res.out)
	}
	return wall, f.events(res.Dir)
}
