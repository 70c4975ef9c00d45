package launcher

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Lane results of Autonomous.
const (
	LaneCompleted  = "completed"
	LaneNeedsHuman = "needs-human"
	LaneFailed     = "failed"
)

// AutoResult is where Autonomous left the lane (`autonomous --json`).
type AutoResult struct {
	Lane   string     `json:"lane"`
	Result string     `json:"result"` // completed | needs-human | failed
	Waves  []AutoWave `json:"waves"`
	// StoppedAt is the wave it stopped at (null when every wave completed).
	StoppedAt *int   `json:"stoppedAt"`
	Why       string `json:"why"`
	ExitCode  int    `json:"exitCode"`
}

// AutoWave is one wave Autonomous ran: its submitted runs, one per
// attempt, and how the last one ended.
type AutoWave struct {
	Wave     int      `json:"wave"`
	RunIDs   []string `json:"runIds"`
	ExitCode int      `json:"exitCode"`
	State    string   `json:"state"`
}

// WaveSubmitter runs one wave as a submitted run: the command's submit
// queue and the watcher that supervises the launch live above the loop.
type WaveSubmitter interface {
	// Submit queues a launch of wave n alone; queued says it waits behind
	// the lane's active run.
	Submit(ctx context.Context, n int) (runID string, queued bool, err error)
	// Wait returns how the run ended once it is terminal; on ctx's end it
	// returns ctx's error.
	Wait(ctx context.Context, runID string) (RunEnd, error)
}

// RunEnd is how a submitted run ended.
type RunEnd struct {
	ExitCode int
	State    string
	Stopped  bool // `stop` ended it: a person chose to, so no new attempt
}

// AutonomousOptions are the lane whose remaining waves Autonomous runs.
type AutonomousOptions struct {
	Layout      lanes.Layout
	Lane        *config.Lane
	Waves       []*wave.Wave // all waves of the lane, parsed and validated
	MaxAttempts int          // submissions per failing wave, at least 1
	Progress    io.Writer    // one line per attempt submitted and ended
}

// Autonomous runs the lane's waves that are not completed, lowest first,
// each a submitted run of that one wave, up to MaxAttempts per wave. It
// stops for a person before each wave, and after a wave that exits 43,
// while a question waits for an answer or a blocking record is open. The
// error is for what kept it from deciding (an unreadable ledger, a run
// that could not be submitted or waited for); the result says the rest.
func Autonomous(ctx context.Context, opt AutonomousOptions, sub WaveSubmitter) (AutoResult, error) {
	if opt.Progress == nil {
		opt.Progress = io.Discard
	}
	res := AutoResult{Lane: opt.Lane.Name, Waves: []AutoWave{}}
	for {
		sel, err := New(Options{Layout: opt.Layout, Lane: opt.Lane, Waves: opt.Waves, AutoNext: true, EndWave: -1}, nil).Selected()
		if err != nil {
			return res, err
		}
		if len(sel) == 0 {
			res.Result = LaneCompleted
			return res, nil
		}
		n := sel[0].Number
		if done := slices.ContainsFunc(res.Waves, func(w AutoWave) bool { return w.Wave == n && w.ExitCode == 0 }); done {
			return res, fmt.Errorf("autonomous: wave %d passed but is not recorded completed in %s; not running it again", n, opt.Layout.LedgerPath())
		}
		if why := needsPerson(opt.Layout, n); why != "" {
			res.stop(LaneNeedsHuman, n, why, exitcode.NeedsHuman)
			return res, nil
		}
		aw, err := autoWave(ctx, opt, sub, n)
		res.Waves = append(res.Waves, aw)
		if err != nil {
			return res, err
		}
		if aw.ExitCode == 0 {
			continue
		}
		if why := needsPerson(opt.Layout, n); why != "" || aw.ExitCode == exitcode.NeedsHuman {
			if why == "" {
				why = fmt.Sprintf("wave %d stopped with no safe retry (exit 43); `status` says why", n)
			}
			res.stop(LaneNeedsHuman, n, why, exitcode.NeedsHuman)
			return res, nil
		}
		res.stop(LaneFailed, n, fmt.Sprintf("wave %d failed after %d attempt(s) (exit %d); `status -w %d` shows the failures", n, len(aw.RunIDs), aw.ExitCode, n), aw.ExitCode)
		return res, nil
	}
}

func (r *AutoResult) stop(result string, n int, why string, code int) {
	r.Result, r.StoppedAt, r.Why, r.ExitCode = result, &n, why, code
}

// autoWave submits wave n up to MaxAttempts times, waiting for each run.
func autoWave(ctx context.Context, opt AutonomousOptions, sub WaveSubmitter, n int) (AutoWave, error) {
	aw := AutoWave{Wave: n, RunIDs: []string{}}
	attempts := opt.MaxAttempts
	for k := 1; k <= attempts; k++ {
		id, queued, err := sub.Submit(ctx, n)
		if err != nil {
			return aw, err
		}
		aw.RunIDs = append(aw.RunIDs, id)
		note := ""
		if queued {
			note = " (queued behind the lane's active run)"
		}
		fmt.Fprintf(opt.Progress, "autonomous: wave %d attempt %d/%d: run %s%s\n", n, k, attempts, id, note)
		end, err := sub.Wait(ctx, id)
		if err != nil && ctx.Err() != nil {
			return aw, fmt.Errorf("autonomous interrupted at wave %d; its run %s goes on (wait --run-id %s, or stop): %w", n, id, id, err)
		}
		if err != nil {
			return aw, err
		}
		aw.ExitCode, aw.State = end.ExitCode, end.State
		fmt.Fprintf(opt.Progress, "autonomous: wave %d run %s %s (exit %d)\n", n, id, end.State, aw.ExitCode)
		if aw.ExitCode == 0 || aw.ExitCode == exitcode.NeedsHuman || end.Stopped || needsPerson(opt.Layout, n) != "" {
			break
		}
	}
	return aw, nil
}

// needsPerson says what holds wave n for a person: a blocking question
// of this wave or an earlier one still waiting, or an open blocking
// record of the wave. A later wave's question waits for its own wave.
func needsPerson(layout lanes.Layout, n int) string {
	esc := termtext.Escape
	if qs, _, err := questions.List(layout); err == nil {
		var ids []string
		for _, q := range questions.PendingOf(qs) {
			if q.Blocking && q.Wave != nil && *q.Wave <= n {
				ids = append(ids, fmt.Sprintf("%s (%s: %q)", esc(q.ID), esc(q.Where()), esc(q.Text)))
			}
		}
		if len(ids) > 0 {
			return fmt.Sprintf("pending question(s) for a person: %s; answer with `coord act answer-human ID --response TEXT`", strings.Join(ids, ", "))
		}
	}
	recs, _, _ := coord.Read(layout.CoordinationPath(n))
	var ids []string
	for _, r := range coord.Open(recs) {
		ids = append(ids, fmt.Sprintf("%s (%s by %s: \"%s\")", esc(r.ID), esc(r.Kind), esc(r.AgentID), esc(r.Summary))) // %q would escape esc's backslashes again
	}
	if len(ids) > 0 {
		return fmt.Sprintf("open blocking record(s) in wave %d: %s; resolve with `coord act resolve ID` (or dismiss)", n, strings.Join(ids, ", "))
	}
	return ""
}
