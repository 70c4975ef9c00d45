package main

import (
	"os"
	"path/filepath"
)

// rootMarkers are the config files that make a directory a wave root.
var rootMarkers = []string{"wave.config.yaml", "wave.config.yml", "wave.config.json"}

// findRoot walks up from dir, as git and go do: the nearest directory
// holding a wave config wins; the top level of the git work tree is the
// boundary (the nearest directory with a .git entry, file or directory, so
// worktrees and submodules count) and the root when no config is below
// it; outside any work tree, with no config above, dir itself. Run from
// docs/, the repository is found, never a stray config further up.
func findRoot(dir string) string {
	for d := filepath.Clean(dir); ; {
		for _, m := range rootMarkers {
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
