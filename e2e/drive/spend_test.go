package drive

import (
	"encoding/json"
	"fmt"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// fakeVendor is an agent CLI as the runner sees it: it prints one usage
// event in the named vendor's format (claude stream-json, codex exec
// --json, opencode run --format json), waits for a release file unless it
// is "-", and then does the work of the built-in local agent.
const fakeVendor = `#!/bin/sh
vendor=$1; release=$2; shift 2
case $vendor in
claude) printf '%s\n' '{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":1000,"output_tokens":200,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}' ;;
codex) printf '%s\n' '{"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":500,"output_tokens":300}}' ;;
opencode) printf '%s\n' '{"type":"step_finish","part":{"id":"s1","type":"step-finish","cost":0.25,"tokens":{"input":400,"output":100,"reasoning":0,"cache":{"read":0,"write":0}}}}' ;;
esac
if [ "$release" != - ]; then
  while [ ! -e "$release" ]; do sleep 0.05; done
fi
exec "$@"
`

// Tokens each vendor's line above reports (every kind added up).
const (
	claudeTokens   = 1200
	codexTokens    = 2300
	opencodeTokens = 500
)

func writeFakeVendor(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-vendor.sh")
	if err := os.WriteFile(p, []byte(fakeVendor), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// vendorAgent is an implementation agent run through fakeVendor.
func vendorAgent(id, script, vendor, release string, knobs ...string) e2etest.Agent {
	cmd := fmt.Sprintf("shell.command: sh %s %s %s %s local --prompt-file {prompt_file}", script, vendor, release, e2etest.Bin())
	for _, k := range knobs {
		if v, ok := strings.CutPrefix(k, "local-args: "); ok {
			cmd += " " + v
			continue
		}
	}
	ks := []string{"id: shell", cmd}
	for _, k := range knobs {
		if !strings.HasPrefix(k, "local-args: ") {
			ks = append(ks, k)
		}
	}
	return e2etest.ImplAgent(id, ks...)
}

type usageDoc struct {
	Rows []struct {
		Key   string      `json:"key"`
		Runs  int         `json:"runs"`
		Usage usage.Usage `json:"usage"`
	} `json:"rows"`
	Total usage.Usage `json:"total"`
	Runs  int         `json:"runs"`
}

func usageJSON(t *testing.T, r *e2etest.Repo, args ...string) usageDoc {
	t.Helper()
	res := r.Run(e2etest.Context(t), append([]string{"usage", "--json"}, args...)...)
	var d usageDoc
	if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &d) != nil {
		t.Fatalf("usage %v: exit %d\n%s\n%s", args, res.Code, res.Stdout, res.Stderr)
	}
	return d
}

func (d usageDoc) row(key string) (usage.Usage, int) {
	for _, r := range d.Rows {
		if r.Key == key {
			return r.Usage, r.Runs
		}
	}
	return usage.Usage{}, 0
}

// The wave's spend is the sum of its runs, each counted once: A1 fails
// its first attempt and is retried (two runs, both counted); A2 is still
// running when the launcher is killed with kill -9 (its live figure is in
// its runtime record, and `usage` shows it), and the next launch adopts
// it (one run, counted once). status --json and `usage` agree.
func TestWaveSpendCountsEveryRunOnceAcrossRetryAndAdoption(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	script := writeFakeVendor(t)
	release := filepath.Join(t.TempDir(), "release-A2")
	r.WriteWave(0, append([]e2etest.Agent{
		vendorAgent("A1", script, "codex", "-", "local-args: --fail-attempts 1"),
		vendorAgent("A2", script, "claude", release),
		vendorAgent("A3", script, "opencode", "-"),
	}, e2etest.ClosureAgents()...)...)
	ctx := e2etest.Context(t)
	first := r.Command(ctx, "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	a2 := filepath.Join(r.Layout().RunDir(0, "A2", 1), "runtime.json")
	e2etest.WaitFor(t, "A2's live usage in its runtime record", 60*time.Second, func() bool {
		b, err := os.ReadFile(a2)
		return err == nil && strings.Contains(string(b), `"inputTokens": 1000`)
	})
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
	if u, runs := usageJSON(t, r, "--by", "agent").row("wave 0 A2"); runs != 1 || u.Tokens() != claudeTokens {
		t.Fatalf("after kill -9: A2 %d runs %d tokens, want its live %d", runs, u.Tokens(), claudeTokens)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, adopted := e2etest.AgentStarts(r.Events())
	if launched["A1"] != 2 || launched["A2"] != 1 || adopted["A2"] != 1 {
		t.Fatalf("launched %v adopted %v: want A1 twice (a retry) and A2 once, adopted once", launched, adopted)
	}
	want := int64(2*codexTokens + claudeTokens + opencodeTokens)
	d := usageJSON(t, r, "--by", "agent")
	if d.Total.Tokens() != want {
		t.Errorf("usage total %d tokens, want %d (A1 twice, A2 once, A3 once)", d.Total.Tokens(), want)
	}
	if u, runs := d.row("wave 0 A1"); runs != 2 || u.Tokens() != 2*codexTokens {
		t.Errorf("A1: %d runs %d tokens, want 2 runs %d", runs, u.Tokens(), 2*codexTokens)
	}
	if u, runs := d.row("wave 0 A3"); runs != 1 || u.CostUSD == nil || *u.CostUSD != 0.25 {
		t.Errorf("A3: %d runs, usage %+v: want opencode's own cost 0.25", runs, u)
	}
	var st struct {
		Usage *usage.Usage `json:"usage"`
		Waves []struct {
			Usage  *usage.Usage `json:"usage"`
			Agents []struct {
				ID    string       `json:"id"`
				Usage *usage.Usage `json:"usage"`
			} `json:"agents"`
		} `json:"waves"`
	}
	res := r.Run(e2etest.Context(t), "status", "--json")
	if err := json.Unmarshal([]byte(res.Stdout), &st); err != nil || len(st.Waves) != 1 {
		t.Fatalf("status --json: %v\n%s", err, res.Stdout)
	}
	if st.Usage == nil || st.Usage.Tokens() != want || st.Waves[0].Usage == nil || st.Waves[0].Usage.Tokens() != want {
		t.Errorf("status usage lane %+v wave %+v, want %d tokens", st.Usage, st.Waves[0].Usage, want)
	}
	for _, a := range st.Waves[0].Agents {
		if a.ID == "A8" && a.Usage != nil {
			t.Errorf("A8 printed no usage, yet status shows %+v", *a.Usage)
		}
		if a.ID == "A2" && (a.Usage == nil || a.Usage.Tokens() != claudeTokens) {
			t.Errorf("A2 usage %+v, want %d tokens", a.Usage, claudeTokens)
		}
	}
	var sum struct {
		Usage *usage.Usage `json:"usage"`
	}
	e2etest.ReadJSONFile(t, filepath.Join(r.Layout().RunDir(0, "A2", 1), "summary.json"), &sum)
	if sum.Usage == nil || sum.Usage.Tokens() != claudeTokens || sum.Usage.CostUSD == nil {
		t.Errorf("A2 summary.json usage %+v, want %d tokens priced", sum.Usage, claudeTokens)
	}
	e2etest.ReadJSONFile(t, filepath.Join(r.Layout().RunDir(0, "A8", 1), "summary.json"), &sum)
	if sum.Usage != nil {
		t.Errorf("A8 summary.json usage %+v, want null", *sum.Usage)
	}
}

// An agent whose streamed usage crosses its budget.tokens is stopped by
// its runner as budget-exceeded, is not retried on the same budget, and
// the wave stops with exit 43 naming the cap and the spend.
func TestAgentOverItsTokenBudgetIsStoppedAndNotRetried(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	script := writeFakeVendor(t)
	never := filepath.Join(t.TempDir(), "never")
	r.WriteWave(0, append([]e2etest.Agent{vendorAgent("A1", script, "claude", never, "budget.tokens: 1000")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 43 || !strings.Contains(res.Stdout, "budget exceeded: tokens 1.2k of 1.0k") {
		t.Fatalf("exit %d, want 43 naming the cap and the spend\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if launched, _ := e2etest.AgentStarts(r.Events()); launched["A1"] != 1 {
		t.Fatalf("A1 launched %d times, want once: no retry on the same budget", launched["A1"])
	}
	var rec struct {
		BudgetExceeded bool         `json:"budgetExceeded"`
		Usage          *usage.Usage `json:"usage"`
	}
	e2etest.ReadJSONFile(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), "runtime.json"), &rec)
	if !rec.BudgetExceeded || rec.Usage == nil || rec.Usage.Tokens() != claudeTokens {
		t.Fatalf("record %+v", rec)
	}
	st := r.Run(e2etest.Context(t), "status", "--json")
	if !strings.Contains(st.Stdout, `"state": "budget-exceeded"`) {
		t.Errorf("status does not show A1 budget-exceeded:\n%s", st.Stdout)
	}
}

// A wave whose runtime.budget.wave is reached starts nothing new: A1 and
// A2 spend 1.7k tokens, so under a 1.5k cap no closure agent is started
// and the launch exits 43 naming the cap and the spend; under a 2k cap
// the wave completes, with a budget warning event at 80%.
func TestWaveAtItsBudgetStartsNothingNew(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cap  int
		code int
	}{{1500, 43}, {2000, 0}} {
		t.Run(fmt.Sprint(c.cap), func(t *testing.T) {
			r := e2etest.NewRepo(t)
			script := writeFakeVendor(t)
			cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			r.Write("wave.config.yaml", strings.Replace(string(cfg), "runtime:\n", fmt.Sprintf("runtime:\n  budget:\n    wave: {tokens: %d}\n", c.cap), 1))
			r.WriteWave(0, append([]e2etest.Agent{vendorAgent("A1", script, "claude", "-"), vendorAgent("A2", script, "opencode", "-")}, e2etest.ClosureAgents()...)...)
			res := e2etest.Launch(t, r)
			launched, _ := e2etest.AgentStarts(r.Events())
			closure := launched["A8"] + launched["A9"] + launched["A0"]
			actions := map[string]bool{}
			for _, ev := range r.Events() {
				if ev.EntityType == "budget" {
					actions[ev.Action] = true
				}
			}
			if c.code == 0 {
				if res.Code != 0 || closure != 3 || !actions["warning"] || actions["exceeded"] {
					t.Fatalf("exit %d, closure starts %d, budget events %v: want 0, 3 and a warning\n%s", res.Code, closure, actions, res.Stdout)
				}
				return
			}
			if res.Code != 43 || !strings.Contains(res.Stdout, "runtime.budget.wave: tokens 1.7k of 1.5k") || closure != 0 || !actions["exceeded"] {
				t.Fatalf("exit %d, closure starts %d, budget events %v: want 43 naming the cap and the spend, no closure\n%s\n%s",
					res.Code, closure, actions, res.Stdout, res.Stderr)
			}
		})
	}
}

// useVendorWorkers makes every backlog worker fakeVendor printing
// vendor's usage line, then the built-in local worker; extra are more
// backlog.executor keys.
func useVendorWorkers(r *e2etest.BacklogRepo, script, vendor string, extra ...string) {
	useVendorWorkersWaiting(r, script, vendor, "-", extra...)
}

// useVendorWorkersWaiting is useVendorWorkers whose workers wait for the
// release file after printing their usage.
func useVendorWorkersWaiting(r *e2etest.BacklogRepo, script, vendor, release string, extra ...string) {
	r.T.Helper()
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		r.T.Fatal(err)
	}
	block := fmt.Sprintf("  executor:\n    id: shell\n    shell.command: %q", fmt.Sprintf("sh %s %s %s %s local-worker --prompt-file {prompt_file}", script, vendor, release, e2etest.Bin()))
	for _, e := range extra {
		block += "\n    " + e
	}
	if !e2etest.WorkerExecutor.Match(cfg) {
		r.T.Fatalf("wave.config.yaml has no scaffolded backlog.executor block:\n%s", cfg)
	}
	r.Write("wave.config.yaml", e2etest.WorkerExecutor.ReplaceAllLiteralString(string(cfg), block))
}

func finalPRBody(t *testing.T, r *e2etest.BacklogRepo) string {
	t.Helper()
	prs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "backlog-local", "prs", "*"))
	if len(prs) != 1 {
		t.Fatalf("%d final PR files, want 1: %v", len(prs), prs)
	}
	body, _ := os.ReadFile(prs[0])
	return string(body)
}

// After a local backlog run, `usage --by issue` and the final PR body
// carry the same figures: the run's total and each issue's spend.
func TestUsageByIssueMatchesTheFinalPRBody(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	useVendorWorkers(r, writeFakeVendor(t), "claude")
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	r.Issue(2, "Add a farewell", "Files: src/bye/**")
	if run := r.RunEnv(e2etest.Context(t), "backlog", "run", "--issues", "1,2", "--no-dashboard"); run.Code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	body := finalPRBody(t, r)
	d := usageJSON(t, r.Repo, "--by", "issue")
	if len(d.Rows) != 2 || d.Total.Tokens() != 2*claudeTokens {
		t.Fatalf("usage --by issue: %+v, want two issues of %d tokens", d, claudeTokens)
	}
	for _, row := range append(d.Rows, struct {
		Key   string      `json:"key"`
		Runs  int         `json:"runs"`
		Usage usage.Usage `json:"usage"`
	}{Key: "total", Usage: d.Total}) {
		u := row.Usage
		line := fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", row.Key, usage.TokensCell(u.InputTokens), usage.TokensCell(u.OutputTokens), usage.TokensCell(u.CacheReadTokens),
			usage.TokensCell(u.CacheWriteTokens), usage.CostCell(u.CostUSD))
		if !strings.Contains(body, line) {
			t.Errorf("the final PR body lacks %q:\n%s", line, body)
		}
	}
	if !strings.Contains(body, "Spent: "+d.Total.String()+".") {
		t.Errorf("the final PR body lacks the run total %q:\n%s", d.Total.String(), body)
	}
	st := r.RunEnv(e2etest.Context(t), "backlog", "status")
	if !strings.Contains(st.Stdout, "spent "+d.Total.String()) {
		t.Errorf("backlog status lacks the run total:\n%s", st.Stdout)
	}
}

// A backlog run whose backlog.budget.Run is spent starts no new worker:
// with width 1, #1's worker spends past the cap, #2 is dropped unstarted,
// and the run exits 43 naming the cap and the spend.
func TestBacklogRunAtItsBudgetStartsNoNewWorker(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	useVendorWorkers(r, writeFakeVendor(t), "codex")
	cfg, _ := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	r.Write("wave.config.yaml", strings.Replace(string(cfg), "backlog:\n", "backlog:\n  budget:\n    run: {tokens: 2000}\n", 1))
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	r.Issue(2, "Add a farewell", "Files: src/bye/**")
	run := r.RunEnv(e2etest.Context(t), "backlog", "run", "--issues", "1,2", "--width", "1", "--no-dashboard")
	if run.Code != 43 || !strings.Contains(run.Stdout, "backlog.budget.run: tokens 2.3k of 2.0k") {
		t.Fatalf("run: exit %d, want 43 naming the cap and the spend\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	if _, err := os.Stat(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog")); err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "runs", "i2-*"))
	if len(dirs) != 0 {
		t.Fatalf("#2 got a worker after the budget was spent: %v", dirs)
	}
}

// A backlog worker whose streamed usage reaches its budget.tokens is
// stopped and parked, not salvaged: a relaunch on the same budget would
// spend as much again.
func TestBacklogWorkerOverItsBudgetIsParkedNotSalvaged(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	useVendorWorkersWaiting(r, writeFakeVendor(t), "claude", filepath.Join(t.TempDir(), "never"), `budget.tokens: "1000"`)
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	run := r.RunEnv(e2etest.Context(t), "backlog", "run", "--issues", "1", "--no-dashboard")
	if run.Code != 43 || !strings.Contains(run.Stdout, "budget exceeded: tokens 1.2k of 1.0k") {
		t.Fatalf("run: exit %d, want 43 parking #1 at its budget\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	if dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "runs", "i1-a2")); len(dirs) != 0 {
		t.Fatalf("#1 was relaunched on the same budget: %v", dirs)
	}
	st := r.RunEnv(e2etest.Context(t), "backlog", "status", "--json")
	if !strings.Contains(st.Stdout, `"state": "parked"`) {
		t.Errorf("#1 not parked:\n%s", st.Stdout)
	}
}

// An agent stopped at its own budget says what to do next, as the lane
// cap's stop does: raise the agent's cap, then resume the wave.
func TestAnAgentStoppedAtItsBudgetSaysHowToGoOn(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	script := writeFakeVendor(t)
	never := filepath.Join(t.TempDir(), "never")
	r.WriteWave(0, append([]e2etest.Agent{vendorAgent("A1", script, "claude", never, "budget.tokens: 1000")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 43 || !strings.Contains(res.Stdout, "raise budget.tokens or budget.costUsd in A1's ### Executor block (or its profile), then `wave-orchestrator resume -w 0`") {
		t.Fatalf("exit %d, want 43 with the next step\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

// A lane cap that stops running agents (runtime.budget.onExceeded: stop)
// ends the wave blocked after the attempt it stopped: no retry is
// announced or counted, since nothing new may start.
func TestALaneCapThatStopsAgentsAnnouncesNoRetry(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	script := writeFakeVendor(t)
	never := filepath.Join(t.TempDir(), "never")
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write("wave.config.yaml", strings.Replace(string(cfg), "runtime:\n", "runtime:\n  budget:\n    lane: {tokens: 1000}\n    onExceeded: stop\n", 1))
	r.WriteWave(0, append([]e2etest.Agent{vendorAgent("A1", script, "claude", never)}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 43 || strings.Contains(res.Stdout, "retrying") || !strings.Contains(res.Stdout, "runtime.budget.lane: tokens 1.2k of 1.0k") {
		t.Fatalf("exit %d, want 43 naming the cap and no retry\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var lane state.Lane
	if err := json.Unmarshal([]byte(r.Run(e2etest.Context(t), "status", "--json").Stdout), &lane); err != nil || len(lane.Waves) != 1 {
		t.Fatalf("status --json: %v", err)
	}
	if w := lane.Waves[0]; w.Status != state.WaveBlocked || w.Attempt != 1 {
		t.Fatalf("wave %s at attempt %d/%d, want blocked at attempt 1", w.Status, w.Attempt, w.MaxAttempts)
	}
}
