package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// LauncherSession is the tmux session (on the lane socket) a submitted
// run's watcher and launcher run in: `tmux attach` shows its console.
const launcherSession = "launcher"

// submitted is a lane's submitted-run store and its two locks: queue
// serialises submit against the watcher's pick of the next run, and
// watcher is held by the live watcher for its whole life.
type submitted struct {
	store          runStore
	queue, watcher string
}

func submittedOf(e *laneEnv) submitted {
	dir := filepath.Join(e.layout.StateDir, "submitted")
	return submitted{store: runStore{dir: dir}, queue: filepath.Join(dir, "queue.lock"), watcher: filepath.Join(dir, "watcher.lock")}
}

// lockQueue takes the queue lock, waiting at most until ctx ends.
func (s submitted) lockQueue(ctx context.Context) (unlock func(), err error) {
	if err := jsonfile.MkdirAll(s.store.dir); err != nil {
		return nil, fmt.Errorf("submitted runs %s: %w", s.store.dir, err)
	}
	fl := flock.New(s.queue)
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("submitted-run queue lock %s: %w", s.queue, err)
	}
	return func() { _ = fl.Unlock() }, nil
}

// watcherAlive reports whether a watcher holds its lock.
func (s submitted) watcherAlive() bool {
	fl := flock.New(s.watcher)
	ok, err := fl.TryLock()
	if err != nil {
		return false
	}
	if ok {
		_ = fl.Unlock()
		return false
	}
	return true
}

// submitOnly are submit's own flags, not the launcher's.
var submitOnly = map[string]bool{"json": true, "no-queue": true, "repo-root": true, "lane": true, "help": true}

func newSubmitCmd(g *globals) *cobra.Command {
	f := &launchFlags{}
	var resumeWave int
	var noQueue bool
	c := &cobra.Command{
		Use:   "submit",
		Short: "Start a launch (or, with --wave, a resume) detached and return its run id at once",
		Long: `Queue a launch with the given launch flags (or a resume, when --wave is
given, with the resume flags) and return at once with its run id, lane and
state file. The launcher runs detached in tmux session "launcher" on the
lane's socket (tmux -L <socket> attach -t launcher shows its console) under
a small watcher that survives this command's exit: the watcher restarts a
launcher killed by a signal once (the restart adopts the live agents) and
fails the run when it dies again. A submit while a run is active on the
lane is queued (one at a time per lane, first in first out) unless
--no-queue, which refuses with exit 32. Follow a run with wait and status
--run-id.`,
		Example: `  wave-orchestrator submit --json
  wave-orchestrator submit --start-wave 1 --end-wave 2 --no-dashboard
  wave-orchestrator submit --wave 0 --phase cont-qa-closure   # a resume
  id=$(wave-orchestrator submit --json | jq -r .runId) && wave-orchestrator wait --run-id "$id"`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runSubmit(c, g, f, resumeWave >= 0, noQueue)
		},
	}
	f.register(c, false)
	fl := c.Flags()
	waveVar(c, &resumeWave, "wave", "w", -1, "resume wave `N` instead of launching (then --phase, --agent, --rerun-proven apply)")
	fl.StringVarP(&f.phase, "phase", "p", "", "with --wave: the phase to re-run")
	fl.StringArrayVarP(&f.agents, "agent", "a", nil, "with --wave: re-run agent `ID` (repeatable)")
	fl.BoolVar(&f.rerunProven, "rerun-proven", false, "with --wave: reuse no proven agent")
	fl.BoolVar(&noQueue, "no-queue", false, "refuse (exit 32) instead of queueing when a run is active on the lane")
	fl.BoolVar(&g.json, "json", false, "print {runId, lane, statePath} as JSON")
	return c
}

// forwardedArgs rebuilds the launcher's flags from those given to submit.
func forwardedArgs(fs *pflag.FlagSet) []string {
	var out []string
	fs.Visit(func(fl *pflag.Flag) {
		if submitOnly[fl.Name] {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+fl.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+fl.Name+"="+fl.Value.String())
	})
	return out
}

func runSubmit(c *cobra.Command, g *globals, f *launchFlags, resume, noQueue bool) error {
	if !resume && (f.phase != "" || len(f.agents) > 0 || f.rerunProven) {
		return usageError{fmt.Errorf("--phase, --agent and --rerun-proven need --wave (a resume)")}
	}
	if resume {
		for _, name := range []string{"start-wave", "end-wave", "auto-next", "dry-run", "manifest-out"} {
			if c.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s is a launch flag; with --wave the run is a resume", name)}
			}
		}
	}
	if err := f.ref.check(c); err != nil {
		return err
	}
	f.ref.announce(c, c.ErrOrStderr())
	e, err := openLane(g)
	if err != nil {
		return err
	}
	if err := checkProject(f.ref.project, e); err != nil {
		return err
	}
	bin, err := self()
	if err != nil {
		return err
	}
	command := "launch"
	if resume {
		command = "resume"
	}
	rec, busy, err := enqueueRun(c.Context(), e, bin, command, forwardedArgs(c.Flags()), noQueue)
	if err != nil {
		return err
	}
	return printSubmitted(c.OutOrStdout(), g.json, rec, submittedOf(e).store.path(rec.RunID), busy)
}

// enqueueRun records a queued run of command with the launcher's args and
// makes sure the lane's watcher runs; busy says it waits behind another
// run. With noQueue a busy lane is refused (exit 32), recording nothing.
func enqueueRun(ctx context.Context, e *laneEnv, bin, command string, args []string, noQueue bool) (*submittedRun, bool, error) {
	s := submittedOf(e)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	unlock, err := s.lockQueue(ctx)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	// A queued record whose watcher is still starting counts: it runs first.
	busy := s.watcherAlive() || lanes.Held(e.layout.LockPath()) || s.store.active() != nil
	if busy && noQueue {
		return nil, busy, withCode(exitcode.LaneBusy, fmt.Errorf("lane %s has an active run (a submitted run or a launcher); --no-queue: not queued", e.lane.Name))
	}
	now := time.Now().UTC()
	rec := &submittedRun{SchemaVersion: 1, RunID: newRunID(now), Lane: e.lane.Name, State: runQueued,
		Command: command, Args: args, SubmittedAt: now}
	if err := s.store.write(rec); err != nil {
		return nil, busy, err
	}
	if !s.watcherAlive() {
		if err := startWatcher(ctx, e, bin); err != nil {
			rec.finish(exitcode.Failed, "watcher not started: "+err.Error())
			_ = s.store.write(rec)
			return nil, busy, err
		}
	}
	return rec, busy, nil
}

// startWatcher runs `submit-watch` in the lane's launcher session,
// replacing a dead pane kept there by remain-on-exit.
func startWatcher(ctx context.Context, e *laneEnv, bin string) error {
	tm := tmuxadapter.New(e.layout.Socket())
	spec := tmuxadapter.SessionSpec{Name: launcherSession, Window: launcherSession, Cwd: e.lane.RepoRoot,
		Argv:  []string{bin, "--repo-root", e.lane.RepoRoot, "--lane", e.lane.Name, "submit-watch"},
		Width: 200, Height: 50, Options: map[string]string{"@wave_run": launcherSession, "@wave_lane": e.lane.Name}}
	if ok, err := tm.HasSession(ctx, launcherSession); err == nil && ok {
		if err := tm.RespawnPane(ctx, spec); err == nil || !tmuxadapter.IsGone(err) {
			return err
		}
	}
	return tm.NewSession(ctx, spec)
}

func printSubmitted(w io.Writer, asJSON bool, r *submittedRun, path string, queued bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"runId": r.RunID, "lane": r.Lane, "statePath": path, "queued": queued})
	}
	fmt.Fprintf(w, "run_id=%s lane=%s state_path=%s\n", r.RunID, r.Lane, shellQuote(path))
	if queued {
		fmt.Fprintf(w, "queued: a run is active on lane %s; this one starts when the runs before it end\n", r.Lane)
	}
	return nil
}

// stopQueued marks the lane's queued submitted runs stopped (by `stop`),
// under the queue lock so the watcher cannot start one meanwhile.
func stopQueued(ctx context.Context, s submitted, out io.Writer) {
	if _, err := os.Stat(s.store.dir); err != nil {
		return
	}
	unlock, err := s.lockQueue(ctx)
	if err != nil {
		fmt.Fprintln(out, "queued runs not stopped:", err)
		return
	}
	defer unlock()
	recs, _ := s.store.list()
	for _, r := range recs {
		if r.State == runQueued {
			r.finish(exitcode.Failed, "stopped on request by `stop` before it started")
			if err := s.store.write(r); err == nil {
				fmt.Fprintf(out, "queued run %s stopped\n", r.RunID)
			}
		}
	}
}
