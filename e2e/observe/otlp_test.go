package observe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/telemetry/otlptest"
)

// envDump prints the agent's OTEL_RESOURCE_ATTRIBUTES into its log, then
// runs the rest of its argv (the local agent doing the work).
const envDump = "#!/bin/sh\necho \"otel-attrs: $OTEL_RESOURCE_ATTRIBUTES\"\nexec \"$@\"\n"

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "dump.sh")
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func attrsLine(t *testing.T, log string) string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.ReplaceAll(string(b), "\r", ""), "\n") {
		if v, ok := strings.CutPrefix(l, "otel-attrs: "); ok {
			return v
		}
	}
	t.Fatalf("%s printed no OTEL_RESOURCE_ATTRIBUTES:\n%s", log, b)
	return ""
}

func byID(spans []otlptest.Span) map[string]otlptest.Span {
	out := map[string]otlptest.Span{}
	for _, s := range spans {
		out[s.SpanID] = s
	}
	return out
}

// A launch with OTEL_EXPORTER_OTLP_ENDPOINT set sends its wave as one
// trace — the wave, its closure stages, each agent run under its stage —
// and its metrics; the agents get OTEL_RESOURCE_ATTRIBUTES naming where
// they run, the user's own attributes kept.
func TestALaunchSendsItsWaveAsOneTraceOfStagesAndAgents(t *testing.T) {
	t.Parallel()
	rcv := otlptest.New(t)
	r := e2etest.NewRepo(t)
	dump := writeScript(t, envDump)
	a1 := e2etest.ImplAgent("A1", "id: shell", fmt.Sprintf("shell.command: %s %s local --prompt-file {prompt_file}", dump, e2etest.Bin()))
	r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
	env := append(rcv.Env(), "OTEL_RESOURCE_ATTRIBUTES=team=infra")
	res := r.RunWith(e2etest.Context(t), env, "launch", "--lane", "main", "--no-dashboard")
	if res.Code != 0 {
		t.Fatalf("launch: %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if bad := rcv.Bad(); len(bad) > 0 {
		t.Fatalf("the receiver could not read what was sent: %v", bad)
	}
	spans := rcv.Spans()
	waves := otlptest.Named(spans, "wave")
	if len(waves) != 1 {
		t.Fatalf("%d wave spans, want 1: %+v", len(waves), spans)
	}
	w := waves[0]
	if w.Parent != "" || w.Attrs["wave.lane"] != "main" || w.Attrs["wave.number"] != int64(0) || w.Attrs["wave.outcome"] != "completed" || w.Error {
		t.Errorf("wave span %+v", w)
	}
	ids := byID(spans)
	agents := map[string]otlptest.Span{}
	for _, s := range spans {
		if s.TraceID != w.TraceID {
			t.Errorf("span %s %v is in trace %s, not the wave's %s", s.Name, s.Attrs, s.TraceID, w.TraceID)
		}
		if s.Name == "wave.agent" {
			agents[s.Attrs["wave.agent"].(string)] = s
		}
	}
	if a := agents["A1"]; a.Parent != w.SpanID || a.Attrs["wave.executor"] != "shell" || a.Attrs["wave.exit_code"] != int64(0) ||
		a.Attrs["wave.run_id"] != "w0-A1-a1" || a.Attrs["wave.outcome"] != "completed" {
		t.Errorf("A1's span %+v: want it under the wave, shell, exit 0, run w0-A1-a1", a)
	}
	stages := otlptest.Named(spans, "wave.closure")
	if len(stages) == 0 {
		t.Fatal("no closure stage span")
	}
	for _, st := range stages {
		if st.Parent != w.SpanID {
			t.Errorf("closure stage %v is not under the wave", st.Attrs)
		}
	}
	for id, a := range agents {
		if id == "A1" {
			continue
		}
		if p := ids[a.Parent]; p.Name != "wave.closure" {
			t.Errorf("closure agent %s is under %q, want its closure stage", id, p.Name)
		}
	}
	if len(agents) != 1+len(e2etest.ClosureAgents()) {
		t.Errorf("%d agent spans, want one per agent: %v", len(agents), agents)
	}
	got := attrsLine(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), "agent.log"))
	want := "team=infra,wave.lane=main,wave.number=0,wave.agent=A1,wave.attempt=1,wave.run_id=w0-A1-a1,wave.executor=shell"
	if got != want {
		t.Errorf("A1's OTEL_RESOURCE_ATTRIBUTES = %q, want %q", got, want)
	}
	pts := rcv.Points()
	if p, ok := otlptest.Last(pts, "wave.agent.runs", map[string]any{"wave.outcome": "completed", "wave.executor": "shell"}); !ok || p.Value != 1 {
		t.Errorf("wave.agent.runs for the shell agent = %+v (%v), want 1", p, ok)
	}
	if p, ok := otlptest.Last(pts, "wave.waves", map[string]any{"wave.outcome": "completed"}); !ok || p.Value != 1 {
		t.Errorf("wave.waves completed = %+v (%v), want 1", p, ok)
	}
}

// A backlog run sends one trace: the run, an issue span per issue, its
// worker runs, its merge and the merge's verify under it; the merges and
// the issues' tokens and cost are counted.
func TestABacklogRunSendsItsIssuesWorkersMergesAndVerifiesAsOneTrace(t *testing.T) {
	t.Parallel()
	rcv := otlptest.New(t)
	r := e2etest.NewBacklogRepo(t)
	r.SetBacklogKey(t, "verify: [sh, -c, 'echo verified']")
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	r.Issue(2, "Add a farewell", "Files: src/bye/**")
	run := r.RunWith(e2etest.Context(t), append(r.Env(), rcv.Env()...), "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if run.Code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	if bad := rcv.Bad(); len(bad) > 0 {
		t.Fatalf("the receiver could not read what was sent: %v", bad)
	}
	spans := rcv.Spans()
	roots := otlptest.Named(spans, "backlog.run")
	if len(roots) != 1 {
		t.Fatalf("%d backlog.run spans, want 1: %+v", len(roots), spans)
	}
	root := roots[0]
	if root.Parent != "" || root.Attrs["wave.backlog.run_id"] != r.RunID() || root.Attrs["wave.exit_code"] != int64(0) {
		t.Errorf("run span %+v", root)
	}
	ids := byID(spans)
	issues := map[int64]otlptest.Span{}
	for _, s := range otlptest.Named(spans, "backlog.issue") {
		if s.Parent != root.SpanID || s.TraceID != root.TraceID {
			t.Errorf("issue span %v is not under the run", s.Attrs)
		}
		issues[s.Attrs["wave.issue"].(int64)] = s
	}
	for _, n := range []int64{1, 2} {
		is, ok := issues[n]
		if !ok || is.Attrs["wave.outcome"] != "merged" {
			t.Errorf("issue #%d span %+v: want one, merged", n, is)
		}
	}
	for _, kind := range []string{"backlog.worker", "backlog.merge"} {
		got := otlptest.Named(spans, kind)
		if len(got) < 2 {
			t.Errorf("%d %s spans, want one per issue at least", len(got), kind)
		}
		for _, s := range got {
			if p := ids[s.Parent]; p.Name != "backlog.issue" || p.Attrs["wave.issue"] != s.Attrs["wave.issue"] {
				t.Errorf("%s of #%v is under %q #%v, want its issue", kind, s.Attrs["wave.issue"], p.Name, p.Attrs["wave.issue"])
			}
		}
	}
	for _, s := range otlptest.Named(spans, "backlog.worker") {
		if ex, _ := s.Attrs["wave.executor"].(string); s.Attrs["wave.outcome"] != "ready" || s.Attrs["wave.exit_code"] != int64(0) || ex == "" || s.Error {
			t.Errorf("worker span %+v: want ready, exit 0, its executor", s.Attrs)
		}
	}
	verifies := otlptest.Named(spans, "backlog.verify")
	if len(verifies) < 2 {
		t.Errorf("%d verify spans, want one per merge", len(verifies))
	}
	for _, s := range verifies {
		if ids[s.Parent].Name != "backlog.merge" || s.Attrs["wave.outcome"] != "passed" {
			t.Errorf("verify span %+v: want passed, under its merge", s)
		}
	}
	pts := rcv.Points()
	if p, ok := otlptest.Last(pts, "wave.backlog.merges", map[string]any{"wave.lane": "main"}); !ok || p.Value != 2 {
		t.Errorf("wave.backlog.merges = %+v (%v), want 2", p, ok)
	}
	if p, ok := otlptest.Last(pts, "wave.agent.runs", map[string]any{"wave.mode": "backlog", "wave.outcome": "ready"}); !ok || p.Value != 2 {
		t.Errorf("wave.agent.runs of backlog workers = %+v (%v), want 2", p, ok)
	}
}
