package config

import (
	"path"
	"strings"
)

// validateSetup checks backlog.setupTimeoutMinutes and
// backlog.copyIgnored: each glob names files inside the repository
// (relative, no "..", not in .git), normalised in place.
func (c *Config) validateSetup(p *problems) {
	b := &c.Backlog
	p.atLeast("backlog.setupTimeoutMinutes", b.SetupTimeoutMinutes, 1)
	for i, g := range b.CopyIgnored {
		norm, why := copyGlob(g)
		if why != "" {
			p.add("backlog.copyIgnored", "%q: %s", g, why)
			continue
		}
		b.CopyIgnored[i] = norm
	}
}

// copyGlob is glob made relative to the repository's root ("./.env" →
// ".env"), or why it cannot be one of backlog.copyIgnored's.
func copyGlob(glob string) (string, string) {
	g := strings.TrimSpace(glob)
	for strings.HasPrefix(g, "./") {
		g = strings.TrimLeft(g[2:], "/")
	}
	switch {
	case g == "":
		return "", "the glob is empty"
	case strings.HasPrefix(g, "/") || strings.HasPrefix(g, "~"):
		return "", "want a path relative to the repository's root, e.g. .env or config/*.local.yml"
	case strings.Contains(g, `\`):
		return "", "use / between directories"
	case strings.HasPrefix(g, ":"):
		return "", "git pathspec magic is not taken; give a plain glob"
	}
	for _, seg := range strings.Split(g, "/") {
		switch {
		case seg == "..":
			return "", "must stay inside the repository (no ..)"
		case seg == ".git":
			return "", "git's own directory is never copied"
		}
		if _, err := path.Match(seg, ""); err != nil {
			return "", "not a glob: " + err.Error()
		}
	}
	return strings.TrimSuffix(g, "/"), ""
}
