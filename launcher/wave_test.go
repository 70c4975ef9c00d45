package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// starts counts the runs of each agent started, by agent id.
func starts(ids []string) map[string]int {
	out := map[string]int{}
	for _, id := range ids {
		// w<wave>-<agent>-a<k>
		parts := strings.Split(id, "-")
		out[strings.Join(parts[1:len(parts)-1], "-")]++
	}
	return out
}

// stageActions are the closure events of wave n, as "phase action".
func (h *harness) stageActions(n int) []string {
	var out []string
	for _, ev := range h.events(n, state.EntityClosure) {
		ph, _ := ev.Data["phase"].(string)
		out = append(out, ph+" "+ev.Action)
	}
	return out
}

func wantStarts(t *testing.T, h *harness, want map[string]int) {
	t.Helper()
	if got := starts(h.runs.runIDs()); !maps.Equal(got, want) {
		t.Fatalf("runs started %v, want %v\n%s", got, want, h.out.String())
	}
}

// withOutput plays pl and rewrites what the agent printed.
func withOutput(pl play, rewrite func(attempt int, out string) string) play {
	return func(p *runtime.Payload, attempt int, log io.Writer) int {
		var b bytes.Buffer
		code := pl(p, attempt, &b)
		_, _ = io.WriteString(log, rewrite(attempt, b.String()))
		return code
	}
}

// withArgs plays the local agent with more flags on the given attempts.
func withArgs(attempts []int, args ...string) play {
	return func(p *runtime.Payload, attempt int, log io.Writer) int {
		if slices.Contains(attempts, attempt) {
			q := *p
			q.Argv = append(slices.Clone(p.Argv), args...)
			p = &q
		}
		return localPlay(p, attempt, log)
	}
}

func TestAWaveWhoseAgentsPassRunsEachOnceAndEveryClosureStageInOrder(t *testing.T) {
	h := newHarness(t)
	h.wave(0, "", append([]agentDoc{implAgent("A1"), implAgent("A2")}, closureAgents(0)...)...)
	res, err := h.launch(0, -1, nil)
	if err != nil || res.ExitCode != exitcode.OK || !slices.Equal(res.Waves, []int{0}) {
		t.Fatalf("result %+v, %v\n%s", res, err, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 1, "A2": 1, "A8": 1, "A9": 1, "A0": 1})
	want := []string{"cont-eval skipped", "security-review skipped", "integrating running", "integrating passed",
		"docs-closure running", "docs-closure passed", "cont-qa-closure running", "cont-qa-closure passed"}
	if got := h.stageActions(0); !slices.Equal(got, want) {
		t.Fatalf("closure %v, want %v", got, want)
	}
	runs := h.events(0, state.EntityWaveRun)
	if len(runs) != 2 || runs[0].Action != "started" || runs[1].Action != state.WaveCompleted {
		t.Fatalf("wave_run events %+v", runs)
	}
}

// A failed implementation agent is the only one run again, and closure,
// which its failure kept from running, runs once it passes.
func TestAFailedImplementationAgentIsRetriedAloneThenClosureRuns(t *testing.T) {
	h := newHarness(t)
	h.wave(0, "", append([]agentDoc{implAgent("A1", "local.fail-attempts: 1"), implAgent("A2")}, closureAgents(0)...)...)
	res, err := h.launch(0, -1, nil)
	if err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("result %+v, %v\n%s", res, err, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 2, "A2": 1, "A8": 1, "A9": 1, "A0": 1})
	planned := h.events(0, state.EntityRetry)
	if len(planned) != 1 || planned[0].Action != "planned" || !slices.Equal(anyStrings(planned[0].Data["agents"]), []string{"A1"}) ||
		planned[0].Data["resumeFromPhase"] != "cont-eval" {
		t.Fatalf("retry events %+v", planned)
	}
}

// A closure stage that fails is retried from its own stage: the stages
// before it and the implementation agents are not run again.
func TestAFailedClosureStageIsRetriedFromItsStage(t *testing.T) {
	h := newHarness(t)
	h.wave(0, "", append([]agentDoc{implAgent("A1")}, closureAgents(0)...)...)
	h.runs.on("A0", withArgs([]int{1}, "--verdict", "FAIL"))
	res, err := h.launch(0, -1, nil)
	if err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("result %+v, %v\n%s", res, err, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 1, "A8": 1, "A9": 1, "A0": 2})
}

// The sweep stops at the first stage whose gate fails: later stages never
// start, and with no retry left the wave fails naming the stage's code.
func TestTheSweepStopsAtTheFirstFailingStage(t *testing.T) {
	h := newHarness(t)
	h.wave(0, "", append([]agentDoc{implAgent("A1")}, closureAgents(0)...)...)
	h.runs.on("A8", withOutput(localPlay, func(_ int, out string) string {
		return strings.Replace(out, "state=ready-for-doc-closure", "state=needs-more-work", 1)
	}))
	res, err := h.launch(0, -1, func(o *Options) { o.MaxRetries = 0 })
	if err != nil || res.ExitCode != exitcode.Failed || len(res.Failures) != 1 || res.Failures[0].StatusCode != "integration-needs-more-work" {
		t.Fatalf("result %+v, %v\n%s", res, err, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 1, "A8": 1})
	if got := h.stageActions(0); !slices.Contains(got, "integrating failed") || slices.ContainsFunc(got, func(s string) bool {
		return strings.HasPrefix(s, "cont-qa-closure") || strings.HasPrefix(s, "docs-closure")
	}) {
		t.Fatalf("closure %v", got)
	}
}

// An agent that posted a blocker on another agent that failed is run
// again with it, so it can see the cause gone and resolve its blocker;
// only rerunning the failed agent left the blocker open and the wave
// waiting for a person (exit 43).
func TestAnAgentBlockedOnAFailedOneIsRetriedWithIt(t *testing.T) {
	h := newHarness(t)
	h.wave(0, "", append([]agentDoc{implAgent("A1", "local.fail-attempts: 1"), implAgent("A2")}, closureAgents(0)...)...)
	h.runs.on("A2", func(p *runtime.Payload, attempt int, log io.Writer) int {
		rec := coord.Record{ID: "b-1", Kind: "blocker", AgentID: "A2", Targets: []string{"agent:A1"}, Summary: "waiting on A1's schema"}
		if attempt > 1 {
			rec.Status = "resolved"
		}
		if _, err := coord.Post(h.layout().CoordinationPath(0), rec, nil, time.Now()); err != nil {
			t.Error(err)
		}
		return localPlay(p, attempt, log)
	})
	res, err := h.launch(0, -1, nil)
	if err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("result %+v, %v\n%s", res, err, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 2, "A2": 2, "A8": 1, "A9": 1, "A0": 1})
}

// A shared component one owner landed waits on its sibling: that sibling
// alone is run again, and the wave passes once it lands the component.
func TestOnlyTheSiblingASharedComponentWaitsOnIsRetried(t *testing.T) {
	h := newHarness(t)
	h.config = strings.Replace(harnessConfig, "requireComponentPromotionsFromWave: null", "requireComponentPromotionsFromWave: 0", 1)
	h.write("docs/plans/component-cutover-matrix.json", `{"levels": ["inventoried", "contract-frozen", "repo-landed"],
  "components": {"api": {"currentLevel": "contract-frozen", "promotions": [{"wave": 0, "target": "repo-landed"}]}}}`)
	a1, a2 := implAgent("A1"), implAgent("A2")
	a1.components, a2.components = []string{"api"}, []string{"api"}
	a2.contract = false // judged by the component gate only
	h.wave(0, "## Component promotions\n- api: repo-landed\n\n", append([]agentDoc{a1, a2}, closureAgents(0)...)...)
	h.runs.on("A2", withOutput(localPlay, func(attempt int, out string) string {
		if attempt > 1 {
			return out
		}
		return strings.Replace(out, "component=api level=repo-landed state=met", "component=api level=repo-landed state=gap", 1)
	}))
	res, err := h.launch(0, -1, nil)
	if err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("result %+v, %v\n%s", res, err, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 1, "A2": 2, "A8": 1, "A9": 1, "A0": 1})
	failed := h.events(0, state.EntityAttempt)
	if !slices.ContainsFunc(failed, func(ev state.Event) bool {
		return ev.Action == "failed" && strings.Contains(mustJSON(t, ev.Data), "shared-component-sibling-pending")
	}) {
		t.Fatalf("no attempt failed on the sibling: %+v", failed)
	}
}

// A launcher that dies while an agent runs leaves the wave run open; the
// next launch adopts the live run instead of starting the agent again,
// and uses the results of the runs that finished meanwhile.
func TestALiveRunOfADeadLauncherIsAdoptedNotStartedAgain(t *testing.T) {
	h := newHarness(t)
	h.wave(0, "", append([]agentDoc{implAgent("A1"), implAgent("A2")}, closureAgents(0)...)...)
	h.runs.hold("A1", 1)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := h.launcher(0, -1, nil).Run(ctx); first <- err }()
	held := recv(t, h.runs.held, "held run of A1")
	cancel()
	if err := recv(t, first, "end of the first launcher"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the first launcher ended with %v, want it cut off", err)
	}
	if runs := h.events(0, state.EntityWaveRun); len(runs) != 1 || runs[0].Action != "started" {
		t.Fatalf("wave run not left open: %+v", runs)
	}

	second := make(chan Result, 1)
	go func() {
		res, err := h.launch(0, -1, nil)
		if err != nil {
			t.Error(err)
		}
		second <- res
	}()
	for d := ""; d != held; {
		d = recv(t, h.runs.adopted, "adoption of A1's run")
	}
	h.runs.release(held)
	if res := recv(t, second, "end of the second launcher"); res.ExitCode != exitcode.OK {
		t.Fatalf("result %+v\n%s", res, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 1, "A2": 1, "A8": 1, "A9": 1, "A0": 1})
	adopted := 0
	for _, ev := range h.events(0, state.EntityAgentRun) {
		if ev.Action == "started" && ev.Data["adopted"] == true {
			adopted++
		}
	}
	if adopted != 2 {
		t.Fatalf("%d runs adopted, want A1 (live) and A2 (finished)\n%s", adopted, h.out.String())
	}
}

func anyStrings(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recv waits for a value on ch, failing the test after a minute.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("no %s within a minute", what)
		panic("unreachable")
	}
}

// A resume from a closure phase reuses the proven implementation agents
// and sweeps closure from that phase: the stages before it are skipped,
// saying why, and their agents are not run again.
func TestAResumeFromAClosurePhaseSkipsTheStagesBeforeIt(t *testing.T) {
	h := newHarness(t)
	h.wave(0, "", append([]agentDoc{implAgent("A1")}, closureAgents(0)...)...)
	if res, err := h.launch(0, -1, nil); err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("first launch %+v, %v\n%s", res, err, h.out.String())
	}
	res, err := h.launch(0, 0, func(o *Options) { o.ResumePhase = "cont-qa-closure" })
	if err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("resume %+v, %v\n%s", res, err, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 1, "A8": 1, "A9": 1, "A0": 2})
	var skipped []string
	evs := h.events(0, "")
	for i := len(evs) - 1; i >= 0 && !(evs[i].EntityType == state.EntityWaveRun && evs[i].Action == "started"); i-- {
		if ev := evs[i]; ev.EntityType == state.EntityClosure && ev.Action == state.StageSkipped {
			if d, _ := ev.Data["detail"].(string); strings.Contains(d, "before the resume phase") {
				skipped = append(skipped, ev.Data["phase"].(string))
			}
		}
	}
	slices.Reverse(skipped)
	if want := []string{"cont-eval", "security-review", "integrating", "docs-closure"}; !slices.Equal(skipped, want) {
		t.Fatalf("skipped before the resume phase %v, want %v", skipped, want)
	}
}

// A run still going at its deadline is stopped and counts as a timeout:
// the agent runs again in the next attempt.
func TestARunPastItsDeadlineIsStoppedAndRetriedAsATimeout(t *testing.T) {
	h := newHarness(t)
	h.wave(0, "", append([]agentDoc{implAgent("A1"), implAgent("A2")}, closureAgents(0)...)...)
	h.runs.hold("A1", 1)
	l := h.launcher(0, -1, nil)
	l.now = func() time.Time { return time.Now().Add(24 * time.Hour) } // every deadline has passed
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := l.Run(ctx)
	if err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("result %+v, %v\n%s", res, err, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 2, "A2": 1, "A8": 1, "A9": 1, "A0": 1})
	if !slices.ContainsFunc(h.events(0, state.EntityAgentRun), func(ev state.Event) bool {
		return ev.Action == state.AgentTimedOut && ev.Data["agentId"] == "A1" && ev.Data["statusCode"] == "timeout-no-status"
	}) {
		t.Fatalf("no timed-out run of A1 recorded\n%s", h.out.String())
	}
}
