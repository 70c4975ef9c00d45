package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// attachIssue attaches to the tmux session (or the pod) of the backlog
// worker on issue n, looked up in the newest run that took it; with no
// live session it shows the worker's log (its tail, and new output while
// it runs).
func attachIssue(ctx context.Context, e *laneEnv, n int, stdout, stderr io.Writer) error {
	is, err := latestIssueRun(e.layout.StateDir, n)
	if err != nil {
		return err
	}
	if rec := podRecord(is); rec != nil {
		return attachIssuePod(ctx, e, is, rec, stdout, stderr)
	}
	client := tmuxadapter.New(e.layout.Socket())
	if is.Session != "" {
		ok, err := client.HasSession(ctx, is.Session)
		if err != nil {
			return fmt.Errorf("issue #%d: session %s: %w", n, is.Session, err)
		}
		if ok {
			return attachSession(client, is.Session)
		}
	}
	if is.RunDir == "" {
		return fmt.Errorf("issue #%d (%s): no worker has started yet, so there is no session or log", n, is.State)
	}
	log := filepath.Join(is.RunDir, lanes.LogFile)
	fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("the worker on #%d (%s) has no tmux session on socket %s; showing its log %s",
		n, is.State, e.layout.Socket(), log)))
	lines, err := dashboard.LogTail(log, attachTail)
	if err != nil {
		return fmt.Errorf("issue #%d: %w", n, err)
	}
	if len(lines) > 0 {
		fmt.Fprintln(stdout, strings.Join(lines, "\n"))
	}
	running := func() bool {
		st := runtime.ObserveFiles(is.RunDir, time.Now()).Verdict.State
		return st == runtime.StateRunning || st == runtime.StateLaunching
	}
	if !running() {
		return nil
	}
	fmt.Fprintln(stderr, "following new output until the worker ends (Ctrl-C to stop)")
	return dashboard.FollowLog(ctx, log, stdout, func() bool { return !running() })
}

// latestIssueRun is issue n in the newest backlog run of the lane that took it.
func latestIssueRun(laneStateDir string, n int) (*backlog.IssueRun, error) {
	dirs, err := runlog.List(laneStateDir)
	if err != nil {
		return nil, err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		r, _, err := runlog.Read(dirs[i])
		if err != nil {
			return nil, err
		}
		if is, ok := r.Issues[n]; ok {
			return is, nil
		}
	}
	return nil, usageError{fmt.Errorf("attach: no backlog run of this lane took issue #%d", n)}
}
