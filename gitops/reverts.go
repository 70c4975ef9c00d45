package gitops

import (
	"context"
	"regexp"
	"strings"
)

// revertLine is what `git revert` writes in the message of a revert (and
// GitHub's revert button, which runs it): "This reverts commit <sha>",
// ", reversing changes made to <sha>" after it for a merge.
var revertLine = regexp.MustCompile(`This reverts commit ([0-9a-f]{7,40})`)

// Reverted finds which of commits the history of ref in the repository
// at dir reverted: each commit a revert commit names, and for a merge it
// names every commit that merge brought in (reverting the final pull
// request of a wave reverts each issue's merge in it). A revert that was
// itself reverted ("Reapply") counts for nothing. The result maps each
// reverted commit of commits to the revert commit. Read-only; nothing is
// fetched: ref is as last fetched.
func Reverted(ctx context.Context, dir, ref string, commits []string) (map[string]string, error) {
	rn := worktreeRunner()
	git := func(args ...string) (string, error) { return rn.run(ctx, call{dir: dir, args: args}) }
	if ref == "" || strings.HasPrefix(ref, "-") {
		return nil, nil
	}
	if _, err := git("rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
		return nil, nil // no such branch here: nothing of it is reverted
	}
	out, err := git("log", "-F", "--grep=This reverts commit", "--format=%H%x1f%B%x1e", ref, "--")
	if err != nil {
		return nil, err
	}
	targets := map[string]string{} // reverted commit → revert
	for _, rec := range strings.Split(out, "\x1e") {
		sha, body, ok := strings.Cut(strings.TrimSpace(rec), "\x1f")
		if !ok {
			continue
		}
		for _, m := range revertLine.FindAllStringSubmatch(body, -1) {
			full, err := git("rev-parse", "--verify", "--quiet", m[1]+"^{commit}")
			if err != nil {
				continue // names a commit this clone does not have
			}
			targets[strings.TrimSpace(full)] = sha
		}
	}
	for t, r := range targets {
		if _, again := targets[r]; again {
			delete(targets, t) // its revert was reverted
		}
	}
	want := map[string]bool{}
	for _, c := range commits {
		want[c] = true
	}
	found := map[string]string{}
	for t, r := range targets {
		if want[t] {
			found[t] = r
		}
		parents, err := git("rev-list", "--parents", "-n", "1", t)
		if err != nil || len(strings.Fields(parents)) < 3 {
			continue // not a merge
		}
		in, err := git("rev-list", t+"^1.."+t)
		if err != nil {
			return nil, err
		}
		for _, c := range strings.Fields(in) {
			if want[c] {
				found[c] = r
			}
		}
	}
	return found, nil
}
