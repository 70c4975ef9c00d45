package launcher

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/retry"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Status codes the launcher itself produces (gates produce the rest).
const (
	codeBlockerOpen    = "coordination-blocker-open"
	codeFallbackBlock  = state.CodeFallbackBlocked
	codeMissingClosure = "missing-closure-run"
	codeStartFailed    = "session-start-failed"
	codeNoExecutor     = "executor-unavailable"
)

// waveRun is one run of one wave: its plan and the latest result of every
// agent in it.
type waveRun struct {
	l       *Launcher
	p       *wavePlan
	n       int
	results map[string]*agentResult
	prior   map[string]string // agent → run dir of an interrupted run, adoptable
	fresh   bool              // a run was started (not adopted) in this wave run
	ask     asking
	// override is the retry override (`retry apply`) this wave run
	// follows; removed when the run ends, kept if the launcher dies.
	override *retry.Override
	// budgetSeen holds the budget events emitted (once each); budgetOver
	// the cap that stopped new starts.
	budgetSeen map[string]bool
	budgetOver string
	budgetLog  *spendLog // the lane's log as the budget check last read it
	// limitRelaunch: the agent's next start follows its usage limit
	// (usagelimit.go), not a failure.
	limitRelaunch map[string]bool
	// progress is the no-progress brake's view of each run (noprogress.go).
	progress map[string]*ownedProgress
}

type agentResult struct {
	RunDir  string
	Outcome Outcome
	Summary gate.Summary
	Reused  bool
}

type waveOutcome struct {
	ExitCode int
	Failures []gate.Failure
}

func (l *Launcher) runWave(ctx context.Context, w *wave.Wave) (waveOutcome, error) {
	// state.json catches up at every wait on runs and at the end.
	defer l.deferRefresh()()
	coordBase := fmt.Sprintf("%s coord post --repo-root %s --lane %s", shellWord(l.opt.Self), shellWord(l.opt.Lane.RepoRoot), l.opt.Lane.Name)
	p, err := plan(w, l.opt.Lane, l.opt.Executor, coordBase)
	if err != nil {
		return waveOutcome{ExitCode: exitcode.Failed}, err
	}
	r := &waveRun{l: l, p: p, n: w.Number, results: map[string]*agentResult{}, limitRelaunch: map[string]bool{}}
	r.prior = interruptedRuns(l.opt.Layout.EventsPath(), w.Number)
	if err := r.takeOverride(); err != nil {
		return waveOutcome{ExitCode: exitcode.Failed}, err
	}
	qctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	r.watchQuestions(qctx)
	reusable := r.reusable()

	// Before the wave run opens: a request naming no agent of the wave
	// leaves no trace.
	impl, closureFrom, err := r.firstSelection(reusable)
	if err != nil {
		return waveOutcome{ExitCode: exitcode.Failed}, err
	}
	maxAttempts := l.opt.MaxRetries + 1
	stages := p.Bindings.Stages(p.Order)
	var agents []state.AgentInfo
	for _, id := range p.Order {
		ap := p.Agents[id]
		agents = append(agents, state.AgentInfo{ID: id, Title: ap.Agent.Title, Role: ap.Role, Executor: ap.Resolved.ID})
	}
	var closure []state.Stage
	for _, s := range stages {
		closure = append(closure, state.Stage{Phase: s.Phase, Agents: s.Agents})
	}
	l.emit(r.n, state.EntityWaveRun, fmt.Sprintf("wave-%d", r.n), "started", 0,
		state.WaveStarted{File: w.File, MaxAttempts: maxAttempts, Agents: agents, Closure: closure})
	if o := r.override; o != nil {
		l.emit(r.n, state.EntityRetry, fmt.Sprintf("wave-%d-override", r.n), "override-applied", 0,
			map[string]any{"resumePhase": o.ResumePhase, "selectedAgentIds": o.SelectedAgentIDs,
				"requestedBy": o.RequestedBy, "reason": o.Reason, "createdAt": o.CreatedAt})
	}
	// A proven agent the resume reruns is not reused.
	reusable = slices.DeleteFunc(reusable, func(id string) bool { return slices.Contains(impl, id) })
	l.printf("wave %d: %d agents, %d reusable, up to %d attempts", r.n, len(p.Order), len(reusable), maxAttempts)
	for _, id := range reusable {
		r.reuse(id)
	}
	var failures []gate.Failure
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		l.emit(r.n, state.EntityAttempt, fmt.Sprintf("wave-%d-attempt-%d", r.n, attempt), "running", attempt,
			map[string]any{"selectedAgentIds": impl, "phase": phaseOf(impl, closureFrom)})
		failures, err = r.attempt(ctx, attempt, impl, closureFrom)
		if errors.Is(err, ErrStopped) {
			return r.finish(ctx, attempt, state.WaveStopped, failures), err
		}
		if errors.Is(err, errStartFailed) {
			// Every run it touched is closed (startFailed): close the wave
			// run too, so status does not show it in flight.
			f := []gate.Failure{{Gate: "launch", StatusCode: codeStartFailed, Detail: err.Error()}}
			out := r.finish(ctx, attempt, state.WaveFailed, f)
			out.ExitCode = exitcode.Failed
			return out, err
		}
		if errors.Is(err, errBudgetReached) {
			f := append(failures, budgetFailure(r.budgetOver))
			out := r.finish(ctx, attempt, state.WaveBlocked, f)
			out.ExitCode = exitcode.NeedsHuman
			r.report(state.WaveBlocked, f)
			return out, nil
		}
		if err != nil {
			// Interrupted (signal): the wave run stays open in the event
			// log so the next launch adopts its runs.
			return waveOutcome{ExitCode: exitcode.Failed}, err
		}
		if len(failures) == 0 {
			l.emit(r.n, state.EntityAttempt, fmt.Sprintf("wave-%d-attempt-%d", r.n, attempt), "completed", attempt, nil)
			return r.finish(ctx, attempt, state.WaveCompleted, nil), nil
		}
		failures = append(failures, r.humanHolds(failures)...)
		if over := r.checkBudget(attempt); over != "" && !hasCode(failures, codeBudgetExceeded) {
			// Spent: nothing new may start, so no retry is announced or
			// counted (runtime.budget.onExceeded: stop ended this one).
			r.budgetOver = over
			failures = append(failures, budgetFailure(over))
		}
		l.emit(r.n, state.EntityAttempt, fmt.Sprintf("wave-%d-attempt-%d", r.n, attempt), "failed", attempt,
			map[string]any{"failures": failures})
		if needsHuman(failures) || attempt == maxAttempts {
			break
		}
		var blocked bool
		var blocks []gate.Failure
		impl, closureFrom, blocked, blocks = r.retryPlan(attempt+1, failures)
		if blocked {
			failures = append(failures, blocks...)
			break
		}
		l.emit(r.n, state.EntityRetry, fmt.Sprintf("wave-%d-attempt-%d", r.n, attempt+1), "planned", attempt+1,
			map[string]any{"agents": impl, "resumeFromPhase": closureFrom})
		if len(impl) > 0 {
			l.printf("wave %d: retrying %s, then closure from %s", r.n, strings.Join(impl, ", "), closureFrom)
		} else {
			l.printf("wave %d: retrying closure from %s", r.n, closureFrom)
		}
	}
	code := exitcode.Failed
	switch {
	case needsHuman(failures) || hasCode(failures, codeNoExecutor):
		code = exitcode.NeedsHuman
	case gate.ContQaOnly(failures):
		code = exitcode.ContQAOnly
	}
	status := state.WaveFailed
	if code == exitcode.NeedsHuman {
		status = state.WaveBlocked
	}
	out := r.finish(ctx, maxAttempts, status, failures)
	out.ExitCode = code
	r.report(status, failures)
	if code == exitcode.NeedsHuman {
		fmt.Fprint(l.opt.Out, termtext.EscapeLines(r.pendingBlock()))
	}
	return out, nil
}

// needsHuman reports failures no retry can fix: an open blocker, or no
// usable executor left.
func needsHuman(fs []gate.Failure) bool {
	return hasCode(fs, codeBlockerOpen) || hasCode(fs, codeFallbackBlock) || hasCode(fs, codeBudgetExceeded)
}

// agentBudgetDetail is an agent's budget stop with the next step, as a
// lane cap's stop names one (budgetFailure).
func agentBudgetDetail(detail, id string, n int) string {
	return fmt.Sprintf("%s; not retried on the same budget: raise budget.tokens or budget.costUsd in %s's ### Executor block (or its profile), then `wave-orchestrator resume -w %d`",
		strings.TrimSuffix(detail, "."), id, n)
}

// codeBudgetExceeded is the failure of an agent stopped at its budget, or
// of a wave or lane whose budget is spent: a retry on the same budget
// would spend more, so a person decides (raise the cap, then resume).
const codeBudgetExceeded = "budget-exceeded"

func hasCode(fs []gate.Failure, code string) bool {
	return slices.ContainsFunc(fs, func(f gate.Failure) bool { return f.StatusCode == code })
}

func phaseOf(impl []string, closureFrom string) string {
	if len(impl) > 0 {
		return roles.PhaseImplementation
	}
	return closureFrom
}

// firstSelection picks the first attempt's implementation agents and the
// closure stage to start from: a resume reruns what retry.Resume says
// (its phase cascades to every later stage); a launch runs every
// implementation agent that cannot be reused.
func (r *waveRun) firstSelection(reusable []string) ([]string, string, error) {
	opt := r.l.opt
	if o := r.override; o != nil {
		opt.ResumePhase, opt.RerunAgents, opt.Resume = o.ResumePhase, o.SelectedAgentIDs, true
	}
	req := retry.ResumeRequest{Phase: opt.ResumePhase, Agents: opt.RerunAgents, RerunProven: opt.RerunProven}
	resume := opt.Resume || opt.ResumePhase != ""
	if opt.Resume && opt.ResumePhase == "" && len(r.prior) > 0 {
		// The last run of this wave was interrupted: resuming continues
		// it, adopting its runs, rather than replanning from an older end.
		resume = len(req.Agents) > 0 || req.RerunProven
		req.PlanPhase = retry.PhaseCompleted
		r.l.printf("wave %d: continuing the interrupted run", r.n)
	} else if opt.Resume && opt.ResumePhase == "" {
		req.PlanPhase = r.resumePhaseFromPlan(reusable)
		r.l.printf("wave %d: resume plan says phase %s", r.n, req.PlanPhase)
	}
	var impl []string
	from := roles.PhaseContEval
	if resume {
		var err error
		if impl, from, err = retry.Resume(req, r.p.Wave, r.p.Bindings, reusable); err != nil {
			return nil, "", err
		}
	} else {
		for _, id := range r.p.implementationAgents() {
			if !slices.Contains(reusable, id) {
				impl = append(impl, id)
			}
		}
	}
	// Implementation runs of an interrupted launcher are always collected,
	// so a resume from a later phase still has their results.
	for _, id := range r.p.implementationAgents() {
		if _, ok := r.adoptable(id); ok && !slices.Contains(impl, id) {
			impl = append(impl, id)
		}
	}
	return impl, from, nil
}

// attempt runs the selected implementation agents, gates them, and then
// sweeps closure from closureFrom.
func (r *waveRun) attempt(ctx context.Context, attempt int, impl []string, closureFrom string) ([]gate.Failure, error) {
	if len(impl) > 0 {
		if err := r.runAgents(ctx, attempt, impl); err != nil {
			return nil, err
		}
	}
	if f := r.implementationGate(); len(f) > 0 {
		r.l.emit(r.n, state.EntityGate, fmt.Sprintf("wave-%d-attempt-%d-gate", r.n, attempt), "evaluated", attempt,
			map[string]any{"phase": roles.PhaseImplementation, "ok": false, "failures": f})
		return f, nil
	}
	r.l.emit(r.n, state.EntityGate, fmt.Sprintf("wave-%d-attempt-%d-gate", r.n, attempt), "evaluated", attempt,
		map[string]any{"phase": roles.PhaseImplementation, "ok": true})
	if f := r.barrier(); len(f) > 0 {
		return f, nil
	}
	if f, err := r.sweep(ctx, attempt, closureFrom); err != nil || len(f) > 0 {
		return f, err
	}
	// A closure agent may have posted a blocker; it holds the wave too.
	return r.barrier(), nil
}

// implementationGate checks every implementation owner: run failures
// first (timeouts, lost runners), then the gate over summaries.
func (r *waveRun) implementationGate() []gate.Failure {
	var f []gate.Failure
	owners := r.p.implOwners()
	sums := map[string]gate.Summary{}
	var gated []string
	for _, id := range owners {
		res := r.results[id]
		if res == nil {
			f = append(f, gate.Failure{AgentID: id, Gate: "implementation", StatusCode: "missing-result",
				Detail: "agent has no run in this wave; run `resume --phase implementation`"})
			continue
		}
		if rf := r.runFailure(id, res); rf != nil {
			f = append(f, *rf)
			continue
		}
		sums[id] = res.Summary
		gated = append(gated, id)
	}
	f = append(f, gate.Implementation(r.p.Wave, r.p.Bindings, sums, gated)...)
	if len(f) == 0 {
		f = gate.Components(r.p.Wave, r.p.Bindings, r.summaries(), r.l.opt.Lane.Validation)
	}
	return f
}

// runCode is the status code of a run that ended without a result of
// its own — timed out, lost, stalled, stopped for no progress or at its
// budget — and "" for any other state (its exit code says it).
func runCode(st string) string {
	switch st {
	case state.AgentTimedOut:
		return "timeout-no-status"
	case state.AgentLost:
		return "runtime-lost"
	case state.AgentStalled:
		return "stalled"
	case StateNoProgress:
		return StateNoProgress
	case state.AgentBudgetExceeded:
		return codeBudgetExceeded
	}
	return ""
}

// runFailure turns a run that never produced a result into a failure.
func (r *waveRun) runFailure(id string, res *agentResult) *gate.Failure {
	code, detail := runCode(res.Outcome.State), res.Outcome.Detail
	switch {
	case code == codeBudgetExceeded:
		detail = agentBudgetDetail(detail, id, r.n)
	case code == "":
		reason, ok := r.noExecutor(id, res)
		if !ok {
			return nil
		}
		code, detail = codeNoExecutor, reason
	}
	f := gate.RunFailure(r.p.Wave, r.p.Bindings, id, code, detail, res.Summary.LogPath)
	return &f
}

func (r *waveRun) summaries() map[string]gate.Summary {
	m := map[string]gate.Summary{}
	for id, res := range r.results {
		m[id] = res.Summary
	}
	return m
}

// sweep runs closure stages from `from` on, one stage and one agent at a
// time, stopping at the first failing gate.
func (r *waveRun) sweep(ctx context.Context, attempt int, from string) ([]gate.Failure, error) {
	lane := r.l.opt.Lane
	ranSemantic := false
	for _, st := range r.p.Bindings.Stages(r.p.Order) {
		id := fmt.Sprintf("wave-%d-closure-%s", r.n, st.Phase)
		if roles.PhaseIndex(st.Phase) < roles.PhaseIndex(from) {
			r.l.emit(r.n, state.EntityClosure, id, state.StageSkipped, attempt,
				map[string]any{"phase": st.Phase, "detail": "before the resume phase " + from})
			continue
		}
		if f := r.barrier(); len(f) > 0 {
			return f, nil
		}
		run, required := gate.StagePlan(st.Phase, r.p.Wave, r.p.Bindings, lane, ranSemantic)
		if st.Phase == roles.PhaseDocsClosure && r.docsAutoClosed() {
			r.l.emit(r.n, state.EntityClosure, id, state.StageSkipped, attempt, map[string]any{"phase": st.Phase,
				"detail": "auto-closed: no shared-plan doc delta and no component promotion"})
			continue
		}
		if len(st.Agents) == 0 || !run {
			if len(st.Agents) == 0 && required {
				f := []gate.Failure{{Gate: gate.PhaseGate(st.Phase), StatusCode: codeMissingClosure, Detail: "stage " + st.Phase + " is required but no agent holds it"}}
				r.l.emit(r.n, state.EntityClosure, id, state.StageFailed, attempt, map[string]any{"phase": st.Phase, "detail": codeMissingClosure})
				return f, nil
			}
			r.l.emit(r.n, state.EntityClosure, id, state.StageSkipped, attempt, map[string]any{"phase": st.Phase})
			continue
		}
		r.l.emit(r.n, state.EntityClosure, id, state.StageRunning, attempt, map[string]any{"phase": st.Phase})
		for _, a := range st.Agents {
			if err := r.runAgents(ctx, attempt, []string{a}); err != nil {
				return nil, err
			}
			if rf := r.runFailure(a, r.results[a]); rf != nil {
				r.l.emit(r.n, state.EntityClosure, id, state.StageFailed, attempt, map[string]any{"phase": st.Phase, "detail": rf.StatusCode})
				return []gate.Failure{*rf}, nil
			}
		}
		f := gate.Stage(st.Phase, r.p.Wave, r.p.Bindings, r.summaries(), lane)
		r.l.emit(r.n, state.EntityGate, fmt.Sprintf("wave-%d-attempt-%d-gate-%s", r.n, attempt, st.Phase), "evaluated", attempt,
			map[string]any{"phase": st.Phase, "ok": len(f) == 0, "failures": f})
		if len(f) > 0 {
			r.l.emit(r.n, state.EntityClosure, id, state.StageFailed, attempt, map[string]any{"phase": st.Phase, "detail": f[0].StatusCode})
			return f, nil
		}
		r.l.emit(r.n, state.EntityClosure, id, state.StagePassed, attempt, map[string]any{"phase": st.Phase})
		ranSemantic = true
	}
	return nil, nil
}

func (r *waveRun) finish(ctx context.Context, attempt int, status string, failures []gate.Failure) waveOutcome {
	r.l.emit(r.n, state.EntityWaveRun, fmt.Sprintf("wave-%d", r.n), status, attempt, map[string]any{"failures": failures})
	r.l.flush() // the verdict is in state.json before the sessions go
	if o := r.override; o != nil && status != state.WaveStopped {
		// Used: a stopped run did not get to do what was asked, so its
		// override waits for the next launch.
		if err := retry.ConsumeOverride(retry.OverridePath(r.l.opt.Layout.WaveDir(r.n)), *o); err != nil {
			r.l.printf("wave %d: %v", r.n, err)
		}
	}
	if !r.l.opt.KeepSessions && status != state.WaveStopped {
		// Only sessions of runs seen finished: a live run this launcher did
		// not adopt keeps going.
		var ps []*runtime.Payload
		for id, res := range r.results {
			ps = append(ps, &runtime.Payload{RunID: filepath.Base(res.RunDir), RunDir: res.RunDir, SessionName: sessionFor(r.n, id)})
		}
		_ = r.l.runs.DiscardAll(context.WithoutCancel(ctx), ps)
	}
	r.l.printf("wave %d %s", r.n, status)
	return waveOutcome{Failures: failures}
}

func (r *waveRun) report(status string, failures []gate.Failure) {
	var b strings.Builder
	fmt.Fprintf(&b, "wave %d %s:\n", r.n, status)
	for _, f := range failures {
		agent := f.AgentID
		if agent == "" {
			agent = f.Gate
		}
		fmt.Fprintf(&b, "  - %s: %s", agent, f.StatusCode)
		if f.Detail != "" {
			fmt.Fprintf(&b, ", %s", strings.TrimSuffix(f.Detail, "."))
		}
		if f.LogPath != "" {
			fmt.Fprintf(&b, " (log %s)", f.LogPath)
		}
		b.WriteByte('\n')
	}
	fmt.Fprint(r.l.opt.Out, termtext.EscapeLines(b.String()))
}

// docsAutoClosed reports whether documentation closure is satisfied
// without running its steward (the reference's auto "no-change"): allowed
// by config, no agent reported a shared-plan doc delta, and the wave
// promotes no component (nothing for the matrix).
func (r *waveRun) docsAutoClosed() bool {
	if !r.l.opt.Lane.Validation.AutoClosure.AllowAutoDocNoChange || len(r.p.Wave.ComponentPromotions) > 0 {
		return false
	}
	for _, res := range r.results {
		if d := res.Summary.DocDelta; d != nil && d.State == "shared-plan" {
			return false
		}
	}
	return true
}
