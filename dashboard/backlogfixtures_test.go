package dashboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

func num(n int) *int      { return &n }
func secs(n int64) *int64 { return &n }
func exit(n int) *int     { return &n }
func pr(n int) *backlog.PRRef {
	return &backlog.PRRef{Number: n, URL: fmt.Sprintf("https://github.com/acme/shop/pull/%d", n)}
}

const fixtureWave = "wave/2026-03-14-backlog"

func issueView(n int, title, st string) backlog.IssueView {
	return backlog.IssueView{Number: n, Title: title, State: st, Branch: fmt.Sprintf("%s-i%d", fixtureWave, n),
		Worktree: fmt.Sprintf("/work/trees/shop-i%d", n), Session: workerSession(n), Attempts: 1, Files: []string{}}
}

// runningBacklog: a GitHub run in flight with an issue in every state a
// user must tell apart — merged, running, queued with verify running,
// needs-input, parked after a conflict, failed, waiting — and a title
// that tries to reach the terminal.
func runningBacklog() backlog.StatusView {
	merged := issueView(12, "Add a greeting endpoint", backlog.StateMerged)
	merged.MergeCommit, merged.PR = "4f2a9c1d0e", pr(101)
	run := issueView(15, "Cache the product list", backlog.StateRunning)
	run.CommitsAhead, run.DirtyFiles, run.LastOutputSec, run.Attempts = num(2), num(3), secs(4), 2
	run2 := issueView(18, "Evil \x1b[2J\x1b]0;pwned\x07title", backlog.StateRunning)
	run2.CommitsAhead, run2.DirtyFiles, run2.LastOutputSec = num(0), num(1), secs(75)
	ready := issueView(21, "Paginate the orders API", backlog.StateReady)
	ready.CommitsAhead, ready.DirtyFiles, ready.QueuePosition, ready.Verify, ready.PR = num(4), num(0), 1, "running", pr(104)
	ask := issueView(23, "Pick the payment provider", backlog.StateNeedsInput)
	ask.Question = "Stripe or Adyen? The issue names both."
	parked := issueView(27, "Rename the cart module", backlog.StateParked)
	parked.Conflicts, parked.Files, parked.Attempts = 2, []string{"src/cart/index.ts", "src/cart/total.ts"}, 2
	parked.Question, parked.Detail = "resolve the conflict by hand?", "conflicts again after one resolution"
	failed := issueView(30, "Drop the legacy importer", backlog.StateFailed)
	failed.Detail = "no work: the worker exited 0 without a commit"
	waiting := issueView(31, "Document the cache", backlog.StatePlanned)
	waiting.Branch, waiting.Worktree, waiting.Session, waiting.Attempts = "", "", "", 0
	return backlog.StatusView{
		SchemaVersion: backlog.StatusSchemaVersion,
		Run: backlog.RunInfo{ID: "20260314T120000Z-backlog", Lane: "main", Source: "github", Repo: "acme/shop",
			WaveBranch: fixtureWave, Base: "main", Default: "main", Bounded: []int{12, 15, 18, 21, 23, 27, 30, 31}, Width: 3,
			StartedAt: clock.Add(-754 * time.Second)},
		State:      "running",
		Tally:      backlog.Tally{Merged: 1, InFlight: 3, Blocked: 2, NeedsInput: 1, Planned: 1},
		Queue:      []int{21},
		Issues:     []backlog.IssueView{merged, run, run2, ready, ask, parked, failed, waiting},
		NeedsInput: []backlog.Question{{Issue: 23, Title: ask.Title, Question: ask.Question}},
		Dropped:    []backlog.Skip{{Issue: 9, Reason: "claimed", Detail: "run x on other-host"}},
		ElapsedSec: 754, APICalls: 57, BadEvents: []string{},
	}
}

// finishedBacklog: the same run after the supervisor ended it needing a
// person (exit 43), with its final PR.
func finishedBacklog() backlog.StatusView {
	v := runningBacklog()
	v.State, v.ExitCode = "finished", exit(43)
	v.FinalPR = &backlog.PRRef{Number: 110, URL: "https://github.com/acme/shop/pull/110"}
	for i := range v.Issues {
		is := &v.Issues[i]
		switch is.State {
		case backlog.StateRunning, backlog.StateReady, backlog.StatePlanned:
			is.State, is.CommitsAhead, is.DirtyFiles, is.LastOutputSec, is.QueuePosition = backlog.StateMerged, nil, nil, nil, 0
			is.Verify = ""
		}
	}
	v.Queue = []int{}
	v.Tally = backlog.Tally{Merged: 5, Blocked: 2, NeedsInput: 1}
	return v
}

// manyBacklog: 30 issues, mostly merged or waiting, with running,
// parked and failed ones spread through the table — at 80×24 those must
// all stay on screen.
func manyBacklog() backlog.StatusView {
	v := runningBacklog()
	v.Issues, v.NeedsInput = nil, []backlog.Question{}
	var t backlog.Tally
	for n := 100; n < 130; n++ {
		is := issueView(n, fmt.Sprintf("Backlog item %d", n), backlog.StateMerged)
		switch {
		case n == 104 || n == 117 || n == 118 || n == 126:
			is.State, is.CommitsAhead, is.DirtyFiles, is.LastOutputSec = backlog.StateRunning, num(1), num(0), secs(2)
			t.InFlight++
		case n == 109 || n == 122:
			is.State, is.Conflicts, is.Files = backlog.StateParked, 2, []string{"go.mod"}
			t.Blocked++
		case n == 113:
			is.State, is.Detail = backlog.StateFailed, "lost twice; salvage refs/wave/salvage/113/a2"
			t.Blocked++
		case n > 120:
			is.State, is.Branch, is.Session, is.Worktree, is.Attempts = backlog.StatePlanned, "", "", "", 0
			t.Planned++
		default:
			t.Merged++
		}
		v.Issues = append(v.Issues, is)
	}
	v.Tally = t
	return v
}

// withWorkerLog gives issue n of v a run dir under dir whose agent.log
// has lines numbered lines and an escape-laden last line.
func withWorkerLog(t *testing.T, v *backlog.StatusView, dir string, n, lines int) string {
	t.Helper()
	for i := range v.Issues {
		if v.Issues[i].Number != n {
			continue
		}
		rd := filepath.Join(dir, fmt.Sprintf("i%d-a1", n))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for k := 1; k <= lines; k++ {
			fmt.Fprintf(&b, "worker %d line %02d\n", n, k)
		}
		b.WriteString("\x1b[31m[backlog-result]\x1b[0m state=done\x1b]0;x\x07\n")
		if err := os.WriteFile(filepath.Join(rd, "agent.log"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		v.Issues[i].RunDir = rd
		return rd
	}
	t.Fatalf("no issue #%d", n)
	return ""
}

// loader serves views in turn (the last one forever) and counts reads.
type loader struct {
	views []backlog.StatusView
	none  bool // the lane has no backlog run
	err   error
	reads int
}

func (l *loader) load(context.Context) (backlog.StatusView, bool, error) {
	l.reads++
	if l.err != nil {
		return backlog.StatusView{}, false, l.err
	}
	if l.none || len(l.views) == 0 {
		return backlog.StatusView{}, false, nil
	}
	v := l.views[0]
	if len(l.views) > 1 {
		l.views = l.views[1:]
	}
	return v, true, nil
}

// newBacklogModel is a model whose backlog view (shown first) reads from
// l, at w×h with the fixed clock, its first read and log read done.
func newBacklogModel(t *testing.T, cfg Config, l *loader, w, h int) Model {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return clock }
	}
	cfg.Wave, cfg.First = -1, BacklogViewName
	cfg.Views = []View{NewBacklogView(cfg, l.load)}
	m := NewModel(cfg, runningLane())
	for _, v := range m.views {
		for _, msg := range runCmd(v.Init()) {
			m = drive(t, m, msg)
		}
	}
	return drive(t, m, tea.WindowSizeMsg{Width: w, Height: h})
}

// workerSession is the tmux session a backlog worker for issue n runs in.
func workerSession(n int) string { return "backlog-i" + strconv.Itoa(n) }
