package human

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// The local source can be answered and closed for everyone: `backlog
// answer` lets the next run take a needs-input issue with the answer in
// its worker's prompt, and the wave branch carries `state: closed` for
// every merged issue, so merging the final PR closes them in every clone.

func TestBacklogAnswerLetsTheNextRunMergeTheIssueWithTheAnswerInItsPrompt(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Asks", "Files: a/**\n\nlocal-agent: result=needs-input question=\"Which API?\"")
	r.CommitIssues(t)
	ctx := context.Background()
	first := r.RunEnv(ctx, "backlog", "run", "--issues", "1", "--no-dashboard")
	if !strings.Contains(first.Stdout, "#1 needs input") {
		t.Fatalf("the first run did not ask (exit %d):\n%s\n%s", first.Code, first.Stdout, first.Stderr)
	}
	ans := r.RunEnv(ctx, "backlog", "answer", "1", "Use the v2 API @someone <!-- x -->")
	if ans.Code != 0 || !strings.Contains(ans.Stdout, "answered #1") {
		t.Fatalf("answer: exit %d\n%s\n%s", ans.Code, ans.Stdout, ans.Stderr)
	}
	// The same answer again posts nothing new.
	if again := r.RunEnv(ctx, "backlog", "answer", "1", "Use the v2 API @someone <!-- x -->"); again.Code != 0 {
		t.Fatalf("answer again: exit %d %s", again.Code, again.Stderr)
	}
	comments, _ := os.ReadFile(filepath.Join(r.Root, ".wave", "backlog-local", "1.comments.md"))
	if n := strings.Count(string(comments), "Use the v2 API"); n != 1 {
		t.Errorf("the answer is in %d comments, want 1:\n%s", n, comments)
	}
	second := r.RunEnv(ctx, "backlog", "run", "--issues", "1", "--no-dashboard")
	if second.Code != 0 || !strings.Contains(second.Stdout, "#1 merged into") {
		t.Fatalf("the run after the answer did not merge #1 (exit %d):\n%s\n%s", second.Code, second.Stdout, second.Stderr)
	}
	v := r.SurfaceStatus(t)
	if len(v.Issues) != 1 || v.Issues[0].RunDir == "" {
		t.Fatalf("status after the answer: %+v", v.Issues)
	}
	b, err := os.ReadFile(filepath.Join(v.Issues[0].RunDir, "prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	prompt := string(b)
	if !strings.Contains(prompt, "Use the v2 API") || !strings.Contains(prompt, "```text") {
		t.Errorf("the worker's prompt lacks the fenced answer:\n%s", prompt)
	}
	if len(v.Issues) != 1 || v.Issues[0].State != "merged" {
		t.Errorf("status after the answer: %+v", v.Issues)
	}
}

func TestBacklogAnswerOfAMissingIssueIsAUsageError(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "One", "Files: a/**")
	res := r.RunEnv(context.Background(), "backlog", "answer", "7", "yes")
	if res.Code != 2 || !strings.Contains(res.Stderr, "no issue #7 in docs/backlog") {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if res := r.RunEnv(context.Background(), "backlog", "answer", "1"); res.Code != 2 || !strings.Contains(res.Stderr, "the answer is empty") {
		t.Fatalf("no text: exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
}

func TestWaveBranchMarksMergedIssueFilesClosed(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Merges", "Files: a/**")
	r.Issue(2, "Asks", "Files: b/**\n\nlocal-agent: result=needs-input question=\"Which?\"")
	r.Issue(3, "Merges too", "Files: c/**")
	r.CommitIssues(t)
	run := r.RunEnv(context.Background(), "backlog", "run", "--issues", "1,2,3", "--no-dashboard")
	if !strings.Contains(run.Stdout, "#3 merged into") {
		t.Fatalf("run: exit %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	wave := r.SurfaceStatus(t).Run.WaveBranch
	for n, want := range map[int]bool{1: true, 2: false, 3: true} {
		out, ok := gittest.File(r.Origin, wave, "docs/backlog/"+strconv.Itoa(n)+"-issue.md")
		if !ok {
			t.Fatalf("#%d's file is not on %s", n, wave)
		}
		front, _, _ := strings.Cut(strings.TrimPrefix(out, "---\n"), "\n---\n")
		if got := strings.Contains(front, "state: closed"); got != want {
			t.Errorf("#%d on the wave branch: closed %v, want %v:\n%s", n, got, want, out)
		}
	}
	if main, _ := gittest.File(r.Origin, "main", "docs/backlog/1-issue.md"); strings.Contains(main, "state: closed") {
		t.Errorf("the base branch changed before the final PR merged:\n%s", main)
	}
}

func TestBacklogAnswerOnGitHubCommentsAndRemovesTheLabel(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	gh := forgetest.NewServer(t, "acme", "widgets")
	gh.AddIssue(backlog.Issue{Number: 4, Title: "Asks", Body: "Files: a/**", Labels: []string{"needs-input"}})
	env := r.UseGitHub(gh)
	for range 2 { // the second answer with the same words posts nothing
		res := r.RunWith(context.Background(), env, "backlog", "answer", "4", "--file", "-")
		if res.Code != 2 {
			t.Fatalf("empty stdin: exit %d %s, want 2", res.Code, res.Stderr)
		}
		cmd := r.Command(context.Background(), "backlog", "answer", "4", "--file", "-")
		cmd.Env = append(cmd.Env, env...)
		cmd.Stdin = strings.NewReader("Keep the old flag, @octocat\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("answer: %v\n%s", err, out)
		}
	}
	is, _ := gh.Issue(4)
	for _, l := range is.Labels {
		if l == "needs-input" {
			t.Errorf("the needs-input label is still on #4: %v", is.Labels)
		}
	}
	cs := gh.Comments(4)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "Keep the old flag") || !strings.Contains(cs[0].Body, "```text") {
		t.Fatalf("comments on #4: %+v, want one fenced answer", cs)
	}
}
