package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// RootEnv names the variable that gives the repository root when no
// --repo-root flag does.
const RootEnv = "WAVE_REPO_ROOT"

// RepoRoot resolves the repository root a command works in: given (the
// --repo-root flag), else $WAVE_REPO_ROOT as getenv reports it, else the
// root found from the working directory (FindRoot). A given root is made
// absolute against the working directory; getwd is asked only when one
// is needed.
func RepoRoot(given string, getenv func(string) string, getwd func() (string, error)) (string, error) {
	r := given
	if r == "" {
		r = getenv(RootEnv)
	}
	if r != "" && filepath.IsAbs(r) {
		return filepath.Clean(r), nil
	}
	wd, err := getwd()
	if err != nil {
		if r != "" {
			return "", fmt.Errorf("repo root %q: %w", r, err)
		}
		return "", err
	}
	if r == "" {
		return FindRoot(wd), nil
	}
	return filepath.Join(wd, r), nil
}

// FindRoot walks up from dir, as git and go do: the nearest directory
// holding a wave config (any of the names Load reads) wins; the top level
// of the git work tree is the boundary (the nearest directory with a .git
// entry, file or directory, so worktrees and submodules count) and the
// root when no config is below it; outside any work tree, with no config
// above, dir itself. Run from docs/, the repository is found, never a
// stray config further up.
func FindRoot(dir string) string {
	for d := filepath.Clean(dir); ; {
		for _, m := range fileNames {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}
