package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/preflight"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

func newDoctorCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check tmux, git, executors, config and every wave file",
		Long: `Check what a launch needs, one finding per line: tmux >= 3.2, git >= 2.38
(backlog merges use merge-tree --write-tree), the GitHub token variable when
the backlog source is github (set or not; never its value), every
executor the lane's waves use (on PATH; claude usable as this user), the
config and every wave file, the lane lock and leftover tmux sessions. In a
repository with a backlog: origin present and the branch runs start from
(an origin with no branch names the push that fixes it), the workers'
executor as the workers resolve it, every local issue file readable
(file:line), and each shell variable the workers will not see (scrubbed)
as a warning; no waves directory is fine there.
On a lane with runtime.backend kubernetes, for its waves and its backlog
alike: the cluster reachable, the namespace, every permission the launcher
needs there (each missing one named, e.g. "cannot create jobs.batch"), the
image set, the pods' ServiceAccount and its right to renew Leases, the git
credentials Secret (docs/kubernetes.md); the executors are the image's and
are not looked for here.
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

func printFindings(w io.Writer, fs []preflight.Finding) error {
	errs := 0
	for _, f := range fs {
		fmt.Fprintf(w, "%-5s %s\n", f.Level, termtext.EscapeLines(f.Msg))
		if f.Level == preflight.LevelError {
			errs++
		}
	}
	if errs > 0 {
		return withCode(exitcode.Failed, fmt.Errorf("doctor: %d error(s)", errs))
	}
	return nil
}

// doctor makes every check, in the order the lines print: the tools,
// the config, the backlog's needs, the notify sinks, the waves, their
// executors, the cluster of a kubernetes lane, the lane itself. The
// checks are preflight's, the ones a launch makes.
func doctor(ctx context.Context, g *globals) []preflight.Finding {
	var fs []preflight.Finding
	add := func(level preflight.Level, check, format string, args ...any) {
		fs = append(fs, preflight.Finding{Level: level, Check: check, Msg: fmt.Sprintf(format, args...)})
	}
	host := preflight.System()
	fs = append(fs, host.Tools(ctx)...)
	e, err := openLane(g)
	if err != nil {
		// A joined error (config problems) is one finding per problem.
		for _, line := range strings.Split(err.Error(), "\n") {
			add(preflight.LevelError, "config", "config: %s", line)
		}
		return fs
	}
	cfgFile := e.cfg.File
	if cfgFile == "" {
		cfgFile = "(defaults: no wave.config.yaml)"
	}
	add(preflight.LevelOK, "config", "config: %s, lane %s, waves in %s", cfgFile, e.lane.Name, e.lane.WavesDir)
	fs = append(fs, host.GitHubToken(e.cfg)...)
	fs = append(fs, backlogModeFindings(ctx, e, host)...)
	fs = append(fs, preflight.Sandbox(ctx, e.cfg, backlogInUse(e), e.lane.Runtime.UsesKubernetes())...)
	fs = append(fs, notifyFindings(e)...)
	if noWavesIsFine(e) {
		add(preflight.LevelOK, "waves", "waves: none (no %s; a backlog-only repository needs none)", e.lane.WavesDir)
		fs = append(fs, clusterFindings(ctx, e)...)
		return append(fs, preflight.Lane(ctx, e.layout, e.lane.Name)...)
	}
	ws, err := e.loadWaves()
	if err != nil {
		var we *wave.Error
		if errors.As(err, &we) {
			for _, p := range we.Problems {
				add(preflight.LevelError, "wave", "%s", preflight.Flat(p.String()))
			}
		} else {
			for _, line := range strings.Split(err.Error(), "\n") {
				add(preflight.LevelError, "waves", "waves: %s", line)
			}
		}
		return fs
	}
	add(preflight.LevelOK, "waves", "waves: %d valid wave file(s)", len(ws))
	if needs, err := launcher.Needs(ws, e.lane, ""); err != nil {
		add(preflight.LevelError, "executors", "%s", preflight.Flat(err.Error()))
	} else if e.lane.Runtime.UsesKubernetes() {
		fs = append(fs, preflight.ImageExecutors(needs, e.lane.Runtime.Kubernetes.Image)...)
	} else {
		fs = append(fs, host.Executors(ctx, needs)...)
	}
	fs = append(fs, clusterFindings(ctx, e)...)
	return append(fs, preflight.Lane(ctx, e.layout, e.lane.Name)...)
}

// clusterFindings are the cluster's checks of a kubernetes lane —
// reachable, namespace, every permission, the pods' ServiceAccount, the
// git credentials Secret — for its waves and its backlog workers alike;
// none for a tmux lane.
func clusterFindings(ctx context.Context, e *laneEnv) []preflight.Finding {
	if !e.lane.Runtime.UsesKubernetes() {
		return nil
	}
	return preflight.ClusterFindings(preflight.Cluster(ctx, e.lane, runs.KubeOptions))
}
