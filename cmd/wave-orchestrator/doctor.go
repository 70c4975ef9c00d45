package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/preflight"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// finding is one doctor check's result, rendered as a text line or a
// JSON object (doctor_json.go). check names what was checked (tmux, git,
// config, an executor, lane); when empty it is the message's leading word.
// fix, when known, says what to do; the text form already carries it in msg.
type finding struct {
	level string // ok|warn|skip|error
	msg   string
	check string
	fix   string
}

// problemFinding is a preflight problem as an error finding.
func problemFinding(p preflight.Problem) finding {
	return finding{level: "error", msg: p.String(), check: p.Subject, fix: p.Fix}
}

func newDoctorCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check tmux, git, executors, config and every wave file",
		Long: `Check what a launch needs, one finding per line: tmux >= 3.2, git >= 2.38
(backlog merges use merge-tree --write-tree), the GitHub token variable when
the backlog source is github (set or not; never its value), every
executor the lane's waves use (on PATH; claude usable as this user), the
config and every wave file, the lane lock and leftover tmux sessions. In a
repository with a backlog: origin present, the workers' executor as the
workers resolve it, every local issue file readable (file:line), and each
shell variable the workers will not see (scrubbed) as a warning; no waves
directory is fine there.
On a lane with runtime.backend kubernetes: the cluster reachable, the
namespace, every permission the launcher needs there (each missing one
named, e.g. "cannot create jobs.batch"), the image set, the pods'
ServiceAccount and its right to renew Leases (docs/kubernetes.md).
A finding is ok, warn, skip (could not be checked with this user's
rights) or error; exits 1 when any is an error.`,
		Example: `  wave-orchestrator doctor
  wave-orchestrator --lane side doctor
  wave-orchestrator doctor --json | jq -r '.errors[]'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fs := doctor(c.Context(), g)
			if g.json {
				root, _ := g.root()
				return printFindingsJSON(c.OutOrStdout(), root, fs)
			}
			return printFindings(c.OutOrStdout(), fs)
		},
	}
	c.Flags().BoolVar(&g.json, "json", false, "print the findings as one JSON object (schema: docs/doctor-schema.md); same exit code")
	return c
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

func doctor(ctx context.Context, g *globals) []finding {
	var fs []finding
	add := func(level, check, format string, args ...any) {
		fs = append(fs, finding{level: level, check: check, msg: fmt.Sprintf(format, args...)})
	}
	host := preflight.System()
	fs = append(fs, toolFindings(ctx, host)...)
	e, err := openLane(g)
	if err != nil {
		// A joined error (config problems) is one finding per problem.
		for _, line := range strings.Split(err.Error(), "\n") {
			add("error", "config", "config: %s", line)
		}
		return fs
	}
	cfgFile := e.cfg.File
	if cfgFile == "" {
		cfgFile = "(defaults: no wave.config.yaml)"
	}
	add("ok", "config", "config: %s, lane %s, waves in %s", cfgFile, e.lane.Name, e.lane.WavesDir)
	fs = append(fs, backlogFindings(e, host.Getenv)...)
	fs = append(fs, backlogModeFindings(ctx, e, host)...)
	fs = append(fs, notifyFindings(e)...)
	if noWavesIsFine(e) {
		add("ok", "waves", "waves: none (no %s; a backlog-only repository needs none)", e.lane.WavesDir)
		return append(fs, laneFindings(ctx, e)...)
	}
	ws, err := e.loadWaves()
	if err != nil {
		var we *wave.Error
		if errors.As(err, &we) {
			for _, p := range we.Problems {
				add("error", "wave", "%s", oneLine(p.String()))
			}
		} else {
			for _, line := range strings.Split(err.Error(), "\n") {
				add("error", "waves", "waves: %s", line)
			}
		}
		return fs
	}
	add("ok", "waves", "waves: %d valid wave file(s)", len(ws))
	fs = append(fs, executorFindings(ctx, host, ws, e)...)
	fs = append(fs, kubeFindings(ctx, e)...)
	fs = append(fs, laneFindings(ctx, e)...)
	return fs
}

// toolFindings reports tmux and git, as launch's preflight checks them.
func toolFindings(ctx context.Context, host preflight.Host) []finding {
	var fs []finding
	for _, p := range host.Check(ctx, preflight.Needs{Tmux: true, Git: true}) {
		fs = append(fs, problemFinding(p))
	}
	if !slices.ContainsFunc(fs, func(f finding) bool { return strings.HasPrefix(f.msg, "tmux:") }) {
		v, _ := host.TmuxVersion(ctx)
		fs = append([]finding{{level: "ok", check: "tmux", msg: "tmux: " + v}}, fs...)
	}
	if !slices.ContainsFunc(fs, func(f finding) bool { return strings.HasPrefix(f.msg, "git:") }) {
		major, minor, _ := host.GitVersion(ctx)
		fs = append(fs, finding{level: "ok", check: "git", msg: fmt.Sprintf("git: %d.%d (>= %d.%d: backlog merges can use merge-tree --write-tree)",
			major, minor, preflight.GitMajor, preflight.GitMinor)})
	}
	return fs
}

// backlogFindings reports what backlog mode needs from the environment:
// for the GitHub source, the token variable set (its value is never
// printed).
func backlogFindings(e *laneEnv, getenv func(string) string) []finding {
	cfg := e.cfg
	if cfg.SourceKind() != config.SourceGitHub {
		return nil
	}
	repo := cfg.GitHub.Owner + "/" + cfg.GitHub.Repo
	env := cfg.GitHub.TokenEnv
	if getenv(env) == "" {
		return []finding{{level: "error", check: "backlog", msg: fmt.Sprintf("backlog: github source %s: $%s is not set; export a token there (github.tokenEnv) before backlog plan/run", repo, env),
			fix: fmt.Sprintf("export a token in $%s (github.tokenEnv)", env)}}
	}
	return []finding{{level: "ok", check: "backlog", msg: fmt.Sprintf("backlog: github source %s, token in $%s", repo, env)}}
}

// executorFindings reports every executor the waves need, checked as
// launch's preflight checks it (on PATH; claude usable as this user).
func executorFindings(ctx context.Context, host preflight.Host, ws []*wave.Wave, e *laneEnv) []finding {
	needs, err := launcher.Needs(ws, e.lane, "")
	if err != nil {
		return []finding{{level: "error", check: "executors", msg: oneLine(err.Error())}}
	}
	needs.Tmux = false
	if e.lane.Runtime.UsesKubernetes() {
		var ids []string
		for _, x := range needs.Executors {
			if !slices.Contains(ids, x.ID) {
				ids = append(ids, x.ID)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		return []finding{{level: "ok", check: "executors", msg: fmt.Sprintf("executors: %s run in the image %s (not checked on this machine)",
			strings.Join(ids, ", "), e.lane.Runtime.Kubernetes.Image)}}
	}
	bad := map[string]bool{}
	var fs []finding
	for _, p := range host.Check(ctx, needs) {
		fs = append(fs, problemFinding(p))
		bad[p.Subject] = true
	}
	seen := map[string]bool{}
	for _, x := range needs.Executors {
		subject := x.Subject()
		if !bad[subject] && !seen[subject] {
			seen[subject] = true
			fs = append(fs, finding{level: "ok", check: subject, msg: subject + ": found"})
		}
	}
	return fs
}

// oneLine keeps a finding on its line.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ") }

// laneFindings reports the lane lock and leftover tmux sessions.
func laneFindings(ctx context.Context, e *laneEnv) []finding {
	var fs []finding
	lp := e.layout.LockPath()
	live := lanes.Held(lp)
	if info, err := lanes.ReadLockInfo(lp); err == nil {
		if live {
			fs = append(fs, finding{level: "ok", check: "lane", msg: fmt.Sprintf("lane %s: launcher pid %d is running", e.lane.Name, info.Pid)})
		} else {
			fs = append(fs, finding{level: "ok", check: "lane", msg: fmt.Sprintf("lane %s: no launcher; the lock was last held by pid %d and is free (no cleanup needed)", e.lane.Name, info.Pid)})
		}
	} else if live {
		fs = append(fs, finding{level: "ok", check: "lane", msg: fmt.Sprintf("lane %s: a launcher holds the lane (unreadable lock body: %v)", e.lane.Name, err)})
	} else if !errors.Is(err, iofs.ErrNotExist) {
		fs = append(fs, finding{level: "warn", check: "lane", msg: fmt.Sprintf("lane %s: lock file unreadable: %v", e.lane.Name, err)})
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	all, err := tmuxadapter.New(e.layout.Socket()).ListSessions(cctx)
	// The dashboard session is meant to outlive its launch.
	var ss []tmuxadapter.Session
	for _, s := range all {
		if s.Name != lanes.DashboardSession {
			ss = append(ss, s)
		}
	}
	if err == nil && len(ss) > 0 && !live {
		fs = append(fs, finding{level: "warn", check: "lane", msg: fmt.Sprintf("lane %s: %d tmux session(s) on socket %s with no launcher (inspect with `tmux -L %s ls`, clear with `wave-orchestrator stop`)",
			e.lane.Name, len(ss), e.layout.Socket(), e.layout.Socket()), fix: "wave-orchestrator stop"})
	}
	return fs
}
