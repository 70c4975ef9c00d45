package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/preflight"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor"
)

// backlogInUse reports whether the repository uses backlog mode: a
// configured source, a GitHub repository, or a local issue directory.
func backlogInUse(e *laneEnv) bool {
	if e.cfg.Backlog.Source != "" || e.cfg.SourceKind() == config.SourceGitHub {
		return true
	}
	_, err := os.Stat(filepath.Join(e.lane.RepoRoot, filepath.FromSlash(e.cfg.Backlog.LocalDir)))
	return err == nil
}

// backlogModeFindings checks what `backlog run` will need, as it checks
// it: origin present, the workers' executor (resolved as the workers
// resolve it) on PATH and usable as this user, the local issue files
// readable (each bad one with file:line), and the shell variables the
// workers will not see. Nothing for a repository without a backlog.
func backlogModeFindings(ctx context.Context, e *laneEnv, host preflight.Host) []preflight.Finding {
	if !backlogInUse(e) {
		return nil
	}
	fs := []preflight.Finding{originFinding(ctx, e)}
	fs = append(fs, workerFindings(ctx, e, host)...)
	if e.cfg.SourceKind() == config.SourceLocal {
		fs = append(fs, issueFileFindings(ctx, e)...)
	}
	for _, w := range supervisor.CapFindings(e.layout.StateDir, e.cfg.Backlog) {
		fs = append(fs, preflight.Finding{Level: preflight.LevelWarn, Msg: "backlog: " + w})
	}
	return fs
}

func originFinding(ctx context.Context, e *laneEnv) preflight.Finding {
	repo, err := gitops.Open(ctx, e.lane.RepoRoot, e.gitOptions(nil))
	if err != nil {
		return preflight.Finding{Level: preflight.LevelError, Msg: "backlog: needs a git repository with an origin: " + preflight.Flat(err.Error())}
	}
	if err := checkOrigin(ctx, repo); err != nil {
		return preflight.Finding{Level: preflight.LevelError, Msg: "backlog: " + preflight.Flat(err.Error())}
	}
	msg := "backlog: origin present (claims and the wave branch live there)"
	if e.cfg.SourceKind() == config.SourceLocal {
		// A run's base, found as the run finds it (GitHub's comes from
		// its API).
		base, err := localBase(ctx, repo, e.cfg.GitHub.BaseBranch)
		if err != nil {
			return preflight.Finding{Level: preflight.LevelError, Msg: "backlog: " + preflight.Flat(err.Error())}
		}
		msg += ", runs start from its " + base
	}
	return preflight.Finding{Level: preflight.LevelOK, Msg: msg}
}

// workerFindings checks the workers' executor as backlog run's preflight
// does, and names each variable of this shell a worker will not see.
func workerFindings(ctx context.Context, e *laneEnv, host preflight.Host) []preflight.Finding {
	res, err := supervisor.ResolveWorker(e.cfg, e.lane, "")
	if err != nil {
		return []preflight.Finding{{Level: preflight.LevelError, Msg: "backlog workers: " + preflight.Flat(err.Error())}}
	}
	if e.lane.Runtime.UsesKubernetes() {
		// The workers run in pods: their command and environment are the
		// image's (the cluster's checks follow the waves').
		return []preflight.Finding{{Level: preflight.LevelOK, Msg: fmt.Sprintf("backlog workers: executor %s runs in the image %s (not checked on this machine)",
			res.ID, preflight.Flat(e.lane.Runtime.Kubernetes.Image))}}
	}
	need, ok := launcher.ExecutorNeed(res, executor.ScrubList(e.lane))
	if !ok {
		return []preflight.Finding{{Level: preflight.LevelOK, Msg: "backlog workers: executor " + res.ID + " (this binary, nothing to install)"}}
	}
	return host.Workers(ctx, need, res.ID)
}

// issueFileFindings reads every local issue file as plan and run do.
func issueFileFindings(ctx context.Context, e *laneEnv) []preflight.Finding {
	dir, err := localIssueDir(e)
	if err != nil {
		return []preflight.Finding{{Level: preflight.LevelError, Msg: "backlog: " + preflight.Flat(err.Error())}}
	}
	src, err := forge.NewLocal(forge.LocalOptions{Dir: dir, StateDir: filepath.Join(e.lane.RepoRoot, e.lane.StateRoot, "backlog-local")})
	if err != nil {
		return []preflight.Finding{{Level: preflight.LevelError, Msg: "backlog: " + preflight.Flat(err.Error())}}
	}
	open, err := src.ListOpen(ctx, nil)
	var fs []preflight.Finding
	var bad *forge.BadIssueFiles
	if errors.As(err, &bad) {
		for _, f := range bad.Files {
			fs = append(fs, preflight.Finding{Level: preflight.LevelError, Msg: "backlog: issue file " + preflight.Flat(f.Error())})
		}
	} else if err != nil {
		return []preflight.Finding{{Level: preflight.LevelError, Msg: "backlog: " + preflight.Flat(err.Error())}}
	}
	return append([]preflight.Finding{{Level: preflight.LevelOK, Msg: fmt.Sprintf("backlog: local source %s, %d open issue(s) readable", e.cfg.Backlog.LocalDir, len(open))}}, fs...)
}

// noWavesIsFine reports whether a missing waves directory is expected: a
// backlog-only repository has none.
func noWavesIsFine(e *laneEnv) bool {
	_, err := os.Stat(filepath.Join(e.lane.RepoRoot, e.lane.WavesDir))
	return errors.Is(err, fs.ErrNotExist) && backlogInUse(e)
}
