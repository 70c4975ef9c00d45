package gitops

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// Only ignored files the globs name are listed: never a tracked file,
// never the user's untracked work, and ** reaches into directories.
func TestIgnoredFilesAreTheIgnoredOnesTheGlobsName(t *testing.T) {
	origin := gittest.OriginWithBase(t, map[string]string{
		".gitignore":          ".env\n*.local.yml\nsecrets/\nbuild/\n",
		"config/app.yml":      "tracked\n",
		"config/tracked.yml2": "x\n",
	})
	r := newClone(t, origin)
	for _, p := range []string{".env", "config/db.local.yml", "config/deep/x.local.yml", "secrets/a/key.pem",
		"build/out.bin", "notes.txt", "config/new.yml"} {
		writeFile(t, filepath.Join(r.Dir, p), p+"\n")
	}
	for _, tc := range []struct {
		globs []string
		want  []string
	}{
		{[]string{".env"}, []string{".env"}},
		{[]string{"config/*.local.yml"}, []string{"config/db.local.yml"}},
		{[]string{"config/**/*.local.yml"}, []string{"config/db.local.yml", "config/deep/x.local.yml"}},
		{[]string{"secrets"}, []string{"secrets/a/key.pem"}},
		{[]string{"config/app.yml", "config/new.yml", "notes.txt"}, nil}, // tracked, or untracked and not ignored
		{[]string{".env", ".env"}, []string{".env"}},
	} {
		got, err := r.IgnoredFiles(context.Background(), tc.globs)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.globs, got, tc.want)
		}
	}
}
