package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/retry"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

func sessionFor(n int, id string) string { return lanes.SessionName(n, id) }

// shellWord quotes s for the coordination command shown in prompts.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (l *Launcher) available(cmd string) bool {
	if cmd == "" {
		return true
	}
	_, err := lookPath(cmd)
	return err == nil
}

var runDirRe = regexp.MustCompile(`^(.+)-a(\d+)$`)

// latestRun returns the highest-numbered run directory of an agent in a
// wave and its index (0 when none).
func latestRun(l lanes.Layout, n int, id string) (string, int) {
	entries, _ := os.ReadDir(l.RunsDir(n))
	best, dir := 0, ""
	want := lanes.SanitizeSession(id)
	for _, e := range entries {
		m := runDirRe.FindStringSubmatch(e.Name())
		if m == nil || m[1] != want {
			continue
		}
		if k, _ := strconv.Atoi(m[2]); k > best {
			best, dir = k, filepath.Join(l.RunsDir(n), e.Name())
		}
	}
	return dir, best
}

// reusable lists implementation agents whose last run exited 0 with the
// current prompt fingerprint and still passes its gate (files on disk
// included); retry.Reusable makes that decision from what the launcher
// reads here. Agents with an adoptable run from an interrupted launcher
// are adopted instead.
func (r *waveRun) reusable() []string {
	last := map[string]retry.LastRun{}
	current := map[string]string{}
	found := map[string]*agentResult{}
	ids := r.p.implementationAgents()
	for _, id := range ids {
		if _, ok := r.adoptable(id); ok {
			continue
		}
		dir, k := latestRun(r.l.opt.Layout, r.n, id)
		if k == 0 {
			continue
		}
		st, err := runtime.ReadStatus(filepath.Join(dir, lanes.StatusFile))
		if err != nil {
			continue
		}
		current[id] = r.p.Agents[id].Hash
		rec := retry.LastRun{PromptHash: st.PromptHash, Code: st.Code}
		// The gate reads the agent's files, so it is judged only for a run
		// that could be reused.
		if st.Code == 0 && st.PromptHash == current[id] {
			sum := r.summarize(id, dir, Outcome{Done: true, State: state.AgentCompleted, ExitCode: &st.Code}, st.Attempt)
			rec.GateOK = !r.p.Agents[id].Impl ||
				len(gate.Implementation(r.p.Wave, r.p.Bindings, map[string]gate.Summary{id: sum}, []string{id})) == 0
			found[id] = &agentResult{RunDir: dir, Summary: sum, Reused: true,
				Outcome: Outcome{Done: true, State: state.AgentCompleted, ExitCode: &st.Code}}
		}
		last[id] = rec
	}
	reusable := retry.Reusable(r.p.Wave, r.p.Bindings, last, current)
	var out []string
	for _, id := range ids {
		if slices.Contains(reusable, id) {
			r.results[id] = found[id]
			out = append(out, id)
		}
	}
	return out
}

func (r *waveRun) reuse(id string) {
	res := r.results[id]
	r.l.emit(r.n, state.EntityAgentRun, fmt.Sprintf("wave-%d-agent-%s", r.n, id), state.AgentReused, 0,
		state.AgentRunData{AgentID: id, RunDir: res.RunDir, LogPath: res.Summary.LogPath, ExitCode: res.Outcome.ExitCode,
			Detail: "last run passed with the same prompt; reused"})
}

// runAgents starts (or adopts) the given agents and waits for all of them.
func (r *waveRun) runAgents(ctx context.Context, attempt int, ids []string) error {
	var payloads []*runtime.Payload
	dirs := map[string]string{}
	for _, id := range ids {
		dir, ok := r.adoptable(id)
		delete(r.prior, id)
		if ok {
			dirs[id] = dir
			r.l.runs.Watch(dir)
			r.l.printf("wave %d: adopting %s from %s", r.n, id, dir)
			r.startedEvent(id, attempt, dir, true)
			continue
		}
		if over := r.checkBudget(attempt); over != "" {
			// Nothing new starts; what was adopted above still runs out.
			r.budgetOver = over
			if len(dirs) > 0 {
				if err := r.wait(ctx, attempt, dirs); err != nil {
					return err
				}
			}
			return errBudgetReached
		}
		r.offPause(id, attempt)
		p, err := r.payload(id, attempt)
		if err != nil {
			return err
		}
		payloads = append(payloads, p)
		dirs[id] = p.RunDir
	}
	if err := r.start(ctx, payloads, attempt); err != nil {
		return err
	}
	return r.wait(ctx, attempt, dirs)
}

func (r *waveRun) start(ctx context.Context, ps []*runtime.Payload, attempt int) error {
	if len(ps) == 0 {
		return nil
	}
	if stopRequested(r.l.opt.Layout.ControlPath()) {
		return ErrStopped
	}
	var execs []string
	for _, p := range ps {
		execs = append(execs, p.ExecutorID)
	}
	if err := r.holdForPause(ctx, attempt, execs); err != nil {
		return err
	}
	batch := [][]*runtime.Payload{ps}
	if r.l.opt.StaggerMs > 0 {
		batch = nil
		for _, p := range ps {
			batch = append(batch, []*runtime.Payload{p})
		}
	}
	// The agents' previous runs are finished (we never launch over a live
	// one); their sessions only remain for inspection.
	_ = r.l.runs.DiscardAll(ctx, ps)
	for i, b := range batch {
		if i > 0 {
			r.l.flush()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(r.l.opt.StaggerMs) * time.Millisecond):
			}
		}
		for _, p := range b {
			r.l.runs.Watch(p.RunDir)
			// Recorded before the session exists, so a launcher killed
			// right after Start still leaves every run findable by
			// adoption and `stop`.
			r.startedEvent(p.AgentID, attempt, p.RunDir, false)
		}
		r.fresh = true
		if err := r.l.runs.Start(ctx, b); err != nil {
			return r.startFailed(ctx, attempt, slices.Concat(batch[:i+1]...), err)
		}
		for _, p := range b {
			if k := p.Kubernetes; k != nil {
				r.l.printf("wave %d: %s started (%s) as job %s/%s; watch: attach --agent %s", r.n, p.AgentID, p.ExecutorID, k.Namespace, k.Name, p.AgentID)
				continue
			}
			r.l.printf("wave %d: %s started (%s); watch: tmux -L %s attach -t %s", r.n, p.AgentID, p.ExecutorID, p.SocketName, p.SessionName)
		}
	}
	return nil
}

func (r *waveRun) startedEvent(id string, attempt int, dir string, adopted bool) {
	d := state.Data(state.AgentRunData{AgentID: id, SessionName: sessionFor(r.n, id), Executor: r.p.Agents[id].Resolved.ID,
		RunDir: dir, LogPath: filepath.Join(dir, lanes.LogFile)})
	d["adopted"] = adopted
	if r.limitRelaunch[id] && !adopted {
		// After a usage limit: not a failed attempt either.
		delete(r.limitRelaunch, id)
		d["relaunchedFor"] = "usage-limit"
	} else if r.ask.relaunch[id] && !adopted {
		// A relaunch with answers is not a failed attempt: counted apart.
		delete(r.ask.relaunch, id)
		r.ask.relaunches[id]++
		d["relaunchedFor"] = "answer"
		d["answerRelaunches"] = r.ask.relaunches[id]
	}
	r.l.emit(r.n, state.EntityAgentRun, fmt.Sprintf("wave-%d-attempt-%d-agent-%s", r.n, attempt, id), "started", attempt, d)
}

// payload writes the prompt of the next run of agent id and returns its
// launch payload.
func (r *waveRun) payload(id string, attempt int) (*runtime.Payload, error) {
	l := r.l
	ap := r.p.Agents[id]
	_, k := latestRun(l.opt.Layout, r.n, id)
	k++
	pruneRuns(l.opt.Layout, r.n, id, k-keptRuns)
	dir := l.opt.Layout.RunDir(r.n, id, k)
	if err := jsonfile.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("run dir %s: %w", dir, err)
	}
	agentCmd := func(sub string) string {
		return fmt.Sprintf("%s %s --repo-root %s --lane %s --wave %d --agent %s",
			shellWord(l.opt.Self), sub, shellWord(l.opt.Lane.RepoRoot), l.opt.Lane.Name, r.n, shellWord(id))
	}
	answered := r.answersFor(id)
	prompt := executor.Prompt(executor.PromptInput{Wave: r.p.Wave, Agent: ap.Agent, Bindings: r.p.Bindings,
		Resolved: ap.Resolved, RepoRoot: l.opt.Lane.RepoRoot, Lane: l.opt.Lane.Name, Attempt: k,
		CoordCommand: agentCmd("coord post"), AskCommand: agentCmd("ask"), Answers: questions.PromptBlock(answered)})
	lim := executor.ResolveLimits(ap.Resolved, l.opt.TimeoutMinutes, l.opt.TimeoutSource)
	p, minutes, err := runs.Payload(runs.Spec{What: fmt.Sprintf("wave %d agent %s", r.n, id), Lane: l.opt.Lane, Layout: l.opt.Layout,
		RunID: lanes.RunID(r.n, id, k), RunDir: dir, Cwd: l.opt.Lane.RepoRoot, Session: sessionFor(r.n, id), Prompt: prompt + "\n",
		Build: executor.BuildInput{Agent: ap.Agent, Wave: r.p.Wave, Resolved: ap.Resolved, Attempt: k, Self: l.opt.Self,
			LaunchEnv: os.LookupEnv},
		WaveNumber: r.n, PromptHash: ap.Hash, OrchestratorID: l.opt.OrchestratorID, Minutes: lim.DeadlineMinutes,
		SilenceMs: int(l.opt.Lane.Runtime.Silence().Milliseconds()), Sandbox: l.sandbox})
	if err != nil {
		return nil, err
	}
	lim.DeadlineMinutes = minutes
	if err := tellAnswered(p, answered); err != nil {
		return nil, fmt.Errorf("wave %d agent %s: %w", r.n, id, err)
	}
	if err := writePreview(p, ap.Resolved, lim); err != nil {
		return nil, fmt.Errorf("wave %d agent %s: %w", r.n, id, err)
	}
	return p, nil
}

// finalize summarises a finished run and records its outcome.
func (r *waveRun) finalize(id, dir string, attempt int, o Outcome) {
	_, k := runIndex(dir)
	sum := r.summarize(id, dir, o, k)
	_ = jsonfile.Write(filepath.Join(dir, lanes.SummaryFile), sum)
	r.results[id] = &agentResult{RunDir: dir, Outcome: o, Summary: sum}
	code := runCode(o.State)
	if code == "" && o.ExitCode != nil {
		code = strconv.Itoa(*o.ExitCode)
	}
	r.l.emit(r.n, state.EntityAgentRun, fmt.Sprintf("wave-%d-attempt-%d-agent-%s", r.n, attempt, id), o.State, attempt,
		state.AgentRunData{AgentID: id, RunDir: dir, ExitCode: o.ExitCode, Signal: o.Signal, StatusCode: code, Detail: o.Detail, Usage: sum.Usage})
	what := "exit " + orDash(code)
	if o.ExitCode == nil && code != "" {
		what = code
	}
	r.l.printf("wave %d: %s %s (%s)", r.n, id, o.State, what)
	for _, a := range sum.Adjudicated {
		what := a.Kind
		if a.ComponentID != "" {
			what += " " + a.ComponentID
		}
		r.l.printf("wave %d: warning: %s's %s marker was malformed (%s) but carried every value; accepted on adjudication: %q",
			r.n, id, what, a.Reason, a.Line)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runIndex(dir string) (string, int) {
	m := runDirRe.FindStringSubmatch(filepath.Base(dir))
	if m == nil {
		return "", 0
	}
	k, _ := strconv.Atoi(m[2])
	return m[1], k
}

func (r *waveRun) summarize(id, dir string, o Outcome, attempt int) gate.Summary {
	logPath := filepath.Join(dir, lanes.LogFile)
	// Across a rotation too: the markers at the end are always read.
	logText, _ := runtime.ReadLogTail(logPath, 256<<10)
	ap := r.p.Agents[id]
	var started time.Time
	var spent *usage.Usage
	if rec, err := runtime.ReadRecord(filepath.Join(dir, lanes.RuntimeFile)); err == nil {
		started, spent = rec.StartedAt, rec.Usage
	}
	s := gate.Summarize(gate.SummaryInput{Agent: ap.Agent, Bindings: r.p.Bindings, Log: logText, ExitCode: o.ExitCode,
		Signal: o.Signal, FS: os.DirFS(r.l.opt.Lane.RepoRoot), LogPath: logPath, PromptHash: ap.Hash, Attempt: attempt,
		CompletedAt: r.l.now(), StartedAt: started})
	s.AgentID = id
	s.Usage = spent
	if s.TerminationHint == "" && o.ExitCode == nil && o.Detail != "" {
		// No exit status and nothing in the log: the runtime's verdict is
		// all there is to say why (a pod that could not start, a runner
		// lost), and the report says it.
		s.TerminationHint = o.Detail
	}
	return s
}

// interruptedRuns finds the runs of a wave run whose launcher died: when
// the wave's last wave_run event is "started", every agent run started
// after it is adoptable (live runs are waited on, finished ones used).
func interruptedRuns(eventsPath string, n int) map[string]string {
	evs, _, _ := state.ReadEvents(eventsPath)
	start := -1
	for i, ev := range evs {
		if ev.Wave == n && ev.EntityType == state.EntityWaveRun {
			start = i
			if ev.Action != "started" {
				start = -1
			}
		}
	}
	out := map[string]string{}
	if start < 0 {
		return out
	}
	for _, ev := range evs[start+1:] {
		if ev.Wave != n || ev.EntityType != state.EntityAgentRun || ev.Action != "started" {
			continue
		}
		id, _ := ev.Data["agentId"].(string)
		dir, _ := ev.Data["runDir"].(string)
		if id != "" && dir != "" {
			out[id] = dir
		}
	}
	return out
}

// lastFailures returns the failures recorded when the wave last ended.
func lastFailures(eventsPath string, n int) []gate.Failure {
	evs, _, _ := state.ReadEvents(eventsPath)
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.Wave == n && ev.EntityType == state.EntityWaveRun && ev.Action != "started" {
			var d struct {
				Failures []gate.Failure `json:"failures"`
			}
			decodeData(ev.Data, &d)
			return d.Failures
		}
	}
	return nil
}

func stopRequested(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func decodeData(m map[string]any, v any) {
	b, _ := json.Marshal(m)
	_ = json.Unmarshal(b, v)
}

var lookPath = exec.LookPath

// adoptable returns the run of agent id left by an interrupted launcher
// if it may stand for this wave run: it got as far as its runtime record,
// it ran the agent's current prompt, and — for closure agents — nothing
// upstream has been run afresh since (a new implementation result would
// make its verdict stale).
func (r *waveRun) adoptable(id string) (string, bool) {
	dir, ok := r.prior[id]
	if !ok {
		return "", false
	}
	p, err := runtime.ReadPayload(filepath.Join(dir, lanes.LaunchFile))
	if err != nil || p.PromptHash != r.p.Agents[id].Hash {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(dir, lanes.RuntimeFile)); err != nil {
		return "", false
	}
	if r.p.Agents[id].Closure && r.fresh {
		return "", false
	}
	return dir, true
}

// keptRuns bounds the run directories kept per agent and wave: every
// attempt gets a new directory, and without a bound reruns would grow the
// state without limit.
const keptRuns = 8

// pruneRuns removes an agent's run directories numbered below min.
func pruneRuns(l lanes.Layout, n int, id string, min int) {
	if min <= 1 {
		return
	}
	entries, _ := os.ReadDir(l.RunsDir(n))
	want := lanes.SanitizeSession(id)
	for _, e := range entries {
		if m := runDirRe.FindStringSubmatch(e.Name()); m != nil && m[1] == want {
			if k, _ := strconv.Atoi(m[2]); k < min {
				_ = os.RemoveAll(filepath.Join(l.RunsDir(n), e.Name()))
			}
		}
	}
}
