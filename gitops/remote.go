package gitops

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoRemote: the clone has no remote of the Repo's name. Backlog mode
// keeps its claims and the wave branch there, so nothing works without it.
var ErrNoRemote = errors.New("no such remote")

// CheckRemote reports ErrNoRemote when the clone has no remote named
// r.Remote (read from the config: no network).
func (r *Repo) CheckRemote(ctx context.Context) error {
	_, err := r.git(ctx, r.Dir, "config", "--get", "remote."+r.Remote+".url")
	switch {
	case err == nil:
		return nil
	case exitCode(err) == 1: // the key is not set
		return fmt.Errorf("remote %s: %w", r.Remote, ErrNoRemote)
	}
	return fmt.Errorf("remote %s: %w", r.Remote, err)
}

// Unpushed counts the commits on the local branch that the remote's copy
// of it (fetched first) lacks: work a wave cut from the remote leaves out.
// A missing local branch has none.
func (r *Repo) Unpushed(ctx context.Context, branch string) (int, error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return 0, err
	}
	if _, ok, err := r.localRef(ctx, "refs/heads/"+branch); err != nil || !ok {
		return 0, err
	}
	if err := r.fetchBranches(ctx, branch); err != nil {
		return 0, err
	}
	if _, ok, err := r.localRef(ctx, r.tracking(branch)); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%s has no branch %s", r.Remote, sanitize(branch))
		}
		return 0, err
	}
	out, err := r.line(ctx, "rev-list", "--count", r.tracking(branch)+"..refs/heads/"+branch)
	if err != nil {
		return 0, fmt.Errorf("unpushed commits on %s: %w", sanitize(branch), err)
	}
	n, err := strconv.Atoi(out)
	if err != nil {
		return 0, fmt.Errorf("unpushed commits on %s: %q: %w", sanitize(branch), out, err)
	}
	return n, nil
}

// RemoteURL is the remote's URL as the clone's config has it; a local
// path is made absolute (a pod or another process resolves it from
// elsewhere).
func (r *Repo) RemoteURL(ctx context.Context) (string, error) {
	url, err := r.line(ctx, "config", "--get", "remote."+r.Remote+".url")
	if err != nil {
		if exitCode(err) == 1 {
			return "", fmt.Errorf("remote %s: %w", r.Remote, ErrNoRemote)
		}
		return "", fmt.Errorf("remote %s: %w", r.Remote, err)
	}
	if !strings.Contains(url, "://") && !strings.Contains(url, ":") && !filepath.IsAbs(url) {
		url = filepath.Join(r.Dir, url)
	}
	return url, nil
}
