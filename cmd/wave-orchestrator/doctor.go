package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// finding is one doctor line.
type finding struct {
	level string // ok|warn|error
	msg   string
}

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check tmux, git, executors, config and every wave file",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fs := doctor(c.Context(), g)
			return printFindings(c.OutOrStdout(), fs)
		},
	}
}

func printFindings(w io.Writer, fs []finding) error {
	errs := 0
	for _, f := range fs {
		fmt.Fprintf(w, "%-5s %s\n", f.level, termtext.EscapeLines(f.msg))
		if f.level == "error" {
			errs++
		}
	}
	if errs > 0 {
		return withCode(exitFailed, fmt.Errorf("doctor: %d error(s)", errs))
	}
	return nil
}

var tmuxVersionRe = regexp.MustCompile(`(\d+)\.(\d+)`)

// tmuxAtLeast reports whether a `tmux -V` string is >= major.minor.
func tmuxAtLeast(v string, major, minor int) bool {
	m := tmuxVersionRe.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a > major || a == major && b >= minor
}

func doctor(ctx context.Context, g *globals) []finding {
	var fs []finding
	add := func(level, format string, args ...any) { fs = append(fs, finding{level, fmt.Sprintf(format, args...)}) }

	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if v, err := tmuxadapter.New("wave-doctor").Version(cctx); err != nil {
		add("error", "tmux: %v (install tmux >= 3.2)", err)
	} else if !tmuxAtLeast(v, 3, 2) {
		add("error", "tmux: %s is older than 3.2", v)
	} else {
		add("ok", "tmux: %s", v)
	}
	if _, err := exec.LookPath("git"); err != nil {
		add("error", "git: not on PATH")
	} else {
		add("ok", "git: found")
	}
	e, err := openLane(g)
	if err != nil {
		add("error", "config: %v", err)
		return fs
	}
	cfgFile := e.cfg.File
	if cfgFile == "" {
		cfgFile = "(defaults: no wave.config.yaml)"
	}
	add("ok", "config: %s, lane %s, waves in %s", cfgFile, e.lane.Name, e.lane.WavesDir)
	ws, err := e.loadWaves()
	if err != nil {
		var we *wave.Error
		if errors.As(err, &we) {
			for _, p := range we.Problems {
				add("error", "%s", p.String())
			}
		} else {
			add("error", "waves: %v", err)
		}
		return fs
	}
	add("ok", "waves: %d valid wave file(s)", len(ws))
	fs = append(fs, executorFindings(ws, e)...)
	fs = append(fs, laneFindings(ctx, e)...)
	return fs
}

// executorFindings reports every executor command the waves need that is
// missing from PATH.
func executorFindings(ws []*wave.Wave, e *laneEnv) []finding {
	var fs []finding
	need := map[string][]string{}
	for _, w := range ws {
		b := roles.Bind(w, e.lane.Roles)
		for i := range w.Agents {
			a := &w.Agents[i]
			r, err := executor.Resolve(a, b.RuntimeRole(a), e.lane, "", false)
			if err != nil {
				fs = append(fs, finding{"error", fmt.Sprintf("wave %d agent %s: %v", w.Number, a.ID, err)})
				continue
			}
			if cmd := executor.Command(r); cmd != "" {
				need[cmd] = append(need[cmd], fmt.Sprintf("w%d/%s", w.Number, a.ID))
			}
		}
	}
	cmds := make([]string, 0, len(need))
	for c := range need {
		cmds = append(cmds, c)
	}
	slices.Sort(cmds)
	for _, c := range cmds {
		if _, err := exec.LookPath(c); err != nil {
			fs = append(fs, finding{"error", fmt.Sprintf("executor %s: not on PATH (needed by %v)", c, need[c])})
		} else {
			fs = append(fs, finding{"ok", fmt.Sprintf("executor %s: found", c)})
		}
	}
	return fs
}

// laneFindings reports the lane lock and leftover tmux sessions.
func laneFindings(ctx context.Context, e *laneEnv) []finding {
	var fs []finding
	lp := e.layout.LockPath()
	live := lanes.Held(lp)
	if info, err := lanes.ReadLockInfo(lp); err == nil {
		if live {
			fs = append(fs, finding{"ok", fmt.Sprintf("lane %s: launcher pid %d is running", e.lane.Name, info.Pid)})
		} else {
			fs = append(fs, finding{"ok", fmt.Sprintf("lane %s: lock file of pid %d is stale and free (no cleanup needed)", e.lane.Name, info.Pid)})
		}
	} else if live {
		fs = append(fs, finding{"ok", fmt.Sprintf("lane %s: a launcher holds the lane (unreadable lock body: %v)", e.lane.Name, err)})
	} else if !os.IsNotExist(err) {
		fs = append(fs, finding{"warn", fmt.Sprintf("lane %s: lock file unreadable: %v", e.lane.Name, err)})
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ss, err := tmuxadapter.New(e.layout.Socket()).ListSessions(cctx)
	if err == nil && len(ss) > 0 && !live {
		fs = append(fs, finding{"warn", fmt.Sprintf("lane %s: %d tmux session(s) on socket %s with no launcher (inspect with `tmux -L %s ls`, clear with `wave-orchestrator stop`)",
			e.lane.Name, len(ss), e.layout.Socket(), e.layout.Socket())})
	}
	return fs
}
