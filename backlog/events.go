package backlog

import "time"

// Event kinds of a backlog run's events.jsonl, the run's truth: every
// decision and every external write is recorded here first, so a
// supervisor restarted after kill -9 knows what it did and what it only
// meant to do.
const (
	EvRunStarted     = "run_started"     // Run
	EvWaveBranch     = "wave_branch"     // Branch, Ref, Attempt, Outcome (cutting|cut): the wave branch's name before it is pushed, and once it is on origin
	EvPlanned        = "planned"         // Plan; Issue 0
	EvIssue          = "issue"           // Issue, Title, Surface, Labels: an issue entered the run
	EvClaimed        = "claimed"         // Issue, Ref (claim commit)
	EvClaimLost      = "claim_lost"      // Issue, Detail (holder)
	EvClaimRenewed   = "claim_renewed"   // Issue, Ref (the renewed claim commit)
	EvFinishing      = "finishing"       // the run takes no more work: it is ending
	EvIntent         = "intent"          // Intent: an external write about to happen
	EvIntentDone     = "intent_done"     // Intent.ID; a PR's URL, Number (older runs: URL "url#number")
	EvWorkerStarted  = "worker_started"  // Issue, Attempt, Branch, Worktree, RunDir, Session, Salvage
	EvWorkerFinished = "worker_finished" // Issue, Attempt, Outcome, ExitCode, Detail, Question, Commits
	EvSalvaged       = "salvaged"        // Issue, Attempt, Ref
	EvReady          = "ready"           // Issue, Commits: queued for merge
	EvMergeStarted   = "merge_started"   // Issue
	EvVerify         = "verify"          // Issue, Outcome (a Verify* outcome), Detail, Commit (the would-be merge verified), Ref (the commit it is built on), Ahead
	EvMerged         = "merged"          // Issue, Commit, Files, Outside (changed outside the declared surface)
	EvConflict       = "conflict"        // Issue, Files, Attempt
	EvNeedsInput     = "needs_input"     // Issue, Question
	EvParked         = "parked"          // Issue, Detail, Question, Files, Outside
	EvFailed         = "failed"          // Issue, Detail
	EvPR             = "pr"              // Issue (0 = final PR), URL, Number
	EvReleased       = "released"        // Issue, Detail
	EvSurfaceOverlap = "surface_overlap" // Issue, Files, Detail: actual diff touched in-flight work
	EvBaseMerged     = "base_merged"     // Commit: origin/<base> merged into the wave branch
	EvDropped        = "dropped"         // Issue, Outcome (a Skip reason), Detail: left the run before dispatch
	EvRunFinished    = "run_finished"    // Outcome (finished|stopped), ExitCode, Detail
	// EvRework: the issue goes back to its worker with feedback (a rework
	// round). Issue, Attempt (the attempt sent back), Outcome (a Rework*
	// source), Detail (one line), Feedback, Reviews (PR reviews answered).
	EvRework = "rework"
	// A transient failure waited out (an outage of origin or GitHub):
	// recorded so a supervisor restarted mid-outage keeps its window
	// (the give-up time, which worker failures were the environment's).
	EvWaitStarted = "wait_started" // At = since, Cause, Detail; again while one is open: the cause changed
	EvWaitEnded   = "wait_ended"   // At = the end of the window, Outcome (recovered|gave-up)
	// EvAnswered: an open run saw the answer to a needs-input issue's
	// question; the issue goes back to its worker. Issue, Question,
	// Answer (the text, "" when only the label was removed), By (who),
	// Outcome (an Answered* way).
	EvAnswered = "answered"
	// EvInputWait: the run has nothing left but questions and waits for
	// their answers (Outcome waiting, At = since, Until = when it stops
	// waiting, nil = no limit), or stopped waiting (Outcome gave-up).
	// An answer ends the wait too.
	EvInputWait = "input_wait"
	// EvForeignCommit: origin's wave branch is not where the run last put
	// it (Ref, the recorded tip) but at Commit ("" when the branch is
	// gone), a commit the run did not make: merging stops, the run ends
	// with the foreign commit reported. Detail says it in words.
	EvForeignCommit = "foreign_commit"
	// EvIssuesClosed: the merged issues' files were marked closed on the
	// wave branch (local source) in Commit; Tip is the branch's tip after.
	EvIssuesClosed = "issues_closed"
	// EvUsageLimit: an executor's account is out (Outcome paused: no
	// worker of Executor starts until Until, the CLI's reset or a capped
	// backoff; Issue is the worker that hit it, Detail the CLI's words),
	// or the pause ended (Outcome resumed). backlog/pause.go.
	EvUsageLimit = "usage_limit"
	// EvProgress: a worker's checkout changed (a commit or a changed
	// tree) as the supervisor last looked: Issue, Attempt, Ref (what it
	// saw), At. The no-progress and silence timers run from it, across
	// restarts.
	EvProgress = "progress"
	// EvRunPaused: `backlog stop` paused the run (its workers stopped,
	// worktrees and claims kept); EvRunResumed: a `backlog run` took the
	// paused run up again. Detail says who.
	EvRunPaused  = "run_paused"
	EvRunResumed = "run_resumed"
	// EvChecks: the checks gate looked at the required checks
	// (backlog.checks) of a head: Issue (0 = the final PR), Commit (the
	// head), Outcome (a Checks* outcome), Detail (one line), URL (the
	// first red check's). Recorded when the outcome or the head changes,
	// not at every look; the first look at a head starts its timeout.
	EvChecks = "checks"
)

// Outcomes of EvInputWait.
const (
	InputWaiting = "waiting"
	InputGaveUp  = "gave-up" // backlog.inputWaitMinutes passed without an answer
)

// Sources of a rework round (EvRework.Outcome).
const (
	ReworkVerify   = "verify"     // backlog.verify failed; Feedback is its log's tail
	ReworkReview   = "review"     // the backlog.review agent's fail verdict
	ReworkPRReview = "pr-review"  // a review on the worker PR asked for changes
	ReworkPRThread = "pr-threads" // unresolved review threads on the worker PR
	ReworkChecks   = "checks"     // a required check (backlog.checks) is red on the worker's head
)

// Outcomes of EvVerify.
const (
	VerifyRunning   = "running"
	VerifyReviewing = "reviewing" // the backlog.review agent reads the merge
	VerifyPassed    = "passed"
	VerifyFailed    = "failed"
	// VerifyConflict: its merge conflicts with a candidate ahead of it
	// (Ahead, Files): it waits for that one's verdict, and is sent back
	// only if it lands.
	VerifyConflict = "conflict"
	// VerifyCancelled: a candidate ahead of it failed, conflicted or left
	// the train, so the commit it verified will never land; it is
	// verified again without it.
	VerifyCancelled = "cancelled"
	// VerifyInterrupted: the supervisor stopped (a kill, a crash) while
	// it ran; the next one verifies it again.
	VerifyInterrupted = "interrupted"
)

// Outcomes of EvWaitEnded.
const (
	WaitRecovered = "recovered"
	WaitGaveUp    = "gave-up" // outlasted backlog.transientRetryMinutes: the supervisor exited
)

// Outcomes of EvWaveBranch.
const (
	WaveCutting = "cutting" // recorded before the name is reserved and the branch pushed
	WaveCut     = "cut"     // the branch is on origin and this run's
)

// Worker outcomes (EvWorkerFinished.Outcome).
const (
	OutcomeReady      = "ready"
	OutcomeNeedsInput = "needs-input"
	OutcomeBlocked    = "blocked"
	OutcomeNoWork     = "no-work"
	OutcomeFailed     = "failed"
	OutcomeLost       = "lost"
	OutcomeStalled    = "stalled"
	OutcomeTimedOut   = "timed-out"
	OutcomeStopped    = "stopped"  // terminated by `backlog stop`: not a failure
	OutcomeConflict   = "conflict" // its merge conflicted: the worker is sent back
	OutcomeRework     = "rework"   // verify or a review asked for changes: the worker is sent back
	OutcomeAnswered   = "answered" // its question was answered: the worker is sent back
	// OutcomeUsageLimited: its executor's account was out (a usage
	// limit, credits): not a failure; the worker goes on in its worktree
	// once the limit resets, without spending the salvage.
	OutcomeUsageLimited = "usage-limited"
	// OutcomeNoProgress: it kept printing but its checkout had neither a
	// new commit nor a changed tree for backlog.noProgressMinutes; it was
	// stopped (salvaged once, then parked).
	OutcomeNoProgress = "no-progress"
	// OutcomeEnvironment: it failed because of the supervisor's
	// environment (origin unreachable, the disk full): relaunched without
	// spending the salvage.
	OutcomeEnvironment = "environment"
)

// Event is one line of a backlog run's events.jsonl. Fields are used as
// the kind says; the rest stay empty.
type Event struct {
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	Issue    int       `json:"issue,omitempty"`
	Run      *RunInfo  `json:"run,omitempty"`
	Plan     *Plan     `json:"plan,omitempty"`
	Intent   *Intent   `json:"intent,omitempty"`
	Title    string    `json:"title,omitempty"`
	Surface  *Surface  `json:"surface,omitempty"`
	Group    int       `json:"group,omitempty"` // first issue of the issue's group
	Attempt  int       `json:"attempt,omitempty"`
	Branch   string    `json:"branch,omitempty"`
	Worktree string    `json:"worktree,omitempty"`
	RunDir   string    `json:"runDir,omitempty"`
	Session  string    `json:"session,omitempty"`
	Salvage  bool      `json:"salvage,omitempty"`
	Outcome  string    `json:"outcome,omitempty"`
	ExitCode *int      `json:"exitCode,omitempty"`
	Detail   string    `json:"detail,omitempty"`
	Question string    `json:"question,omitempty"`
	Commits  int       `json:"commits,omitempty"`
	Files    []string  `json:"files,omitempty"`
	Commit   string    `json:"commit,omitempty"`
	Ref      string    `json:"ref,omitempty"`
	URL      string    `json:"url,omitempty"`
	Number   int       `json:"number,omitempty"`
	Feedback string    `json:"feedback,omitempty"` // rework: what the worker is asked to address (untrusted)
	Reviews  []int64   `json:"reviews,omitempty"`  // rework: the worker PR reviews it answers
	Threads  []string  `json:"threads,omitempty"`  // rework: the worker PR review threads it answers (node ids)
	Cause    string    `json:"cause,omitempty"`    // a wait's transient cause, in words
	// Tip is the wave branch's tip on origin after this event's push
	// (the cut, a merge, a base merge, the issue files closed): what
	// origin must hold until the run's next push (Run.WaveTip).
	Tip      string `json:"tip,omitempty"`
	Executor string `json:"executor,omitempty"` // usage_limit: the executor whose account is out
	// Calls is how many API calls the supervisor made since its
	// previous event (any kind), so their sum survives restarts.
	Calls int64 `json:"calls,omitempty"`
	// RateWaits is how many GitHub rate limits the supervisor waited
	// out since its previous event.
	RateWaits int64 `json:"rateLimitWaits,omitempty"`

	// Labels are an issue event's issue labels as it entered the run
	// (the outcome ledger groups by them).
	Labels []string `json:"labels,omitempty"`

	// Notice is a notification event's notice and sink.
	Notice *NoticeRecord `json:"notice,omitempty"`

	// Outside is the files of a merged or parked worker's change outside
	// its issue's declared surface, recorded with the merge or the park
	// itself so the final PR and status still know them after kill -9.
	Outside []string `json:"outside,omitempty"`

	// Ahead are the candidates of the merge train whose merges a verify's
	// commit is built on, in order (EvVerify; empty: on the wave tip).
	Ahead []int `json:"ahead,omitempty"`

	// Hosts are the hosts (host:port) a sandbox's proxy refused
	// (EvBlocked).
	Hosts []string `json:"hosts,omitempty"`

	// Proc is the process an EvProcess event records.
	Proc *ProcID `json:"proc,omitempty"`

	// Answer and By are an answered event's answer and who gave it
	// (both untrusted text); Until is when an input wait ends.
	Answer string     `json:"answer,omitempty"`
	By     string     `json:"by,omitempty"`
	Until  *time.Time `json:"until,omitempty"`
}

// RunInfo describes a backlog run; recorded once, when it starts.
type RunInfo struct {
	ID         string `json:"id"`
	Lane       string `json:"lane"`
	Source     string `json:"source"` // github | local
	Repo       string `json:"repo"`
	WaveBranch string `json:"waveBranch"`
	Base       string `json:"base"`
	Default    string `json:"defaultBranch"`
	Bounded    []int  `json:"bounded"` // --issues; empty = unbounded
	Width      int    `json:"width"`
	MaxIssues  int    `json:"maxIssues"`
	MaxMinutes int    `json:"maxMinutes"`
	// VerifyParallel is how many merge candidates are verified at once
	// (backlog.verifyParallel as the run started; 0 in older runs).
	VerifyParallel int       `json:"verifyParallel,omitempty"`
	Host           string    `json:"host"`
	Pid            int       `json:"pid"`
	StartedAt      time.Time `json:"startedAt"`
}

// Intent is an external write recorded before it is made. Its Marker is
// carried by the write itself (a hidden comment marker, a PR head, a ref),
// so after a crash the write can be looked for before it is made again.
type Intent struct {
	ID     string `json:"id"` // unique in the run, e.g. "comment-claim-12"
	Op     string `json:"op"` // one of the Op* constants
	Issue  int    `json:"issue,omitempty"`
	Marker string `json:"marker,omitempty"`
	Label  string `json:"label,omitempty"`
	Body   string `json:"body,omitempty"`
	Title  string `json:"title,omitempty"`
	Head   string `json:"head,omitempty"` // branch pushed, or a PR's head
	Base   string `json:"base,omitempty"` // a PR's base
	SHA    string `json:"sha,omitempty"`  // release/renew: the claim commit expected on origin
	PR     int    `json:"pr,omitempty"`   // close-pr: the pull request
}

// Intent operations.
const (
	OpLabel   = "label"
	OpUnlabel = "unlabel"
	OpComment = "comment"
	OpPR      = "pr"
	OpPush    = "push"
	OpClose   = "close"
	OpRelease = "release"
	OpClosePR = "close-pr"
)

// Notification events (package notify): a delivery intent before a sink
// is told about an event of the run, and its outcome after, so a
// supervisor restarted after kill -9 tells nobody twice. The reducer
// ignores them.
const (
	EvNotifyIntent = "notify_intent" // Notice (Issue stays 0; the notice says which)
	EvNotified     = "notified"      // Notice, Outcome (delivered|failed)
)

// Outcomes of EvNotified.
const (
	NotifyDelivered = "delivered"
	NotifyFailed    = "failed"
)

// NoticeRecord is the notice and sink of a notification event.
type NoticeRecord struct {
	ID    string `json:"id"`    // the notice's stable id
	Event string `json:"event"` // question-asked, issue-merged, ...
	Sink  string `json:"sink"`
	Tries int    `json:"tries,omitempty"`
	Error string `json:"error,omitempty"`
}
