package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// refFlags are the flags of the reference's `launch` this port maps onto
// its own features, or accepts and ignores (saying so), so the
// reference's command lines keep working.
type refFlags struct {
	project       string
	reconcile     bool
	stateFile     string
	resumeControl bool
}

// ignoredFlag is a reference flag with no effect here, and why.
type ignoredFlag struct {
	name  string
	value bool // takes a value (else a switch)
	why   string
}

var ignoredFlags = []ignoredFlag{
	{"no-telemetry", false, "this port sends no telemetry"},
	{"no-context7", false, "this port fetches no Context7 docs at launch; wave files' context7 declarations are only validated"},
	{"terminal-surface", true, "agents always run in tmux sessions on the lane socket"},
	{"cleanup-sessions", false, "agent sessions are cleaned after each wave unless --keep-sessions"},
	{"keep-terminals", false, "use --keep-sessions to keep agent sessions"},
	{"orchestrator-id", true, "one launcher per lane, held by the lane lock; no orchestrator ids"},
	{"orchestrator-board", true, "no orchestrator board; the lane's status and dashboard show its state"},
	{"no-orchestrator-board", false, "no orchestrator board is written"},
	{"coordination-note", true, "notes go into the coordination log with `coord post`"},
}

func (f *refFlags) register(c *cobra.Command, resume bool) {
	fl := c.Flags()
	fl.String("codex-sandbox", "", "codex --sandbox mode: read-only|workspace-write|danger-full-access")
	bindConfig(c, "codex-sandbox", "executors.codex.sandbox")
	fl.Int("agent-rate-limit-retries", 0, "times an agent run is restarted after its executor reports a rate limit (default 2)")
	bindConfig(c, "agent-rate-limit-retries", "runtime.rateLimitRetries")
	fl.Int("agent-rate-limit-base-delay-seconds", 0, "wait before the first rate-limit restart, doubled each time (default 20)")
	bindConfig(c, "agent-rate-limit-base-delay-seconds", "runtime.rateLimitBaseDelaySeconds")
	fl.Int("agent-rate-limit-max-delay-seconds", 0, "longest wait between rate-limit restarts (default 180)")
	bindConfig(c, "agent-rate-limit-max-delay-seconds", "runtime.rateLimitMaxDelaySeconds")
	fl.StringVar(&f.project, "project", "", "project `P`: only this workspace's own project is supported")
	fl.BoolVar(&f.reconcile, "reconcile-status", false, "rebuild the lane's state from its records, kill dead sessions when no launcher runs, print it and exit 0; takes no lock")
	fl.StringVar(&f.stateFile, "state-file", "", "also write this run's state (runId, state, pid, exitCode, why) as JSON to `PATH`")
	if resume {
		fl.BoolVar(&f.resumeControl, "resume-control-state", false, "follow the recorded resume plan (the default without --phase/--agent/--rerun-proven; not with them)")
	} else {
		fl.BoolVar(&f.resumeControl, "resume-control-state", false, "continue from the recorded state: start at the first wave not completed (as --auto-next), adopting live agents")
	}
	for _, x := range ignoredFlags {
		usage := "accepted and ignored: " + x.why
		if x.value {
			fl.String(x.name, "", usage)
		} else {
			fl.Bool(x.name, false, usage)
		}
	}
	// The reference accepts the board flag bare or with a path.
	fl.Lookup("orchestrator-board").NoOptDefVal = "default"
}

// check refuses values this port cannot honour (before anything runs).
func (f *refFlags) check(c *cobra.Command) error {
	if fl := c.Flags().Lookup("terminal-surface"); fl.Changed && fl.Value.String() != "tmux" && fl.Value.String() != "none" {
		return usageError{fmt.Errorf("--terminal-surface %q: want tmux or none", fl.Value.String())}
	}
	return nil
}

// announce prints one `ignored:` line per ignored flag given.
func (f *refFlags) announce(c *cobra.Command, w io.Writer) {
	for _, x := range ignoredFlags {
		if c.Flags().Changed(x.name) {
			fmt.Fprintf(w, "ignored: --%s (%s)\n", x.name, x.why)
		}
	}
}

// checkProject accepts --project naming this workspace's project: its
// configured projectName (or lane project), its tmux token, or the repo
// directory's name, which is the default project.
func checkProject(p string, e *laneEnv) error {
	if p == "" {
		return nil
	}
	names := []string{e.lane.Project, e.cfg.ProjectName, filepath.Base(e.lane.RepoRoot), e.layout.Project, "default"}
	for _, n := range names {
		if n != "" && p == n {
			return nil
		}
	}
	return usageError{fmt.Errorf("--project %q: multi-project workspaces are unsupported; this port runs the workspace's one project (%s) — drop --project or pass that", p, e.layout.Project)}
}

// reconcileStatus rebuilds the lane's state from its records and prints
// it; with no launcher on the lane, sessions whose process has exited
// (kept by remain-on-exit) are killed. The lane lock is a kernel lock
// that dies with its holder, so there is no stale lock to remove; the
// line says whose it was.
func reconcileStatus(ctx context.Context, e *laneEnv, out io.Writer) error {
	live := lanes.Held(e.layout.LockPath())
	if info, err := lanes.ReadLockInfo(e.layout.LockPath()); err == nil && !live {
		fmt.Fprintf(out, "reconcile: lane %s lock is free (last holder pid %d is gone; nothing to remove)\n", e.lane.Name, info.Pid)
	} else if live {
		fmt.Fprintf(out, "reconcile: lane %s has a running launcher; its sessions are left alone\n", e.lane.Name)
	}
	if !live {
		killed, failed := killDeadSessions(ctx, tmuxadapter.New(e.layout.Socket()))
		for _, s := range killed {
			fmt.Fprintf(out, "reconcile: killed session %s (its process had exited)\n", s)
		}
		for _, msg := range failed {
			fmt.Fprintf(out, "reconcile: %s\n", msg)
		}
	}
	l, err := launcher.Status(ctx, e.layout)
	if err != nil {
		return fmt.Errorf("reconcile lane %s: %w", e.lane.Name, err)
	}
	o := dashboard.Options{Width: outWidth(out), Color: outColor(out), Now: time.Now(), Wave: -1, Selected: -1}
	_, err = fmt.Fprint(out, dashboard.RenderStatus(l, o))
	return err
}

// killDeadSessions kills the socket's sessions whose pane process exited,
// except the dashboard (meant to outlive its launch).
func killDeadSessions(ctx context.Context, tm *tmuxadapter.Client) (killed, failed []string) {
	ss, err := tm.ListSessions(ctx)
	if err != nil {
		if tmuxadapter.IsGone(err) || errors.Is(err, tmuxadapter.ErrBinaryMissing) {
			return nil, nil
		}
		return nil, []string{fmt.Sprintf("list sessions on tmux socket %s: %v", tm.Socket(), err)}
	}
	for _, s := range ss {
		if s.Name == lanes.DashboardSession {
			continue
		}
		p, err := tm.PaneInfo(ctx, s.Name)
		if err != nil || !p.Dead {
			continue
		}
		if err := tm.KillSession(ctx, s.Name); err != nil && !tmuxadapter.IsGone(err) {
			failed = append(failed, fmt.Sprintf("kill session %s: %v", s.Name, err))
			continue
		}
		killed = append(killed, s.Name)
	}
	return killed, failed
}

// resumeControlConflict names the resume flag --resume-control-state
// contradicts, if any.
func resumeControlConflict(f *launchFlags) string {
	switch {
	case !f.ref.resumeControl:
		return ""
	case f.phase != "":
		return "--phase"
	case len(f.agents) > 0:
		return "--agent"
	case f.rerunProven:
		return "--rerun-proven"
	}
	return ""
}
