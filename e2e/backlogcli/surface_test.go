package backlogcli

import (
	"context"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/scaffold"
)

// A worker's change to files its issue's Files: list does not name is
// never merged silently: the final PR lists it, status shows it, and
// backlog.surfacePolicy: park keeps it out.

func TestFinalPRListsChangesOutsideTheDeclaredSurface(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Parser", "Files: src/parser/**\n\nlocal-agent: commit=.github/workflows/x.yml")
	r.Issue(2, "Printer", "Files: src/printer/**\n\nlocal-agent: commit=src/printer/p.go")
	run := r.RunEnv(context.Background(), "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if run.Code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	if !strings.Contains(run.Stdout, "#1 changed .github/workflows/x.yml outside its declared surface") {
		t.Errorf("the run did not warn about #1's change:\n%s", run.Stdout)
	}
	body := r.FinalPRBody(t)
	want := "## Changed outside the declared surface\n\n- #1 (merged): `.github/workflows/x.yml`\n"
	if !strings.Contains(body, want) || strings.Contains(body, "#2 (merged)") {
		t.Errorf("final PR body lacks the section %q (only #1):\n%s", want, body)
	}
	v := r.SurfaceStatus(t)
	for _, is := range v.Issues {
		want := map[int]string{1: "[.github/workflows/x.yml]", 2: "[]"}[is.Number]
		if got := jsonList(is.Outside); got != want || is.State != "merged" {
			t.Errorf("status #%d: state %s outside %s, want merged with %s", is.Number, is.State, got, want)
		}
	}
	text := r.RunEnv(context.Background(), "backlog", "status")
	if !strings.Contains(text.Stdout, "changed outside its declared surface: .github/workflows/x.yml") {
		t.Errorf("text status does not show the file:\n%s", text.Stdout)
	}
}

func jsonList(v []string) string { return "[" + strings.Join(v, " ") + "]" }

func TestSurfacePolicyParkParksTheIssueWithTheFiles(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.SetBacklogKey(t, "surfacePolicy: park")
	r.Issue(1, "Parser", "Files: src/parser/**\n\nlocal-agent: commit=.github/workflows/x.yml")
	r.Issue(2, "Printer", "Files: src/printer/**\n\nlocal-agent: commit=src/printer/p.go")
	run := r.RunEnv(context.Background(), "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if !strings.Contains(run.Stdout, "#1 parked: changed .github/workflows/x.yml outside its declared surface") {
		t.Fatalf("#1 was not parked for its change (exit %d):\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	v := r.SurfaceStatus(t)
	states := map[int]string{}
	for _, is := range v.Issues {
		states[is.Number] = is.State
		if is.Number == 1 && jsonList(is.Outside) != "[.github/workflows/x.yml]" {
			t.Errorf("status #1 outside %v, want the workflow file", is.Outside)
		}
	}
	if states[1] != "parked" || states[2] != "merged" {
		t.Fatalf("states %v, want #1 parked and #2 merged", states)
	}
	wave := v.Run.WaveBranch
	if gittest.HasPath(r.Origin, wave, ".github/workflows/x.yml") {
		t.Errorf("the parked change reached the wave branch %s", wave)
	}
	body := r.FinalPRBody(t)
	if !strings.Contains(body, "- #1 (parked, not in this PR): `.github/workflows/x.yml`") || strings.Contains(body, "Closes #1") {
		t.Errorf("final PR body does not list #1's files as parked:\n%s", body)
	}
}

// TestBacklogDemoStaysInsideItsSurface runs the README's backlog demo:
// its simulated workers write only what their issues declare.
func TestBacklogDemoStaysInsideItsSurface(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	if _, err := scaffold.WriteBacklogDemo(r.Root, false); err != nil {
		t.Fatal(err)
	}
	e2etest.GitIn(t, r.Root, "add", "-A")
	e2etest.GitIn(t, r.Root, "commit", "-q", "-m", "demo")
	e2etest.GitIn(t, r.Root, "push", "-q", "origin", "main")
	run := r.RunEnv(context.Background(), "backlog", "run", "--issues", "1,2,3", "--no-dashboard")
	if run.Code != 0 {
		t.Fatalf("demo run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	if strings.Contains(run.Stdout+run.Stderr, "outside its declared surface") {
		t.Errorf("the demo printed a surface warning:\n%s", run.Stdout)
	}
	if strings.Contains(r.FinalPRBody(t), "Changed outside the declared surface") {
		t.Errorf("the demo's final PR lists changes outside a surface")
	}
}
