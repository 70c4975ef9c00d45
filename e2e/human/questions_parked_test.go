package human

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// An issue the run parks with a question for a person (its worker
// reported blocked) is listed by `questions` as a question that waits,
// with why it was parked, and `answer` answers it on its issue.
func TestQuestionsListsAParkedIssuesQuestionAndAnswerAnswersIt(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Blocks", "Files: a/**\n\nlocal-agent: result=blocked detail=\"Keep the v1 schema or move to v2?\"")
	r.CommitIssues(t)
	ctx := context.Background()
	if run := r.RunEnv(ctx, "backlog", "run", "--issues", "1", "--no-dashboard"); run.Code != e2etest.ExitNeedsHuman || !strings.Contains(run.Stdout, "#1 parked") {
		t.Fatalf("the run did not park #1 (exit %d):\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	list := r.RunEnv(ctx, "questions", "--pending", "--json")
	var qs []questions.Question
	if err := json.Unmarshal([]byte(list.Stdout), &qs); err != nil || len(qs) != 1 || qs[0].Issue == nil || *qs[0].Issue != 1 ||
		qs[0].Kind != "parked" || qs[0].Text != "Keep the v1 schema or move to v2?" || !strings.Contains(qs[0].Context, "worker reported blocked") {
		t.Fatalf("questions --pending --json after #1 parked: %v\n%s%s", err, list.Stdout, list.Stderr)
	}
	if text := r.RunEnv(ctx, "questions"); !strings.Contains(text.Stdout, qs[0].ID) || !strings.Contains(text.Stdout, "issue #1") {
		t.Fatalf("questions:\n%s%s", text.Stdout, text.Stderr)
	}
	ans := r.RunEnv(ctx, "answer", "#1", "Move to v2", "--operator", "ana")
	if ans.Code != 0 || !strings.Contains(ans.Stdout, "issue #1") {
		t.Fatalf("answer #1: exit %d\n%s%s", ans.Code, ans.Stdout, ans.Stderr)
	}
	if left := r.RunEnv(ctx, "questions", "--pending", "--json"); strings.TrimSpace(left.Stdout) != "[]" {
		t.Fatalf("questions --pending after the answer:\n%s", left.Stdout)
	}
}
