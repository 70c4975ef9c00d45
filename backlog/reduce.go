package backlog

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Issue states in a run (docs/backlog-status-schema.md).
const (
	StatePlanned    = "planned"
	StateClaimed    = "claimed"
	StateRunning    = "running"
	StateReady      = "ready"
	StateMerging    = "merging"
	StateMerged     = "merged"
	StateNeedsInput = "needs-input"
	StateParked     = "parked"
	StateFailed     = "failed"
)

// Run is the reduced state of one backlog run: what `backlog status`, its
// JSON and the dashboard's backlog view all show.
type Run struct {
	Info       RunInfo           `json:"run"`
	Issues     map[int]*IssueRun `json:"-"`
	Order      []int             `json:"-"` // issues in the order they entered the run
	Queue      []int             `json:"queue"`
	Intents    map[string]Intent `json:"-"` // recorded and not yet done
	Done       map[string]PRRef  `json:"-"` // intents done → the pull request each opened (zero: not a PR's)
	FinalPR    *PRRef            `json:"finalPr,omitempty"`
	Finished   bool              `json:"finished"`
	FinishedAt *time.Time        `json:"finishedAt,omitempty"`
	Outcome    string            `json:"outcome,omitempty"`
	ExitCode   *int              `json:"exitCode,omitempty"`
	Detail     string            `json:"detail,omitempty"`
	LastPlan   *Plan             `json:"-"`
	BaseMerges int               `json:"baseMerges,omitempty"`
	Dropped    []Skip            `json:"dropped,omitempty"`   // left the run before dispatch, with why
	Finishing  bool              `json:"finishing,omitempty"` // ending: no more work is taken
	// StopPaused: `backlog stop` paused it; `backlog run` resumes it.
	StopPaused bool  `json:"stopPaused,omitempty"`
	APICalls   int64 `json:"apiCalls,omitempty"` // sum of the events' Calls
	// Wave is the cut of the wave branch (runs older than the
	// wave_branch event have none: their branch was cut before start).
	Wave *WaveState `json:"-"`
	// WaveTip is the wave branch's tip on origin as the run last pushed
	// it ("" for runs whose log predates the record): anything else on
	// origin's wave branch is a foreign commit.
	WaveTip string `json:"waveTip,omitempty"`
	// Foreign is the foreign commit found on origin's wave branch; merges
	// stopped there. nil: none found.
	Foreign *Foreign `json:"foreignCommit,omitempty"`
	// Waits are the transient failures waited out, oldest first; the
	// last is open (Until nil) while a supervisor waits, or was killed
	// waiting.
	Waits []Wait `json:"waits,omitempty"`
	// InputWait is the last wait for answers (backlog.inputWaitMinutes);
	// open (Ended nil) while the run has nothing left but questions.
	InputWait *InputWait `json:"inputWait,omitempty"`
	// Pauses are the executors whose account is out, by executor id
	// (pause.go).
	Pauses map[string]*Pause `json:"pauses,omitempty"`
	// FinalChecks is the checks gate's last look at the final PR's head
	// (backlog.checks), nil when it was not watched.
	FinalChecks *ChecksState `json:"finalChecks,omitempty"`
	// Sandbox is whether the run's workers are sandboxed (nil: a run
	// recorded before sandboxes were).
	Sandbox *SandboxState `json:"sandbox,omitempty"`
	// Processes are the processes of the repository's code recorded
	// (EvProcess) since a supervisor last ended what an earlier one left
	// running.
	Processes []Process `json:"-"`
	backoffs  map[string]int
	applied   int
}

// WaveState is where cutting the wave branch is: the candidate name
// (Info.WaveBranch), the commit that reserves it on origin, which
// candidate it is (1 = no suffix) and whether the branch is cut.
type WaveState struct {
	Reservation string `json:"reservation"`
	Attempt     int    `json:"attempt"`
	Cut         bool   `json:"cut"`
	// CutAt is the commit the branch was cut at ("" in older logs).
	CutAt string `json:"cutAt,omitempty"`
}

// Wait is one transient window: from Since (the first failed sweep)
// until the first sweep that went through (or the give-up).
type Wait struct {
	Cause   string     `json:"cause"`
	Detail  string     `json:"detail,omitempty"`
	Since   time.Time  `json:"since"`
	Until   *time.Time `json:"until,omitempty"`
	Outcome string     `json:"outcome,omitempty"` // recovered | gave-up
}

// OpenWait is the wait going on (or cut short by a kill), nil when none.
func (r *Run) OpenWait() *Wait {
	if n := len(r.Waits); n > 0 && r.Waits[n-1].Until == nil {
		return &r.Waits[n-1]
	}
	return nil
}

// Foreign is a commit the run did not make, found on origin's wave
// branch.
type Foreign struct {
	Found    string    `json:"found"`    // origin's tip ("" = the branch is gone)
	Expected string    `json:"expected"` // the tip the run last pushed
	Detail   string    `json:"detail"`
	At       time.Time `json:"at"`
}

// PRRef is a pull request the run opened (or the local source's file).
type PRRef struct {
	Number int    `json:"number,omitempty"`
	URL    string `json:"url"`
}

// donePR is the pull request an intent_done event names: its url and
// number. Runs before the number had its own field wrote the two as one
// "url#number" in url; those logs still read.
func donePR(ev Event) PRRef {
	pr := PRRef{Number: ev.Number, URL: ev.URL}
	if pr.Number != 0 {
		return pr
	}
	i := strings.LastIndex(pr.URL, "#")
	if i < 0 {
		return pr
	}
	if n, err := strconv.Atoi(pr.URL[i+1:]); err == nil && n >= 0 {
		pr.Number, pr.URL = n, pr.URL[:i]
	}
	return pr
}

// IssueRun is one issue's life in the run.
type IssueRun struct {
	Number    int      `json:"number"`
	Title     string   `json:"title"`
	State     string   `json:"state"`
	Group     int      `json:"group,omitempty"`
	Surface   Surface  `json:"surface"`
	Branch    string   `json:"branch,omitempty"`
	Worktree  string   `json:"worktree,omitempty"`
	Session   string   `json:"session,omitempty"`
	RunDir    string   `json:"runDir,omitempty"`
	Attempts  int      `json:"attempts"`
	Salvages  int      `json:"salvages"`
	Conflicts int      `json:"conflicts"`
	ClaimRef  string   `json:"claimRef,omitempty"`
	Outcome   string   `json:"outcome,omitempty"` // last worker outcome
	ExitCode  *int     `json:"exitCode,omitempty"`
	Detail    string   `json:"detail,omitempty"`
	Question  string   `json:"question,omitempty"`
	Commits   int      `json:"commits"`
	Files     []string `json:"files,omitempty"` // conflicting files, or the merged diff
	Verify    string   `json:"verify,omitempty"`
	// VerifyCommit is the would-be merge commit its last verify ran on,
	// VerifyAhead the merge train's candidates that commit is built on
	// (empty: on the wave tip).
	VerifyCommit string   `json:"verifyCommit,omitempty"`
	VerifyAhead  []int    `json:"verifyAhead,omitempty"`
	MergeCommit  string   `json:"mergeCommit,omitempty"`
	PR           *PRRef   `json:"pr,omitempty"`
	Released     bool     `json:"released,omitempty"`
	SalvageRefs  []string `json:"salvageRefs,omitempty"`
	// Reworks counts the rework rounds (counted when the round is
	// recorded, so a restart never spends one twice); Feedback is the
	// last round's, from ReworkFrom (a Rework* source).
	Reworks    int     `json:"reworks"`
	ReworkFrom string  `json:"reworkFrom,omitempty"`
	Feedback   string  `json:"feedback,omitempty"`
	Reviewed   []int64 `json:"-"` // worker PR reviews already answered by a round
	// Threads are the worker PR review threads already answered by a
	// round: a thread left unresolved after it is not answered again.
	Threads []string `json:"-"`
	// InRework: the worker's runs answer the last round's feedback until
	// its change is ready again (a relaunch after a crash or a failure
	// gets the feedback too).
	InRework bool `json:"inRework,omitempty"`
	// EnvRelaunches counts the worker's failures caused by the
	// supervisor's environment: relaunches that did not spend the salvage.
	EnvRelaunches int `json:"envRelaunches,omitempty"`
	ReadyAt       int `json:"-"` // event index it became ready (FIFO key)

	// Outside is what the worker changed outside the declared surface
	// (merged under backlog.surfacePolicy warn, or why it parked).
	Outside []string `json:"outside,omitempty"`

	// ProgressMark is what the supervisor last saw of the current
	// worker's checkout (its head and tree), ProgressAt when it saw it
	// change; empty and nil until its first look (EvProgress).
	ProgressMark string     `json:"progressMark,omitempty"`
	ProgressAt   *time.Time `json:"progressAt,omitempty"`

	// Answers counts the questions of this run answered so far (each
	// question's comment and label are written once per round); Answer
	// is the last one, given to every later start of its worker.
	Answers int     `json:"answers,omitempty"`
	Answer  *Answer `json:"answer,omitempty"`

	// Checks is the checks gate's last look at the worker's head
	// (backlog.checks), nil before its first.
	Checks *ChecksState `json:"checks,omitempty"`
	// Blocked are the hosts the sandbox refused its worker, reviewer or
	// verify step, each once.
	Blocked []string `json:"blockedHosts,omitempty"`
	// Setup is its checkout's setup (backlog.setup, backlog.copyIgnored),
	// nil before the first.
	Setup *SetupState `json:"setup,omitempty"`
}

// WaitingForAnswers is the open wait for answers, nil when none.
func (r *Run) WaitingForAnswers() *InputWait {
	if w := r.InputWait; w != nil && w.Ended == nil {
		return w
	}
	return nil
}

// Tally is the count the supervisor reports at every checkpoint.
type Tally struct {
	Merged     int `json:"merged"`
	InFlight   int `json:"inFlight"`
	Blocked    int `json:"blocked"`
	NeedsInput int `json:"needsInput"`
	Planned    int `json:"planned"`
	// Stopped are claimed issues whose worker `backlog stop` ended:
	// nothing works on them until `backlog run` resumes the run.
	Stopped int `json:"stopped"`
}

// Terminal reports whether an issue's state is final for this run.
func Terminal(state string) bool {
	switch state {
	case StateMerged, StateNeedsInput, StateParked, StateFailed:
		return true
	}
	return false
}

// Bucket is the needs-input bucket of the latest plan: issues labelled as
// waiting for a person, never dispatched, reported at every checkpoint.
// Issues of the run that came to need input are in the run's issues.
func (r *Run) Bucket() []Question {
	if r.LastPlan == nil {
		return nil
	}
	var out []Question
	for _, q := range r.LastPlan.NeedsInput {
		if _, in := r.Issues[q.Issue]; !in {
			out = append(out, q)
		}
	}
	return out
}

// Tally counts the run's issues by state, and the needs-input bucket.
func (r *Run) Tally() Tally {
	t := Tally{NeedsInput: len(r.Bucket())}
	for _, is := range r.Issues {
		switch is.State {
		case StateMerged:
			t.Merged++
		case StateParked, StateFailed:
			t.Blocked++
		case StateNeedsInput:
			t.NeedsInput++
		case StatePlanned:
			t.Planned++
		case StateClaimed:
			if is.Outcome == OutcomeStopped {
				t.Stopped++
			} else {
				t.InFlight++
			}
		default:
			t.InFlight++
		}
	}
	return t
}

// List returns the run's issues in the order they entered it.
func (r *Run) List() []*IssueRun {
	out := make([]*IssueRun, 0, len(r.Order))
	for _, n := range r.Order {
		out = append(out, r.Issues[n])
	}
	return out
}

// Reduce folds a run's events into its state. It is pure: the same events
// always give the same Run, which is why the tally after a kill -9 and a
// restart is the tally before it.
func Reduce(events []Event) *Run {
	r := &Run{Issues: map[int]*IssueRun{}, Intents: map[string]Intent{}, Done: map[string]PRRef{}}
	for _, ev := range events {
		r.Apply(ev)
	}
	return r
}

// Apply folds one more event into the run.
func (r *Run) Apply(ev Event) {
	r.apply(r.applied, ev)
	r.applied++
}

func (r *Run) issue(n int) *IssueRun {
	is := r.Issues[n]
	if is == nil {
		is = &IssueRun{Number: n, State: StatePlanned}
		r.Issues[n] = is
		r.Order = append(r.Order, n)
	}
	return is
}

func (r *Run) apply(i int, ev Event) {
	r.APICalls += ev.Calls
	if ev.Tip != "" {
		r.WaveTip = ev.Tip
	}
	switch ev.Kind {
	case EvForeignCommit:
		if r.Foreign == nil {
			r.Foreign = &Foreign{Found: ev.Commit, Expected: ev.Ref, Detail: ev.Detail, At: ev.At}
		}
		return
	case EvRunStarted:
		if ev.Run != nil {
			r.Info = *ev.Run
		}
		return
	case EvPlanned:
		r.LastPlan = ev.Plan
		return
	case EvWaveBranch:
		if ev.Branch != "" {
			r.Info.WaveBranch = ev.Branch
		}
		if r.Wave == nil {
			r.Wave = &WaveState{}
		}
		if ev.Ref != "" {
			r.Wave.Reservation, r.Wave.Attempt = ev.Ref, ev.Attempt
		}
		r.Wave.Cut = ev.Outcome == WaveCut
		if r.Wave.Cut && ev.Tip != "" {
			r.Wave.CutAt = ev.Tip
		}
		return
	case EvIntent:
		if ev.Intent != nil {
			r.Intents[ev.Intent.ID] = *ev.Intent
		}
		return
	case EvIntentDone:
		if ev.Intent != nil {
			delete(r.Intents, ev.Intent.ID)
			r.Done[ev.Intent.ID] = donePR(ev)
		}
		return
	case EvBaseMerged:
		r.BaseMerges++
		return
	case EvFinishing:
		r.Finishing = true
		return
	case EvRunPaused, EvRunResumed:
		r.StopPaused = ev.Kind == EvRunPaused
		return
	case EvWaitStarted:
		if w := r.OpenWait(); w != nil {
			w.Cause, w.Detail = ev.Cause, ev.Detail // the window goes on
			return
		}
		r.Waits = append(r.Waits, Wait{Cause: ev.Cause, Detail: ev.Detail, Since: ev.At})
		return
	case EvWaitEnded:
		if w := r.OpenWait(); w != nil {
			at := ev.At
			w.Until, w.Outcome = &at, ev.Outcome
		}
		return
	case EvInputWait:
		r.inputWait(ev)
		return
	case EvSandbox:
		r.sandbox(ev)
		return
	case EvProcess:
		r.process(ev)
		return
	case EvUsageLimit:
		r.usageLimit(ev)
		return
	case EvRunFinished:
		r.Finished, r.Outcome, r.ExitCode, r.Detail = true, ev.Outcome, ev.ExitCode, ev.Detail
		at := ev.At
		r.FinishedAt = &at
		return
	case EvPR:
		if ev.Issue == 0 {
			r.FinalPR = &PRRef{Number: ev.Number, URL: ev.URL}
			return
		}
	case EvChecks:
		if ev.Issue == 0 {
			r.FinalChecks = applyChecks(r.FinalChecks, ev)
			return
		}
	}
	if ev.Issue == 0 {
		return
	}
	r.applyIssue(i, r.issue(ev.Issue), ev)
}

func (r *Run) applyIssue(i int, is *IssueRun, ev Event) {
	switch ev.Kind {
	case EvIssue:
		is.Title, is.Group = ev.Title, ev.Group
		if ev.Surface != nil {
			is.Surface = *ev.Surface
		}
	case EvClaimed:
		is.State, is.ClaimRef = StateClaimed, ev.Ref
	case EvClaimLost:
		is.State, is.Detail = StateFailed, "claimed elsewhere: "+ev.Detail
		is.Released = true // not ours any more
		r.dequeue(is.Number)
	case EvWorkerStarted:
		is.State, is.Attempts = StateRunning, ev.Attempt
		if ev.Salvage && ev.Ref != "" {
			// Counted when the relaunch is recorded, not at the snapshot:
			// a crash in between must not spend the one salvage.
			is.Salvages++
		}
		is.Branch, is.Worktree, is.RunDir, is.Session = ev.Branch, ev.Worktree, ev.RunDir, ev.Session
		is.ExitCode, is.Outcome = nil, ""
		is.ProgressMark, is.ProgressAt = "", nil
	case EvWorkerFinished:
		is.Outcome, is.ExitCode, is.Commits = ev.Outcome, ev.ExitCode, ev.Commits
		switch ev.Outcome {
		case OutcomeStopped, OutcomeUsageLimited:
			is.State = StateClaimed // no worker now; the claim and worktree stay
		case OutcomeEnvironment:
			is.EnvRelaunches++
		}
		if ev.Detail != "" {
			is.Detail = ev.Detail
		}
	case EvSalvaged:
		is.SalvageRefs = append(is.SalvageRefs, ev.Ref)
	case EvClaimRenewed:
		is.ClaimRef = ev.Ref
	case EvProgress:
		if ev.Attempt == is.Attempts {
			at := ev.At
			is.ProgressMark, is.ProgressAt = ev.Ref, &at
		}
	case EvReady:
		is.State, is.Commits, is.ReadyAt = StateReady, ev.Commits, i
		is.InRework = false
		is.Verify, is.VerifyCommit, is.VerifyAhead = "", "", nil // a new change: not verified yet
		if !slices.Contains(r.Queue, is.Number) {
			r.Queue = append(r.Queue, is.Number)
		}
	case EvMergeStarted:
		is.State = StateMerging
	case EvVerify:
		is.Verify = ev.Outcome
		if ev.Commit != "" {
			is.VerifyCommit = ev.Commit
		}
		if ev.Outcome == VerifyRunning || ev.Outcome == VerifyReviewing || ev.Outcome == VerifyConflict {
			is.VerifyAhead = ev.Ahead
		}
		if ev.Outcome == VerifyFailed {
			is.Detail = ev.Detail
		}
	case EvMerged:
		is.State, is.MergeCommit, is.Files = StateMerged, ev.Commit, ev.Files
		is.Outside = ev.Outside
		r.dequeue(is.Number)
	case EvConflict:
		is.Conflicts++
		is.Files = ev.Files
		// Its worker is sent back: claimed until that start is recorded.
		is.State, is.Outcome = StateClaimed, OutcomeConflict
		r.dequeue(is.Number)
	case EvRework:
		is.Reworks++
		is.ReworkFrom, is.Feedback, is.Detail = ev.Outcome, ev.Feedback, ev.Detail
		is.Reviewed = append(is.Reviewed, ev.Reviews...)
		is.Threads = append(is.Threads, ev.Threads...)
		is.InRework = true
		// Its worker is sent back: claimed until that start is recorded.
		is.State, is.Outcome = StateClaimed, OutcomeRework
		r.dequeue(is.Number)
	case EvNeedsInput:
		is.State, is.Question = StateNeedsInput, ev.Question
		r.dequeue(is.Number)
	case EvSetup:
		is.setup(ev)
	case EvAnswered:
		is.Answers++
		is.Answer = &Answer{Question: firstOf(ev.Question, is.Question), Text: ev.Answer, By: ev.By, Via: ev.Outcome, At: ev.At}
		// Its worker is sent back: claimed until that start is recorded.
		is.State, is.Outcome = StateClaimed, OutcomeAnswered
		r.inputWait(Event{Kind: EvInputWait, At: ev.At, Outcome: "answered"})
	case EvParked:
		is.State, is.Detail, is.Question = StateParked, ev.Detail, ev.Question
		if len(ev.Files) > 0 {
			is.Files = ev.Files
		}
		if len(ev.Outside) > 0 {
			is.Outside = ev.Outside
		}
		r.dequeue(is.Number)
	case EvFailed:
		is.State, is.Detail = StateFailed, ev.Detail
		r.dequeue(is.Number)
	case EvPR:
		is.PR = &PRRef{Number: ev.Number, URL: ev.URL}
	case EvChecks:
		is.Checks = applyChecks(is.Checks, ev)
	case EvReleased:
		is.Released = true
	case EvSurfaceOverlap:
		is.Detail = ev.Detail
	case EvBlocked:
		for _, h := range ev.Hosts {
			if !slices.Contains(is.Blocked, h) {
				is.Blocked = append(is.Blocked, h)
			}
		}
	case EvDropped:
		r.dequeue(is.Number)
		delete(r.Issues, is.Number)
		if i := slices.Index(r.Order, is.Number); i >= 0 {
			r.Order = slices.Delete(r.Order, i, i+1)
		}
		r.Dropped = append(r.Dropped, Skip{Issue: is.Number, Reason: ev.Outcome, Detail: ev.Detail})
	}
}

func (r *Run) dequeue(n int) {
	if i := slices.Index(r.Queue, n); i >= 0 {
		r.Queue = slices.Delete(r.Queue, i, i+1)
	}
}

// inputWait opens (Outcome waiting) or ends a wait for answers.
func (r *Run) inputWait(ev Event) {
	if ev.Outcome == InputWaiting {
		if r.WaitingForAnswers() == nil {
			r.InputWait = &InputWait{Since: ev.At, Until: ev.Until}
		}
		return
	}
	if w := r.WaitingForAnswers(); w != nil {
		at := ev.At
		w.Ended, w.Outcome = &at, ev.Outcome
	}
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
