package supervisor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// StatusSchemaVersion is the version of `backlog status --json`
// (docs/backlog-status-schema.md).
const StatusSchemaVersion = 1

// StatusView is one snapshot of a backlog run: the reduced events plus
// live worktree facts. `backlog status`, its JSON and the dashboard's
// backlog view all render this.
type StatusView struct {
	SchemaVersion int                `json:"schemaVersion"`
	Run           backlog.RunInfo    `json:"run"`
	State         string             `json:"state"` // running|finished|interrupted
	Tally         backlog.Tally      `json:"tally"`
	Queue         []int              `json:"queue"`
	Issues        []IssueView        `json:"issues"`
	NeedsInput    []backlog.Question `json:"needsInput"`
	Dropped       []backlog.Skip     `json:"dropped"`
	FinalPR       *backlog.PRRef     `json:"finalPr"`
	ExitCode      *int               `json:"exitCode"`
	ElapsedSec    int64              `json:"elapsedSeconds"`
	APICalls      int64              `json:"apiCalls"`
	BadEvents     []string           `json:"badEvents"`
	// Waiting is the transient failure a running supervisor is waiting
	// out (origin unreachable, disk full…), null when none.
	Waiting *Waiting `json:"waiting"`
	// Probes are the salvage relaunches a running supervisor holds
	// because the executor's probe fails, by issue.
	Probes []ProbeWait `json:"probes"`
	// Usage is what the run's worker and reviewer runs spent, each run
	// directory once (null when none reported usage).
	Usage *usage.Usage `json:"usage"`
	// WaitingForAnswers is set while a running supervisor has nothing
	// left but its workers' questions and waits for their answers.
	WaitingForAnswers *AnswerWait `json:"waitingForAnswers"`
}

// AnswerWait is a run waiting for answers (backlog.inputWaitMinutes):
// since when, until when (null: until answered), for which issues.
type AnswerWait struct {
	Since  time.Time  `json:"since"`
	Until  *time.Time `json:"until"`
	Issues []int      `json:"issues"`
}

// IssueView is one issue of a run.
type IssueView struct {
	Number        int            `json:"number"`
	Title         string         `json:"title"`
	State         string         `json:"state"`
	Branch        string         `json:"branch"`
	Worktree      string         `json:"worktree"`
	Session       string         `json:"session"`
	RunDir        string         `json:"runDir"`
	Attempts      int            `json:"attempts"`
	CommitsAhead  *int           `json:"commitsAhead"`
	DirtyFiles    *int           `json:"dirtyFiles"`
	LastOutputSec *int64         `json:"lastOutputAgeSeconds"`
	QueuePosition int            `json:"queuePosition"` // 1-based; 0 = not queued
	Verify        string         `json:"verify"`
	Conflicts     int            `json:"conflicts"`
	Files         []string       `json:"files"`
	PR            *backlog.PRRef `json:"pr"`
	Question      string         `json:"question"`
	Detail        string         `json:"detail"`
	MergeCommit   string         `json:"mergeCommit"`
	// Reworks counts the rounds the issue was sent back with feedback;
	// ReworkFrom and Feedback are the last round's.
	Reworks    int    `json:"reworks"`
	ReworkFrom string `json:"reworkFrom"`
	Feedback   string `json:"feedback"`
	// Outside is what the worker changed outside the issue's declared
	// surface: merged (backlog.surfacePolicy warn) or why it parked.
	Outside []string `json:"outside"`
	// Answer is the last answer the issue's question got in this run
	// (null when none); Answers counts them.
	Answer  *backlog.Answer `json:"answer"`
	Answers int             `json:"answers"`
	// Usage is what the issue's runs spent: every attempt, salvage
	// relaunch, rework round and review.
	Usage *usage.Usage `json:"usage"`
}

// ViewStopped is the state status shows for an issue whose worker
// `backlog stop` ended: claimed, its worktree kept, no worker running
// (not "claimed" with an output age, as if one were about to start).
const ViewStopped = "stopped"

// Status builds the snapshot of the run in dir. git may be nil (no live
// worktree facts); lockHeld says whether a supervisor holds the lane.
func Status(ctx context.Context, dir string, git *gitops.Repo, lockHeld bool, now time.Time) (StatusView, error) {
	r, bad, err := ReadRun(dir)
	if err != nil {
		return StatusView{}, err
	}
	v := StatusView{SchemaVersion: StatusSchemaVersion, Run: r.Info, Tally: r.Tally(), Queue: append([]int{}, r.Queue...),
		Dropped: append([]backlog.Skip{}, r.Dropped...), FinalPR: r.FinalPR, ExitCode: r.ExitCode, APICalls: r.APICalls, BadEvents: append([]string{}, bad...),
		Issues: []IssueView{}, NeedsInput: []backlog.Question{}, Probes: []ProbeWait{}}
	if v.Run.Bounded == nil {
		v.Run.Bounded = []int{}
	}
	switch {
	case r.Finished:
		v.State = "finished"
		v.ElapsedSec = int64(r.FinishedAt.Sub(r.Info.StartedAt).Seconds())
	case lockHeld:
		v.State = "running"
		v.ElapsedSec = int64(now.Sub(r.Info.StartedAt).Seconds())
		v.Waiting = readWaiting(dir)
		v.Probes = append(v.Probes, readProbes(dir)...)
		v.WaitingForAnswers = answerWait(r)
	default:
		v.State = "interrupted"
		v.ElapsedSec = int64(now.Sub(r.Info.StartedAt).Seconds())
	}
	runs := spend.BacklogRuns("", dir)
	byIssue := spend.ByIssue(runs)
	v.Usage = spend.Total(runs).Ptr()
	for _, is := range r.List() {
		iv := IssueView{Number: is.Number, Title: is.Title, State: is.State, Branch: is.Branch, Worktree: is.Worktree,
			Session: is.Session, RunDir: is.RunDir, Attempts: is.Attempts, Verify: is.Verify, Conflicts: is.Conflicts, Files: is.Files,
			PR: is.PR, Question: is.Question, Detail: is.Detail, MergeCommit: is.MergeCommit,
			Reworks: is.Reworks, ReworkFrom: is.ReworkFrom, Feedback: is.Feedback, Answer: is.Answer, Answers: is.Answers}
		if iv.Files == nil {
			iv.Files = []string{}
		}
		iv.Outside = append([]string{}, is.Outside...)
		iv.Usage = byIssue[is.Number].Ptr()
		if i := slices.Index(r.Queue, is.Number); i >= 0 {
			iv.QueuePosition = i + 1
		}
		live(ctx, &iv, is, git, "refs/remotes/origin/"+r.Info.WaveBranch, now)
		if is.State == backlog.StateClaimed && is.Outcome == backlog.OutcomeStopped {
			iv.State, iv.LastOutputSec = ViewStopped, nil
		}
		v.Issues = append(v.Issues, iv)
		if is.State == backlog.StateNeedsInput {
			v.NeedsInput = append(v.NeedsInput, backlog.Question{Issue: is.Number, Title: is.Title, Question: is.Question})
		}
	}
	v.NeedsInput = append(v.NeedsInput, r.Bucket()...)
	return v, nil
}

// live adds worktree progress and output age for work not yet final.
func live(ctx context.Context, iv *IssueView, is *backlog.IssueRun, git *gitops.Repo, waveRef string, now time.Time) {
	if git == nil || is.Worktree == "" || backlog.Terminal(is.State) {
		return
	}
	if _, err := os.Stat(is.Worktree); err != nil {
		return
	}
	if c, err := git.CommitsAhead(ctx, is.Worktree, waveRef); err == nil {
		iv.CommitsAhead = &c
	}
	if d, err := git.DirtyFiles(ctx, is.Worktree); err == nil {
		iv.DirtyFiles = &d
	}
	if is.RunDir != "" {
		if fi, err := os.Stat(filepath.Join(is.RunDir, lanes.LogFile)); err == nil {
			age := int64(now.Sub(fi.ModTime()).Seconds())
			iv.LastOutputSec = &age
		}
	}
}

// RenderStatus writes the snapshot for a terminal. Issue text is cleaned
// of control characters.
func RenderStatus(w io.Writer, v StatusView) {
	t := v.Tally
	fmt.Fprintf(w, "backlog run %s (%s) · wave branch %s → %s · source %s\n", v.Run.ID, v.State, v.Run.WaveBranch, v.Run.Base, v.Run.Source)
	fmt.Fprintf(w, "tally: merged %d / in flight %d / blocked %d / needs-input %d", t.Merged, t.InFlight, t.Blocked, t.NeedsInput)
	if t.Planned > 0 {
		fmt.Fprintf(w, " / waiting %d", t.Planned)
	}
	fmt.Fprintf(w, " · elapsed %s", (time.Duration(v.ElapsedSec) * time.Second).String())
	if v.Usage != nil {
		fmt.Fprintf(w, " · spent %s", v.Usage.String())
	}
	if v.APICalls > 0 {
		fmt.Fprintf(w, " · %d API calls", v.APICalls)
	}
	fmt.Fprintln(w)
	if v.Waiting != nil {
		fmt.Fprintf(w, "%s\n", WaitingLine(v.Waiting))
	}
	for _, p := range v.Probes {
		fmt.Fprintf(w, "%s\n", ProbeLine(p))
	}
	if a := v.WaitingForAnswers; a != nil {
		fmt.Fprintf(w, "%s\n", InputWaitLine(*a))
	}
	for _, is := range v.Issues {
		extra := []string{}
		if is.Branch != "" {
			extra = append(extra, is.Branch)
		}
		if is.CommitsAhead != nil {
			extra = append(extra, fmt.Sprintf("%d ahead", *is.CommitsAhead))
		}
		if is.DirtyFiles != nil {
			extra = append(extra, fmt.Sprintf("%d dirty", *is.DirtyFiles))
		}
		if is.LastOutputSec != nil {
			extra = append(extra, fmt.Sprintf("output %ds ago", *is.LastOutputSec))
		}
		if is.QueuePosition > 0 {
			extra = append(extra, fmt.Sprintf("queue #%d", is.QueuePosition))
		}
		if is.Verify != "" {
			extra = append(extra, "verify "+is.Verify)
		}
		if is.PR != nil && is.PR.URL != "" {
			extra = append(extra, is.PR.URL)
		}
		if is.Reworks > 0 {
			extra = append(extra, ReworkLabel(is.Reworks, is.ReworkFrom))
		}
		if is.Usage != nil {
			extra = append(extra, "spent "+oneLine(is.Usage.String()))
		}
		fmt.Fprintf(w, "  #%-5d %-11s %s  [%s]\n", is.Number, is.State, oneLine(is.Title), strings.Join(extra, ", "))
		if is.Question != "" && is.State == backlog.StateParked {
			fmt.Fprintf(w, "         question: %s\n", oneLine(is.Question))
		} else if is.Detail != "" && (is.State == backlog.StateParked || is.State == backlog.StateFailed) {
			fmt.Fprintf(w, "         %s\n", oneLine(is.Detail))
		}
		if len(is.Files) > 0 && is.Conflicts > 0 && !backlog.Terminal(is.State) || is.State == backlog.StateParked && len(is.Files) > 0 {
			fmt.Fprintf(w, "         conflicting files: %s\n", oneLine(strings.Join(is.Files, ", ")))
		}
		if len(is.Outside) > 0 {
			fmt.Fprintf(w, "         changed outside its declared surface: %s\n", oneLine(strings.Join(is.Outside, ", ")))
		}
	}
	if len(v.NeedsInput) > 0 {
		fmt.Fprintf(w, "needs input:\n")
		for _, q := range v.NeedsInput {
			fmt.Fprintf(w, "  #%-5d %s\n", q.Issue, oneLine(firstNonEmpty(q.Question, q.Title)))
		}
	}
	for _, d := range v.Dropped {
		fmt.Fprintf(w, "  #%-5d dropped     %s %s\n", d.Issue, d.Reason, oneLine(d.Detail))
	}
	if v.FinalPR != nil {
		fmt.Fprintf(w, "final PR: %s\n", v.FinalPR.URL)
	}
	for _, b := range v.BadEvents {
		fmt.Fprintf(w, "warning: corrupt event line skipped at %s\n", b)
	}
}

// ReworkLabel is how status (text and dashboard) shows an issue's rework
// rounds: "1 rework round (verify)".
func ReworkLabel(rounds int, from string) string {
	if rounds == 1 {
		return "1 rework round (" + oneLine(from) + ")"
	}
	return fmt.Sprintf("%d rework rounds (last: %s)", rounds, oneLine(from))
}

// WaitingLine is how status (text and dashboard) shows a wait: "waiting:
// origin unreachable since 2026-12-01T21:40:05Z (try 4, gives up at …)".
func WaitingLine(w *Waiting) string {
	return fmt.Sprintf("waiting: %s since %s (try %d, gives up at %s; workers keep running, nothing is dispatched or merged): %s",
		oneLine(w.Cause), w.Since.UTC().Format(time.RFC3339), w.Tries, w.GiveUpAt.UTC().Format(time.RFC3339), oneLine(w.Detail))
}

// answerWait is the run's open wait for answers with the issues it
// waits for, nil when it waits for none.
func answerWait(r *backlog.Run) *AnswerWait {
	w := r.WaitingForAnswers()
	if w == nil {
		return nil
	}
	a := &AnswerWait{Since: w.Since, Until: w.Until, Issues: []int{}}
	for _, is := range r.List() {
		if is.State == backlog.StateNeedsInput {
			a.Issues = append(a.Issues, is.Number)
		}
	}
	return a
}
