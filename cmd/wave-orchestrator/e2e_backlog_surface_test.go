package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/scaffold"
)

// A worker's change to files its issue's Files: list does not name is
// never merged silently: the final PR lists it, status shows it, and
// backlog.surfacePolicy: park keeps it out.

type surfaceStatus struct {
	Run struct {
		WaveBranch string `json:"waveBranch"`
	} `json:"run"`
	Issues []struct {
		Number  int      `json:"number"`
		State   string   `json:"state"`
		Outside []string `json:"outside"`
		Detail  string   `json:"detail"`
		RunDir  string   `json:"runDir"`
	} `json:"issues"`
}

func (r *backlogRepo) surfaceStatus(t *testing.T) surfaceStatus {
	t.Helper()
	res := r.runEnv(context.Background(), "backlog", "status", "--json")
	var v surfaceStatus
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("status --json: %v\n%s", err, res.stdout)
	}
	return v
}

func (r *backlogRepo) finalPRBody(t *testing.T) string {
	t.Helper()
	prs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "backlog-local", "prs", "*.md"))
	if len(prs) != 1 {
		t.Fatalf("%d final PR files, want 1: %v", len(prs), prs)
	}
	b, err := os.ReadFile(prs[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (r *backlogRepo) setBacklogKey(t *testing.T, line string) {
	t.Helper()
	p := filepath.Join(r.root, "wave.config.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	key, _, _ := strings.Cut(line, ":")
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "  "+key+":") { // the scaffold's own value of the key
			kept = append(kept, l)
		}
	}
	cfg := strings.Replace(strings.Join(kept, "\n"), "backlog:\n", "backlog:\n  "+line+"\n", 1)
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFinalPRListsChangesOutsideTheDeclaredSurface(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "Parser", "Files: src/parser/**\n\nlocal-agent: commit=.github/workflows/x.yml")
	r.issue(2, "Printer", "Files: src/printer/**\n\nlocal-agent: commit=src/printer/p.go")
	run := r.runEnv(context.Background(), "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if run.code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	if !strings.Contains(run.stdout, "#1 changed .github/workflows/x.yml outside its declared surface") {
		t.Errorf("the run did not warn about #1's change:\n%s", run.stdout)
	}
	body := r.finalPRBody(t)
	want := "## Changed outside the declared surface\n\n- #1 (merged): `.github/workflows/x.yml`\n"
	if !strings.Contains(body, want) || strings.Contains(body, "#2 (merged)") {
		t.Errorf("final PR body lacks the section %q (only #1):\n%s", want, body)
	}
	v := r.surfaceStatus(t)
	for _, is := range v.Issues {
		want := map[int]string{1: "[.github/workflows/x.yml]", 2: "[]"}[is.Number]
		if got := jsonList(is.Outside); got != want || is.State != "merged" {
			t.Errorf("status #%d: state %s outside %s, want merged with %s", is.Number, is.State, got, want)
		}
	}
	text := r.runEnv(context.Background(), "backlog", "status")
	if !strings.Contains(text.stdout, "changed outside its declared surface: .github/workflows/x.yml") {
		t.Errorf("text status does not show the file:\n%s", text.stdout)
	}
}

func jsonList(v []string) string { return "[" + strings.Join(v, " ") + "]" }

func TestSurfacePolicyParkParksTheIssueWithTheFiles(t *testing.T) {
	r := newBacklogRepo(t)
	r.setBacklogKey(t, "surfacePolicy: park")
	r.issue(1, "Parser", "Files: src/parser/**\n\nlocal-agent: commit=.github/workflows/x.yml")
	r.issue(2, "Printer", "Files: src/printer/**\n\nlocal-agent: commit=src/printer/p.go")
	run := r.runEnv(context.Background(), "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if !strings.Contains(run.stdout, "#1 parked: changed .github/workflows/x.yml outside its declared surface") {
		t.Fatalf("#1 was not parked for its change (exit %d):\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	v := r.surfaceStatus(t)
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
	if err := exec.Command("git", "--git-dir", r.origin, "cat-file", "-e", wave+":.github/workflows/x.yml").Run(); err == nil {
		t.Errorf("the parked change reached the wave branch %s", wave)
	}
	body := r.finalPRBody(t)
	if !strings.Contains(body, "- #1 (parked, not in this PR): `.github/workflows/x.yml`") || strings.Contains(body, "Closes #1") {
		t.Errorf("final PR body does not list #1's files as parked:\n%s", body)
	}
}

// TestBacklogDemoStaysInsideItsSurface runs the README's backlog demo:
// its simulated workers write only what their issues declare.
func TestBacklogDemoStaysInsideItsSurface(t *testing.T) {
	r := newBacklogRepo(t)
	if _, err := scaffold.WriteBacklogDemo(r.root, false); err != nil {
		t.Fatal(err)
	}
	gitIn(t, r.root, "add", "-A")
	gitIn(t, r.root, "commit", "-q", "-m", "demo")
	gitIn(t, r.root, "push", "-q", "origin", "main")
	run := r.runEnv(context.Background(), "backlog", "run", "--issues", "1,2,3", "--no-dashboard")
	if run.code != 0 {
		t.Fatalf("demo run: %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	if strings.Contains(run.stdout+run.stderr, "outside its declared surface") {
		t.Errorf("the demo printed a surface warning:\n%s", run.stdout)
	}
	if strings.Contains(r.finalPRBody(t), "Changed outside the declared surface") {
		t.Errorf("the demo's final PR lists changes outside a surface")
	}
}
