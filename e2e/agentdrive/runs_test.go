package agentdrive

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// connectIn is connect for a repository whose commands need more
// environment (a backlog repository's state home).
func connectIn(t *testing.T, r *e2etest.Repo, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(e2etest.Bin(), append([]string{"mcp"}, args...)...)
	cmd.Dir = r.Root
	cmd.Env = append(r.Command(context.Background()).Env, env...)
	client := mcp.NewClient(&mcp.Implementation{Name: "agentdrive-test", Version: "1"}, nil)
	s, err := client.Connect(e2etest.Context(t), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to wave-orchestrator mcp: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// mustJSON decodes a tool's successful JSON result into v.
func mustJSON(t *testing.T, what, text string, isErr bool, v any) {
	t.Helper()
	if isErr {
		t.Fatalf("%s: tool error %s", what, text)
	}
	// A result may carry the plan after its JSON (backlog submissions).
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, text)
	}
}

type ended struct {
	Ended    bool `json:"ended"`
	ExitCode int  `json:"exitCode"`
	Run      struct {
		State   string `json:"state"`
		Command string `json:"command"`
	} `json:"run"`
}

// An agent runs a wave the way the skill tells it to: submit returns a
// run id at once, wait (bounded) returns when the run ended with its exit
// code, run_state says completed, and output_tail shows an agent's output
// as fenced, untrusted data.
func TestAWaveSubmittedThroughTheToolsRunsToTheEnd(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	s := connect(t, r, "--allow-write")
	var sub struct {
		RunID  string `json:"runId"`
		Lane   string `json:"lane"`
		Queued bool   `json:"queued"`
	}
	text, isErr := call(t, s, "submit", map[string]any{"kind": "launch", "noDashboard": true})
	mustJSON(t, "submit", text, isErr, &sub)
	if sub.RunID == "" || sub.Lane != "main" || sub.Queued {
		t.Fatalf("submit: %s", text)
	}
	var w ended
	for i := 0; !w.Ended; i++ {
		if i == 4 {
			t.Fatalf("the run did not end in four waits: %+v", w)
		}
		text, isErr = call(t, s, "wait", map[string]any{"runId": sub.RunID, "timeoutSeconds": 60})
		mustJSON(t, "wait", text, isErr, &w)
	}
	if w.ExitCode != 0 || w.Run.State != "completed" || w.Run.Command != "launch" {
		t.Fatalf("wait: %s", text)
	}
	text, isErr = call(t, s, "run_state", map[string]any{"runId": sub.RunID})
	if isErr || !strings.Contains(text, `"state": "completed"`) {
		t.Fatalf("run_state: %v %s", isErr, text)
	}
	text, isErr = call(t, s, "output_tail", map[string]any{"wave": 0, "agent": "A1", "lines": 20})
	if isErr || !strings.Contains(text, "wave 0 agent A1") || !strings.Contains(text, "untrusted") || !strings.Contains(text, "[wave-proof]") {
		t.Fatalf("output_tail: %v %s", isErr, text)
	}
	var st struct {
		Waves []struct {
			Status string `json:"status"`
		} `json:"waves"`
	}
	text, isErr = call(t, s, "status", nil)
	mustJSON(t, "status", text, isErr, &st)
	if len(st.Waves) != 1 || st.Waves[0].Status != "completed" {
		t.Fatalf("status after the run: %s", text)
	}
}

// A backlog run goes through the same queue as a launch: the plan is
// read first (changing nothing), an issue the source lacks is refused
// before anything is queued, and the submitted run merges its issues,
// which backlog_status and output_tail then show.
func TestABacklogRunSubmittedThroughTheToolsMergesItsIssues(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	r.Issue(2, "Add a farewell", "Files: src/bye/**")
	s := connectIn(t, r.Repo, r.Env(), "--allow-write")
	var plan struct {
		Width  int `json:"width"`
		Groups []struct {
			Issues []int `json:"issues"`
		} `json:"groups"`
	}
	text, isErr := call(t, s, "backlog_plan", map[string]any{"issues": []int{1, 2}})
	mustJSON(t, "backlog_plan", text, isErr, &plan)
	if plan.Width != 2 || len(plan.Groups) != 2 || len(r.BacklogRuns()) != 0 {
		t.Fatalf("plan: %s (runs %v)", text, r.BacklogRuns())
	}
	text, isErr = call(t, s, "submit", map[string]any{"kind": "backlog", "issues": []int{1, 9}, "noDashboard": true})
	if !isErr || !strings.Contains(text, "no issue #9") || !strings.Contains(text, "exit 2") {
		t.Fatalf("submit with a missing issue: %v %s", isErr, text)
	}
	r.NothingClaimed(t)
	var sub struct {
		RunID string `json:"runId"`
	}
	text, isErr = call(t, s, "submit", map[string]any{"kind": "backlog", "issues": []int{1, 2}, "noDashboard": true})
	mustJSON(t, "submit", text, isErr, &sub)
	if !strings.Contains(text, "The plan it starts from") {
		t.Fatalf("submit did not show the plan: %s", text)
	}
	var w ended
	for i := 0; !w.Ended; i++ {
		if i == 4 {
			t.Fatalf("the backlog run did not end in four waits: %+v", w)
		}
		text, isErr = call(t, s, "wait", map[string]any{"runId": sub.RunID, "timeoutSeconds": 60})
		mustJSON(t, "wait", text, isErr, &w)
	}
	if w.ExitCode != 0 || w.Run.State != "completed" || w.Run.Command != "backlog" {
		t.Fatalf("wait: %s", text)
	}
	var st struct {
		State string `json:"state"`
		Tally struct {
			Merged int `json:"merged"`
		} `json:"tally"`
	}
	text, isErr = call(t, s, "backlog_status", nil)
	mustJSON(t, "backlog_status", text, isErr, &st)
	if st.State != "finished" || st.Tally.Merged != 2 {
		t.Fatalf("backlog_status: %s", text)
	}
	text, isErr = call(t, s, "output_tail", map[string]any{"issue": 2})
	if isErr || !strings.Contains(text, "issue #2's worker") || !strings.Contains(text, "[backlog-result]") {
		t.Fatalf("output_tail of #2: %v %s", isErr, text)
	}
}

// A backlog worker's question goes the same way through the tools: the
// run submitted through submit ends needing a person (exit 43), the
// question is listed with its issue id, answer posts it on the issue as
// `backlog answer` does, and the next submitted run merges the issue
// with the answer in its worker's prompt.
func TestABacklogQuestionAnsweredThroughTheToolsLetsTheNextRunMerge(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Asks", "Files: a/**\n\nlocal-agent: result=needs-input question=\"Which API?\"")
	r.CommitIssues(t)
	s := connectIn(t, r.Repo, r.Env(), "--allow-write")
	run := func(want int) {
		t.Helper()
		var sub struct {
			RunID string `json:"runId"`
		}
		text, isErr := call(t, s, "submit", map[string]any{"kind": "backlog", "issues": []int{1}, "noDashboard": true})
		mustJSON(t, "submit", text, isErr, &sub)
		var w ended
		for i := 0; !w.Ended; i++ {
			if i == 4 {
				t.Fatalf("the backlog run did not end in four waits: %+v", w)
			}
			text, isErr = call(t, s, "wait", map[string]any{"runId": sub.RunID, "timeoutSeconds": 60})
			mustJSON(t, "wait", text, isErr, &w)
		}
		if w.ExitCode != want {
			t.Fatalf("backlog run ended %d, want %d: %s", w.ExitCode, want, text)
		}
	}
	run(43)
	var qs []struct {
		ID    string `json:"id"`
		Issue int    `json:"issue"`
		Text  string `json:"text"`
	}
	text, isErr := call(t, s, "questions", nil)
	mustJSON(t, "questions", text, isErr, &qs)
	if len(qs) != 1 || qs[0].Issue != 1 || qs[0].Text != "Which API?" || !strings.HasPrefix(qs[0].ID, "issue-1-") {
		t.Fatalf("questions: %s", text)
	}
	text, isErr = call(t, s, "answer", map[string]any{"id": qs[0].ID, "text": "Use the v2 API", "operator": "ana"})
	if isErr || !strings.Contains(text, "answered "+qs[0].ID+" (issue #1)") {
		t.Fatalf("answer: %v %s", isErr, text)
	}
	run(0)
	v := r.SurfaceStatus(t)
	if len(v.Issues) != 1 || v.Issues[0].State != "merged" {
		t.Fatalf("status after the answer: %+v", v.Issues)
	}
	if b, err := os.ReadFile(filepath.Join(v.Issues[0].RunDir, "prompt.md")); err != nil || !strings.Contains(string(b), "Use the v2 API") {
		t.Fatalf("the worker's prompt lacks the answer (%v):\n%s", err, b)
	}
}

// wait without a run id is status --wait-change: with a question already
// waiting for a person it returns at once (not after its 600 s), saying
// input is required and what to do, with the lane's status.
func TestWaitSaysInputIsRequiredWhenAQuestionWaits(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	askingWave(r)
	l := startLaunch(t, r)
	q := pendingQuestion(t, r, l)
	s := connect(t, r)
	var w struct {
		LaneState string          `json:"laneState"`
		Next      string          `json:"next"`
		Status    json.RawMessage `json:"status"`
	}
	text, isErr := call(t, s, "wait", map[string]any{"timeoutSeconds": 600})
	mustJSON(t, "wait", text, isErr, &w)
	if w.LaneState != "input-required" || !strings.Contains(w.Next, "questions tool") || !strings.Contains(string(w.Status), q.ID) {
		t.Fatalf("wait with a question pending: %s", text)
	}
}
