package localagent

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// plant makes the simulated worker hostile the way any agent with a
// shell can be (the `plant=` directive, a comma list), after its work is
// committed: hooks — a script under every hook name the supervisor's git
// could run, in every git directory git names for its checkout;
// fsmonitor — core.fsmonitor set to a program in its checkout's
// configuration; push — its HEAD pushed to the wave branch through its
// origin. Hooks and the program append their name and the GitHub token
// variables they see to log (`plant-log=`), so a test sees whether anyone
// ran them and with what.
func plant(ctx context.Context, what, log, wt, wave string, out io.Writer) error {
	for _, w := range strings.Split(what, ",") {
		var err error
		switch strings.TrimSpace(w) {
		case "hooks":
			err = plantHooks(ctx, wt, log, out)
		case "fsmonitor":
			err = plantFsmonitor(ctx, wt, log, out)
		case "push":
			if perr := gitops.PushAs(ctx, wt, wave); perr != nil {
				fmt.Fprintf(out, "[local-worker] plant: push to %s refused: %v\n", wave, perr)
			} else {
				fmt.Fprintf(out, "[local-worker] plant: pushed to %s\n", wave)
			}
		case "":
		default:
			err = fmt.Errorf("plant=%q: want hooks, fsmonitor or push", w)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// plantedHooks are the hooks planted: those the supervisor's pushes,
// fetches, ref updates and checkouts would run.
var plantedHooks = []string{"pre-push", "reference-transaction", "post-checkout", "post-merge", "post-rewrite",
	"pre-auto-gc", "post-index-change", "pre-commit", "commit-msg", "post-commit"}

func plantHooks(ctx context.Context, wt, log string, out io.Writer) error {
	dirs, err := gitops.GitDirs(ctx, wt)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		for _, h := range plantedHooks {
			if err := writeScript(filepath.Join(d, "hooks", h), h, log); err != nil {
				return err
			}
		}
		fmt.Fprintf(out, "[local-worker] plant: hooks in %s\n", d)
	}
	return nil
}

func plantFsmonitor(ctx context.Context, wt, log string, out io.Writer) error {
	dirs, err := gitops.GitDirs(ctx, wt)
	if err != nil {
		return err
	}
	prog := filepath.Join(dirs[0], "fsmonitor-planted")
	if err := writeScript(prog, "fsmonitor", log); err != nil {
		return err
	}
	if err := gitops.SetConfig(ctx, wt, "core.fsmonitor", prog); err != nil {
		return err
	}
	fmt.Fprintf(out, "[local-worker] plant: core.fsmonitor=%s\n", prog)
	return nil
}

// writeScript writes an executable script that appends name and the
// token variables it sees to log.
func writeScript(path, name, log string) error {
	q := "'" + strings.ReplaceAll(log, "'", `'\''`) + "'"
	body := "#!/bin/sh\necho \"" + name + " GITHUB_TOKEN=${GITHUB_TOKEN:-} GH_TOKEN=${GH_TOKEN:-} in $(pwd)\" >> " + q + "\nexit 0\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o755)
}
