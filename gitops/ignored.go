package gitops

import (
	"context"
	"fmt"
	"slices"
)

// IgnoredFiles lists the files of the clone's working tree that git
// ignores (.gitignore, .git/info/exclude, core.excludesFile) and one of
// globs matches, relative to its top, sorted. The globs are git's glob
// pathspecs from the top: * and ? stay within a directory, ** crosses
// directories, a directory's name takes everything under it. Tracked
// and untracked-but-not-ignored files are never listed: a worker's clone
// has the first, and the second are the user's work in progress.
func (r *Repo) IgnoredFiles(ctx context.Context, globs []string) ([]string, error) {
	if len(globs) == 0 {
		return nil, nil
	}
	args := []string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--"}
	for _, g := range globs {
		args = append(args, ":(top,glob)"+g)
	}
	out, err := r.git(ctx, r.Dir, args...)
	if err != nil {
		return nil, fmt.Errorf("list the ignored files to copy: %w", err)
	}
	files := splitNUL(out)
	slices.Sort(files)
	return slices.Compact(files), nil
}
