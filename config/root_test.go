package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A command run anywhere inside a repository works on that repository:
// the nearest wave config up from here, else the git top level, never a
// config above the work tree; outside any, here.
func TestFindRootFindsTheRepositoryFromASubdirectory(t *testing.T) {
	top := repoWith(t, map[string]string{
		"wave.config.yaml":                 "",
		"repo/.git/HEAD":                   "",
		"repo/docs/guide/x.md":             "",
		"repo/sub/wave.config.json":        "",
		"repo/sub/deep/x":                  "",
		"wt/.git":                          "gitdir: elsewhere\n", // a worktree's .git is a file
		"wt/a/b/x":                         "",
		"plain/wave.config.yml":            "",
		"plain/in/x":                       "",
		"repo/sub/deep/wave.config.yaml/x": "", // a directory of that name counts too: Load reports it
	})
	nowhere := t.TempDir()
	for _, tc := range []struct{ dir, want string }{
		{"repo/docs/guide", "repo"},
		{"repo", "repo"},
		{"repo/sub/deep", "repo/sub/deep"},
		{"repo/sub", "repo/sub"},
		{"wt/a/b", "wt"},
		{"plain/in", "plain"},
		{".", "."},
	} {
		got := FindRoot(filepath.Join(top, tc.dir))
		if want := filepath.Join(top, tc.want); got != want {
			t.Errorf("FindRoot(%s) = %s, want %s", tc.dir, got, want)
		}
	}
	// With no config or work tree above (a temp dir may sit in one, so
	// only when there is none), the directory itself.
	if got := FindRoot(nowhere); got != nowhere && !hasMarkerAbove(nowhere) {
		t.Errorf("FindRoot(%s) = %s, want the directory itself", nowhere, got)
	}
}

func hasMarkerAbove(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		for _, m := range append([]string{".git"}, fileNames...) {
			if _, err := os.Lstat(filepath.Join(d, m)); err == nil {
				return true
			}
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// --repo-root wins over $WAVE_REPO_ROOT, which wins over the search; a
// relative root is taken from the working directory.
func TestRepoRootPrefersTheFlagThenTheVariableThenTheSearch(t *testing.T) {
	top := repoWith(t, map[string]string{"r/.git/HEAD": "", "r/docs/x": ""})
	wd := filepath.Join(top, "r", "docs")
	broken := errors.New("cwd is gone")
	for _, tc := range []struct {
		name, flag, env string
		getwdErr        error
		want            string
		wantErr         bool
	}{
		{name: "search", want: filepath.Join(top, "r")},
		{name: "variable", env: "/srv/repo/", want: "/srv/repo"},
		{name: "flag over variable", flag: "/a/b", env: "/srv/repo", want: "/a/b"},
		{name: "relative flag", flag: "../other", want: filepath.Join(top, "r", "other")},
		{name: "relative variable", env: "x", want: filepath.Join(wd, "x")},
		{name: "absolute needs no cwd", flag: "/a", getwdErr: broken, want: "/a"},
		{name: "relative without cwd", flag: "x", getwdErr: broken, wantErr: true},
		{name: "search without cwd", getwdErr: broken, wantErr: true},
	} {
		getenv := func(k string) string {
			if k == RootEnv {
				return tc.env
			}
			return ""
		}
		getwd := func() (string, error) { return wd, tc.getwdErr }
		got, err := RepoRoot(tc.flag, getenv, getwd)
		switch {
		case tc.wantErr && !errors.Is(err, broken):
			t.Errorf("%s: RepoRoot = %q, %v; want an error wrapping %v", tc.name, got, err, broken)
		case !tc.wantErr && (err != nil || got != tc.want):
			t.Errorf("%s: RepoRoot = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
