package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/mcpserver"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/submitted"
)

// mcpTailBytes bounds how much of a log output_tail reads: its 500 lines
// at most, never a whole multi-megabyte log into a model's context.
const mcpTailBytes = 64 << 10

// open resolves the lane as a command would: the server's repository,
// and the tool's lane, else the server's.
func (l *mcpLane) open(lane string) (*laneEnv, error) {
	if lane == "" {
		lane = l.lane
	}
	return openLane(&globals{repoRoot: l.root, lane: lane})
}

// Tail reads the end of a wave agent's latest run log (its path from the
// lane's state, as status shows it) or of a backlog worker's (from the
// run's records), only ever inside the lane's state directory.
func (l *mcpLane) Tail(ctx context.Context, q mcpserver.TailQuery) (mcpserver.Tail, error) {
	e, err := l.open(q.Lane)
	if err != nil {
		return mcpserver.Tail{}, err
	}
	var path, source string
	if q.Issue != nil {
		path, source, err = workerLog(e, *q.Issue, q.Run)
	} else {
		path, source, err = agentLog(ctx, e, *q.Wave, q.Agent)
	}
	if err != nil {
		return mcpserver.Tail{}, err
	}
	if !inside(e.layout.StateDir, path) {
		return mcpserver.Tail{}, fmt.Errorf("%s: its log %s is outside the lane's state directory %s; not read", source, path, e.layout.StateDir)
	}
	text, err := runtime.ReadLogTail(path, mcpTailBytes)
	if err != nil {
		return mcpserver.Tail{Source: source + ", " + path}, nil // not written yet
	}
	return mcpserver.Tail{Text: text, Source: source + ", " + path}, nil
}

func agentLog(ctx context.Context, e *laneEnv, wave int, agent string) (path, source string, err error) {
	l, err := launcher.Status(ctx, e.layout)
	if err != nil {
		return "", "", err
	}
	if err := e.knownWave(l, wave); err != nil {
		return "", "", err
	}
	var ids []string
	for _, w := range l.Waves {
		if w.Wave != wave {
			continue
		}
		for _, a := range w.Agents {
			if a.ID != agent {
				ids = append(ids, a.ID)
				continue
			}
			if a.LogPath == "" {
				return "", "", fmt.Errorf("wave %d agent %s has not started yet (state %s): no output to read", wave, agent, a.State)
			}
			return a.LogPath, fmt.Sprintf("wave %d agent %s (attempt %d, %s)", wave, agent, a.Attempt, a.State), nil
		}
	}
	if len(ids) == 0 {
		return "", "", fmt.Errorf("wave %d of lane %s has no agent run yet; the status tool shows its agents once it started", wave, e.lane.Name)
	}
	return "", "", fmt.Errorf("wave %d has no agent %q; its agents: %s", wave, agent, strings.Join(ids, ", "))
}

func workerLog(e *laneEnv, issue int, run string) (path, source string, err error) {
	dir, err := runlog.Find(e.layout.StateDir, run)
	if err != nil {
		return "", "", err
	}
	r, _, err := runlog.Read(dir)
	if err != nil {
		return "", "", err
	}
	is, ok := r.Issues[issue]
	if !ok {
		var have []int
		for n := range r.Issues {
			have = append(have, n)
		}
		slices.Sort(have)
		return "", "", fmt.Errorf("backlog run %s has no issue #%d; its issues: %v", r.Info.ID, issue, have)
	}
	if is.RunDir == "" {
		return "", "", fmt.Errorf("backlog run %s: #%d has no worker yet (state %s): no output to read", r.Info.ID, issue, is.State)
	}
	return filepath.Join(is.RunDir, lanes.LogFile), fmt.Sprintf("backlog run %s issue #%d's worker (%s)", r.Info.ID, issue, is.State), nil
}

// inside reports whether path lies within dir.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// SubmitBacklog queues `backlog run` with args as a submitted run, the way
// submit queues a launch: the same queue, watcher and records, so wait,
// run_state and stop treat it alike. backlog run's own checks come first
// (checkBacklogRun), so a wrong issue number is an error now rather than
// the run's why later.
func (l *mcpLane) SubmitBacklog(ctx context.Context, lane string, args []string, noQueue bool) mcpserver.Outcome {
	fail := func(err error) mcpserver.Outcome {
		code, msg := exitOf(err)
		return mcpserver.Outcome{Code: code, Err: msg}
	}
	e, err := l.open(lane)
	if err != nil {
		return fail(err)
	}
	plan, o := l.checkBacklogRun(ctx, e, args)
	if o.Code != exitcode.OK {
		return o
	}
	bin, err := self()
	if err != nil {
		return fail(err)
	}
	rec, busy, err := enqueueRun(ctx, e, bin, "backlog", append([]string{"run"}, args...), noQueue)
	if err != nil {
		return fail(err)
	}
	var out bytes.Buffer
	if err := printSubmitted(&out, true, rec, submitted.Open(e.layout).Path(rec.RunID), busy); err != nil {
		return fail(err)
	}
	if plan != "" {
		out.WriteString("\nThe plan it starts from (backlog plan):\n" + plan)
	}
	return mcpserver.Outcome{Stdout: out.String()}
}

// checkBacklogRun is what `backlog run` checks before it claims anything,
// by the same code: a selection is planned (changing nothing; the plan is
// returned to show), no selection needs an open run to resume; then the
// tools and the workers' executor, and that every named issue exists.
func (l *mcpLane) checkBacklogRun(ctx context.Context, e *laneEnv, args []string) (string, mcpserver.Outcome) {
	fail := func(err error) (string, mcpserver.Outcome) {
		code, msg := exitOf(err)
		return "", mcpserver.Outcome{Code: code, Err: msg}
	}
	var plan string
	if sel := selectionArgs(args); argValue(args, "--issues=") != "" || slices.Contains(args, "--unbounded") {
		o := l.Command(ctx, append([]string{"--lane=" + e.lane.Name, "backlog", "plan", "--json"}, sel...))
		if o.Code != exitcode.OK {
			return "", o
		}
		plan = o.Stdout
	} else if open, err := runlog.OpenDir(e.layout.StateDir); err != nil {
		return fail(err)
	} else if open == "" {
		return fail(usageError{errors.New("no open backlog run to resume; say which issues: issues [12, 15, 18] or unbounded")})
	}
	if err := preflightBacklog(ctx, e, argValue(args, "--executor=")); err != nil {
		return fail(err)
	}
	if nums := issueNumbers(argValue(args, "--issues=")); len(nums) > 0 {
		var stderr bytes.Buffer
		be, err := openBacklogLane(ctx, e, &stderr)
		if err == nil {
			err = checkIssuesExist(ctx, be, nums)
		}
		if err != nil {
			return fail(err)
		}
	}
	return plan, mcpserver.Outcome{}
}

// selectionArgs are the flags of a backlog run that backlog plan takes.
func selectionArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "--issues=") || a == "--unbounded" || strings.HasPrefix(a, "--width=") || strings.HasPrefix(a, "--label=") {
			out = append(out, a)
		}
	}
	return out
}

// argValue is the value of the flag given as prefix ("--issues=") in
// args, "" when absent.
func argValue(args []string, prefix string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return v
		}
	}
	return ""
}

// issueNumbers parses the comma-separated numbers mcpserver wrote.
func issueNumbers(list string) []int {
	var out []int
	for _, p := range strings.Split(list, ",") {
		if n, err := strconv.Atoi(p); err == nil {
			out = append(out, n)
		}
	}
	return out
}
