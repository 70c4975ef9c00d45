package backlog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// StatusSchemaVersion is the version of `backlog status --json`
// (docs/backlog-status-schema.md).
const StatusSchemaVersion = 1

// StatusView is one snapshot of a backlog run: the reduced events plus
// what the caller observed live (worktrees, waits, spend). `backlog
// status`, its JSON and the dashboard's backlog view all render this.
type StatusView struct {
	SchemaVersion int     `json:"schemaVersion"`
	Run           RunInfo `json:"run"`
	State         string  `json:"state"` // running|finished|paused|interrupted
	Tally         Tally   `json:"tally"`
	Queue         []int   `json:"queue"`
	// Train is the merge train: which queued candidates are being
	// verified (on top of which), verified, held, still queued or
	// waiting on checks; null when nothing is queued.
	Train      *TrainView  `json:"train"`
	Issues     []IssueView `json:"issues"`
	NeedsInput []Question  `json:"needsInput"`
	Dropped    []Skip      `json:"dropped"`
	FinalPR    *PRRef      `json:"finalPr"`
	// FinalPRChecks is the final PR's required checks as last seen
	// (backlog.checks), null when they were not watched.
	FinalPRChecks *ChecksState `json:"finalPrChecks"`
	ExitCode      *int         `json:"exitCode"`
	ElapsedSec    int64        `json:"elapsedSeconds"`
	APICalls      int64        `json:"apiCalls"`
	BadEvents     []string     `json:"badEvents"`
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
	// ForeignCommit is the commit the run did not make found on origin's
	// wave branch (merges stopped there), null when none.
	ForeignCommit *Foreign `json:"foreignCommit"`
	// Paused are the executors whose account is out, each with the line
	// status shows ("paused: claude usage limit until 15:00 …").
	Paused []PauseView `json:"paused"`
	// Sandbox is whether the run's workers are sandboxed (null: not
	// recorded, a run from before sandboxes, or workers in pods).
	Sandbox *SandboxState `json:"sandbox"`
	// BlockedHosts are the hosts the sandbox refused, with the issues
	// whose worker, reviewer or verify step tried them.
	BlockedHosts []BlockedHost `json:"blockedHosts"`
}

// PauseView is an open usage-limit pause and how status says it.
type PauseView struct {
	Pause
	Line string `json:"line"`
}

// Waiting is a transient failure a supervisor is waiting out: its sweeps
// fail, so nothing is dispatched or merged, while the workers keep
// running. The supervisor keeps it in its run's waiting.json meanwhile.
type Waiting struct {
	Cause    string    `json:"cause"`  // in words: "origin unreachable", "no space left on device"
	Detail   string    `json:"detail"` // the last failure, one line
	Since    time.Time `json:"since"`
	Tries    int       `json:"tries"` // failed sweeps so far
	NextTry  time.Time `json:"nextTryAt"`
	GiveUpAt time.Time `json:"giveUpAt"` // since + backlog.transientRetryMinutes
}

// ProbeWait is one salvage relaunch held by a failing probe.
type ProbeWait struct {
	Issue    int       `json:"issue"`
	Failures int       `json:"failures"`
	MaxTries int       `json:"maxTries"`
	Reason   string    `json:"reason"`
	NextAt   time.Time `json:"nextAt"`
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
	Number   int    `json:"number"`
	Title    string `json:"title"`
	State    string `json:"state"`
	Branch   string `json:"branch"`
	Worktree string `json:"worktree"`
	Session  string `json:"session"`
	// Pod is where a worker on kubernetes runs: namespace/pod, and its
	// node when known ("" on tmux).
	Pod           string `json:"pod,omitempty"`
	RunDir        string `json:"runDir"`
	Attempts      int    `json:"attempts"`
	CommitsAhead  *int   `json:"commitsAhead"`
	DirtyFiles    *int   `json:"dirtyFiles"`
	LastOutputSec *int64 `json:"lastOutputAgeSeconds"`
	QueuePosition int    `json:"queuePosition"` // 1-based; 0 = not queued
	Verify        string `json:"verify"`
	// VerifyCommit is the would-be merge commit its last verify ran on;
	// VerifyAhead the merge train's candidates that commit holds beyond
	// the wave tip (empty: on the wave tip).
	VerifyCommit string `json:"verifyCommit"`
	VerifyAhead  []int  `json:"verifyAhead"`
	// Setup is its checkout's setup (backlog.setup, backlog.copyIgnored):
	// a Setup* outcome, "" when none ran.
	Setup       string   `json:"setup"`
	Conflicts   int      `json:"conflicts"`
	Files       []string `json:"files"`
	PR          *PRRef   `json:"pr"`
	Question    string   `json:"question"`
	Detail      string   `json:"detail"`
	MergeCommit string   `json:"mergeCommit"`
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
	Answer  *Answer `json:"answer"`
	Answers int     `json:"answers"`
	// Usage is what the issue's runs spent: every attempt, salvage
	// relaunch, rework round and review.
	Usage *usage.Usage `json:"usage"`
	// Checks is the required checks of its head as the merge gate last
	// saw them (backlog.checks), null before the gate looked.
	Checks *ChecksState `json:"checks"`
	// BlockedHosts are the hosts the sandbox refused this issue's runs.
	BlockedHosts []string `json:"blockedHosts"`
}

// ViewStopped is the state status shows for an issue whose worker
// `backlog stop` ended: claimed, its worktree kept, no worker running
// (not "claimed" with an output age, as if one were about to start).
const ViewStopped = "stopped"

// ViewPaused is the state status shows for an issue whose worker stopped
// at its executor's usage limit and waits for the reset in its worktree.
const ViewPaused = "paused"

// LiveFacts are what the caller saw of an unfinished issue's worktree
// and output; nil fields were not observed.
type LiveFacts struct {
	CommitsAhead  *int
	DirtyFiles    *int
	LastOutputSec *int64
	Pod           string // a worker on kubernetes: namespace/pod (on node)
}

// StatusInput is what a status snapshot needs beyond the reduced run:
// the facts only the caller can observe.
type StatusInput struct {
	BadEvents []string // corrupt event lines skipped while reducing
	LockHeld  bool     // a supervisor holds the lane
	// StopPending: a `backlog stop` (not --finish) waits in the run for
	// the next supervisor, none being alive when it was asked.
	StopPending bool
	Now         time.Time
	// Waiting and Probes are shown only while a supervisor holds the lane.
	Waiting    *Waiting
	Probes     []ProbeWait
	Usage      *usage.Usage
	IssueUsage map[int]*usage.Usage
	Live       map[int]LiveFacts
}

// NewStatusView builds the snapshot of reduced run r.
func NewStatusView(r *Run, in StatusInput) StatusView {
	v := StatusView{SchemaVersion: StatusSchemaVersion, Run: r.Info, Tally: r.Tally(), Queue: append([]int{}, r.Queue...),
		Dropped: append([]Skip{}, r.Dropped...), FinalPR: r.FinalPR, FinalPRChecks: r.FinalChecks, ExitCode: r.ExitCode, APICalls: r.APICalls,
		BadEvents: append([]string{}, in.BadEvents...), Issues: []IssueView{}, NeedsInput: []Question{}, Probes: []ProbeWait{},
		Usage: in.Usage, ForeignCommit: r.Foreign, Paused: []PauseView{}, Sandbox: r.Sandbox, BlockedHosts: r.BlockedHosts(),
		Train: NewTrainView(r)}
	if v.BlockedHosts == nil {
		v.BlockedHosts = []BlockedHost{}
	}
	if !r.Finished {
		for _, p := range r.OpenPauses() {
			v.Paused = append(v.Paused, PauseView{Pause: p, Line: PauseLine(p, in.Now)})
		}
	}
	if v.Run.Bounded == nil {
		v.Run.Bounded = []int{}
	}
	switch {
	case r.Finished:
		v.State = "finished"
		v.ElapsedSec = int64(r.FinishedAt.Sub(r.Info.StartedAt).Seconds())
	case in.LockHeld:
		v.State = "running"
		v.ElapsedSec = int64(in.Now.Sub(r.Info.StartedAt).Seconds())
		v.Waiting = in.Waiting
		v.Probes = append(v.Probes, in.Probes...)
		v.WaitingForAnswers = NewAnswerWait(r)
	case r.StopPaused || in.StopPending:
		v.State = "paused"
		v.ElapsedSec = int64(in.Now.Sub(r.Info.StartedAt).Seconds())
	default:
		v.State = "interrupted"
		v.ElapsedSec = int64(in.Now.Sub(r.Info.StartedAt).Seconds())
	}
	for _, is := range r.List() {
		iv := IssueView{Number: is.Number, Title: is.Title, State: is.State, Branch: is.Branch, Worktree: is.Worktree,
			Session: is.Session, RunDir: is.RunDir, Attempts: is.Attempts, Verify: is.Verify, Conflicts: is.Conflicts, Files: is.Files,
			PR: is.PR, Question: is.Question, Detail: is.Detail, MergeCommit: is.MergeCommit,
			Reworks: is.Reworks, ReworkFrom: is.ReworkFrom, Feedback: is.Feedback, Answer: is.Answer, Answers: is.Answers,
			Checks: is.Checks}
		if iv.Files == nil {
			iv.Files = []string{}
		}
		if is.Setup != nil {
			iv.Setup = is.Setup.Outcome
		}
		iv.Outside = append([]string{}, is.Outside...)
		iv.VerifyCommit, iv.VerifyAhead = is.VerifyCommit, append([]int{}, is.VerifyAhead...)
		iv.BlockedHosts = append([]string{}, is.Blocked...)
		iv.Usage = in.IssueUsage[is.Number]
		if i := slices.Index(r.Queue, is.Number); i >= 0 {
			iv.QueuePosition = i + 1
		}
		if f, ok := in.Live[is.Number]; ok && !Terminal(is.State) {
			iv.CommitsAhead, iv.DirtyFiles, iv.LastOutputSec = f.CommitsAhead, f.DirtyFiles, f.LastOutputSec
			iv.Pod = f.Pod
		}
		if is.State == StateClaimed && is.Outcome == OutcomeStopped {
			iv.State, iv.LastOutputSec = ViewStopped, nil
		}
		if is.State == StateClaimed && is.Outcome == OutcomeUsageLimited {
			iv.State, iv.LastOutputSec = ViewPaused, nil
		}
		v.Issues = append(v.Issues, iv)
		if is.State == StateNeedsInput {
			v.NeedsInput = append(v.NeedsInput, Question{Issue: is.Number, Title: is.Title, Question: is.Question})
		}
	}
	v.NeedsInput = append(v.NeedsInput, r.Bucket()...)
	return v
}

// NewAnswerWait is r's open wait for answers with the issues it waits
// for, nil when it waits for none.
func NewAnswerWait(r *Run) *AnswerWait {
	w := r.WaitingForAnswers()
	if w == nil {
		return nil
	}
	a := &AnswerWait{Since: w.Since, Until: w.Until, Issues: []int{}}
	for _, is := range r.List() {
		if is.State == StateNeedsInput {
			a.Issues = append(a.Issues, is.Number)
		}
	}
	return a
}

// OneLine is s cleaned for one line of a status: control characters
// removed, newlines and tabs as spaces, at most 200 characters.
func OneLine(s string) string {
	out := []rune{}
	for _, r := range Clean(s) {
		if r == '\n' || r == '\t' {
			r = ' '
		}
		out = append(out, r)
	}
	if len(out) > 200 {
		out = append(out[:197], '.', '.', '.')
	}
	return string(out)
}

// ReworkLabel is how status (text and dashboard) shows an issue's rework
// rounds: "1 rework round (verify)".
func ReworkLabel(rounds int, from string) string {
	if rounds == 1 {
		return "1 rework round (" + OneLine(from) + ")"
	}
	return fmt.Sprintf("%d rework rounds (last: %s)", rounds, OneLine(from))
}

// WaitingLine is how status (text and dashboard) shows a wait: "waiting:
// origin unreachable since 2026-12-01T21:40:05Z (try 4, gives up at …)".
func WaitingLine(w *Waiting) string {
	return fmt.Sprintf("waiting: %s since %s (try %d, gives up at %s; workers keep running, nothing is dispatched or merged): %s",
		OneLine(w.Cause), w.Since.UTC().Format(time.RFC3339), w.Tries, w.GiveUpAt.UTC().Format(time.RFC3339), OneLine(w.Detail))
}

// SandboxLine is how status (text and dashboard) shows a run whose
// workers are not sandboxed; "" when they are (or it is not recorded).
func SandboxLine(st *SandboxState) string {
	if st == nil || st.On {
		return ""
	}
	return "sandbox: off (" + OneLine(st.Why) + "): workers can read your home directory and reach any host"
}

// BlockedLine is how status shows one host the sandbox refused.
func BlockedLine(b BlockedHost) string {
	refs := make([]string, len(b.Issues))
	for i, n := range b.Issues {
		refs[i] = "#" + strconv.Itoa(n)
	}
	return "blocked host: " + OneLine(b.Host) + " (" + strings.Join(refs, " ") + ")"
}

// ProbeLine is how status shows a salvage held by the probe.
func ProbeLine(w ProbeWait) string {
	return fmt.Sprintf("waiting: probe failed %d×: %s (#%d's salvage relaunch; next try %s, parked after %d)",
		w.Failures, OneLine(w.Reason), w.Issue, w.NextAt.UTC().Format(time.RFC3339), w.MaxTries)
}

// InputWaitLine is how the supervisor, status and the dashboard show a
// wait for answers: "waiting for answers to #3 #5 since … (until …)".
func InputWaitLine(a AnswerWait) string {
	until := "no time limit"
	if a.Until != nil {
		until = "until " + a.Until.UTC().Format(time.RFC3339)
	}
	refs := make([]string, len(a.Issues))
	for i, n := range a.Issues {
		refs[i] = "#" + strconv.Itoa(n)
	}
	return fmt.Sprintf("waiting for answers to %s since %s (%s): nothing else is left to do",
		strings.Join(refs, " "), a.Since.UTC().Format(time.RFC3339), until)
}

// ForeignLine is the status line of a foreign commit on the wave branch.
func ForeignLine(f Foreign) string {
	if f.Found == "" {
		return fmt.Sprintf("foreign change: the wave branch was deleted on origin (the run last pushed %s); merges stopped", shortSHA(f.Expected))
	}
	return fmt.Sprintf("foreign commit: origin's wave branch is at %s, not %s (the run's last push); merges stopped, nothing built on it",
		shortSHA(f.Found), shortSHA(f.Expected))
}
