package questions

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// writeRun writes a backlog run log: the run, then each issue entering
// it and ending with the given event kind.
func writeRun(t *testing.T, l lanes.Layout, id string, at time.Time, issues map[int]backlog.Event) {
	t.Helper()
	path := filepath.Join(runlog.Root(l.StateDir), id, runlog.EventsFile)
	evs := []backlog.Event{{At: at, Kind: backlog.EvRunStarted, Run: &backlog.RunInfo{ID: id, Lane: l.Lane, StartedAt: at}}}
	for n, ev := range issues {
		evs = append(evs, backlog.Event{At: at, Kind: backlog.EvIssue, Issue: n, Title: "issue title"})
		ev.At, ev.Issue = at, n
		evs = append(evs, ev)
	}
	for _, ev := range evs {
		if err := jsonfile.Append(path, ev); err != nil {
			t.Fatal(err)
		}
	}
}

func localSource(t *testing.T, n int, label string) *forge.Local {
	t.Helper()
	dir := t.TempDir()
	body := "---\ntitle: Pick a flag name\nlabels: [" + label + "]\n---\nWhich name?\n"
	if err := os.WriteFile(filepath.Join(dir, "12-pick.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := forge.NewLocal(forge.LocalOptions{Dir: dir, StateDir: t.TempDir(), Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// A backlog worker's needs-input result is a question like any other:
// listed, answered on its issue (comment, label removed), then answered.
func TestABacklogNeedsInputIssueIsAQuestionAnsweredOnItsIssue(t *testing.T) {
	l := testLayout(t)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	writeRun(t, l, "20260301T100000Z-aaaa", at, map[int]backlog.Event{
		12: {Kind: backlog.EvNeedsInput, Question: "Call the flag --dry or --preview?"},
	})
	qs, problems, err := List(l)
	if err != nil || len(problems) > 0 || len(qs) != 1 {
		t.Fatalf("list: %+v %v %v", qs, problems, err)
	}
	q := qs[0]
	if *q.Issue != 12 || q.State != Pending || q.Text != "Call the flag --dry or --preview?" || q.RunID != "20260301T100000Z-aaaa" || q.Where() != "issue #12" {
		t.Fatalf("question %+v", q)
	}
	if _, err := Answer(context.Background(), l, "#12", "--preview", "ana", false, AnswerOptions{}); err == nil {
		t.Fatal("a backlog answer without an issue source went through")
	}
	src := localSource(t, 12, "needs-input")
	a, err := Answer(context.Background(), l, "#12", "--preview", "ana", false, AnswerOptions{Issues: src, NeedsInputLabel: "needs-input"})
	if err != nil || a.State != Answered || a.ID != q.ID {
		t.Fatalf("answer: %+v %v", a, err)
	}
	is, err := src.Get(context.Background(), 12)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(is.Labels, "needs-input") || len(is.Comments) != 1 || !strings.Contains(is.Comments[0].Body, "--preview") {
		t.Fatalf("issue after the answer: labels %v comments %+v", is.Labels, is.Comments)
	}
	qs, _, _ = List(l)
	if qs[0].State != Answered || qs[0].Answer != "--preview" || qs[0].Operator != "ana" {
		t.Fatalf("after the answer: %+v", qs[0])
	}
}

// A later run that took the issue again means it was answered elsewhere
// (a comment, the label removed by hand).
func TestABacklogQuestionTakenAgainByALaterRunIsAnswered(t *testing.T) {
	l := testLayout(t)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	writeRun(t, l, "20260301T100000Z-aaaa", at, map[int]backlog.Event{12: {Kind: backlog.EvNeedsInput, Question: "Which?"}})
	writeRun(t, l, "20260301T110000Z-bbbb", at.Add(time.Hour), map[int]backlog.Event{12: {Kind: backlog.EvClaimed}})
	qs, _, _ := List(l)
	if len(qs) != 1 || qs[0].State != Answered {
		t.Fatalf("questions %+v: want #12 answered", qs)
	}
}

// A question an open run saw answered (a person's comment on GitHub) is
// listed answered, with the answer and who gave it, not dropped from the
// list because the issue went back to its worker.
func TestAQuestionTheOpenRunSawAnsweredIsListedWithItsAnswer(t *testing.T) {
	l := testLayout(t)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	id := "20260301T100000Z-bbbb"
	writeRun(t, l, id, at, map[int]backlog.Event{
		12: {Kind: backlog.EvNeedsInput, Question: "Call the flag --dry or --preview?"},
	})
	path := filepath.Join(runlog.Root(l.StateDir), id, runlog.EventsFile)
	ev := backlog.Event{At: at.Add(time.Minute), Kind: backlog.EvAnswered, Issue: 12,
		Question: "Call the flag --dry or --preview?", Answer: "--preview", By: "alice", Outcome: "comment"}
	if err := jsonfile.Append(path, ev); err != nil {
		t.Fatal(err)
	}
	qs, problems, err := List(l)
	if err != nil || len(problems) > 0 || len(qs) != 1 {
		t.Fatalf("list: %+v %v %v", qs, problems, err)
	}
	q := qs[0]
	if q.State != Answered || q.Answer != "--preview" || q.Operator != "alice" || q.AnsweredAt == nil || q.Text != "Call the flag --dry or --preview?" {
		t.Fatalf("question after the open run saw its answer: %+v", q)
	}
}

// An issue the run parked with a question for a person (a worker that
// reported blocked, a conflict it could not resolve) is a question too:
// listed with why it was parked, answered on its issue, and answered once
// a later run takes the issue again. One parked without a question (a
// budget stop) asks nothing.
func TestAParkedIssuesQuestionIsListedAndAnswered(t *testing.T) {
	l := testLayout(t)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	writeRun(t, l, "20260301T100000Z-aaaa", at, map[int]backlog.Event{
		12: {Kind: backlog.EvParked, Detail: "worker reported blocked: two schemas", Question: "Keep the v1 schema or move to v2?"},
		13: {Kind: backlog.EvParked, Detail: "worker stopped at its budget"},
	})
	qs, problems, err := List(l)
	if err != nil || len(problems) > 0 || len(qs) != 1 {
		t.Fatalf("list: %+v %v %v", qs, problems, err)
	}
	q := qs[0]
	if *q.Issue != 12 || q.Kind != KindParked || q.State != Pending || q.Text != "Keep the v1 schema or move to v2?" ||
		q.Context != "worker reported blocked: two schemas" || !q.Blocking {
		t.Fatalf("parked question %+v", q)
	}
	src := localSource(t, 12, "wave:claimed")
	if a, err := Answer(context.Background(), l, "#12", "v2", "ana", false, AnswerOptions{Issues: src, NeedsInputLabel: "needs-input"}); err != nil || a.State != Answered {
		t.Fatalf("answer the parked question: %+v %v", a, err)
	}
	if qs, _, _ = List(l); qs[0].State != Answered || qs[0].Answer != "v2" {
		t.Fatalf("after the answer: %+v", qs[0])
	}
	writeRun(t, l, "20260301T110000Z-bbbb", at.Add(time.Hour), map[int]backlog.Event{
		14: {Kind: backlog.EvParked, Detail: "conflicts again", Question: "Resolve by hand?"},
	})
	writeRun(t, l, "20260301T120000Z-cccc", at.Add(2*time.Hour), map[int]backlog.Event{14: {Kind: backlog.EvClaimed}})
	for _, q := range mustList(t, l) {
		if *q.Issue == 14 && q.State != Answered {
			t.Fatalf("#14 taken again by a later run: %+v, want answered", q)
		}
	}
}

func mustList(t *testing.T, l lanes.Layout) []Question {
	t.Helper()
	qs, _, err := List(l)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}
