package config

import (
	"slices"
	"strings"
	"testing"
)

// backlog.copyIgnored names files inside the repository only: a glob
// that could reach outside it, or into git's own directory, is refused
// when the config loads, naming the line and the fix.
func TestACopyIgnoredGlobOutsideTheRepositoryIsRefusedWithItsLine(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"parent", "backlog:\n  copyIgnored: [../secrets/.env]\n", `:2: backlog.copyIgnored: "../secrets/.env": must stay inside the repository`},
		{"absolute", "backlog:\n  copyIgnored: [/etc/passwd]\n", `:2: backlog.copyIgnored: "/etc/passwd": want a path relative to the repository's root`},
		{"home", "backlog:\n  copyIgnored: [\"~/.env\"]\n", `"~/.env": want a path relative`},
		{"git dir", "backlog:\n  copyIgnored: [.git/hooks/*]\n", `".git/hooks/*": git's own directory is never copied`},
		{"deep parent", "backlog:\n  copyIgnored: [config/../../x]\n", "must stay inside the repository"},
		{"bad glob", "backlog:\n  copyIgnored: [\"config/[a.yml\"]\n", `"config/[a.yml": not a glob`},
		{"magic", "backlog:\n  copyIgnored: [\":(top).env\"]\n", "pathspec magic is not taken"},
		{"empty", "backlog:\n  copyIgnored: [\"\"]\n", "the glob is empty"},
		{"setup as a string", "backlog:\n  setup: npm ci\n", `:2: backlog.setup: want a command as a list of words, e.g. [make, test], got "npm ci"`},
		{"setup empty command", "backlog:\n  setup: [\"\", ci]\n", "backlog.setup: the command (first element) is empty"},
		{"setup timeout", "backlog:\n  setupTimeoutMinutes: 0\n", ":2: backlog.setupTimeoutMinutes: must be >= 1, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(yamlRepo(t, tc.yaml), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}

func TestSetupAndCopyIgnoredLoadNormalised(t *testing.T) {
	c := mustLoad(t, yamlRepo(t, "backlog:\n  setup: [npm, ci]\n  copyIgnored: [./.env, \"config/*.local.yml\", \"secrets/**\"]\n"), nil)
	if !slices.Equal(c.Backlog.Setup, []string{"npm", "ci"}) {
		t.Errorf("setup %q", c.Backlog.Setup)
	}
	if want := []string{".env", "config/*.local.yml", "secrets/**"}; !slices.Equal(c.Backlog.CopyIgnored, want) {
		t.Errorf("copyIgnored %q, want %q", c.Backlog.CopyIgnored, want)
	}
	if c.Backlog.SetupTimeoutMinutes != 30 {
		t.Errorf("setupTimeoutMinutes %d, want the default 30", c.Backlog.SetupTimeoutMinutes)
	}
}
