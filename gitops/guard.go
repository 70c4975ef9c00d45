package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The wave branch on the remote moves only by the supervisor's own
// pushes, each recorded in its run's log before the next: a commit found
// there that the run did not put there (a worker that pushed past the
// gate, a person, another tool) is never merged on top of, built on or
// carried silently. Every operation that reads the remote's wave branch
// to write on it takes the tip the caller last recorded (Expect) and
// fails with a ForeignCommitError when the remote holds anything else —
// except the commit this clone prepared and recorded in its intent ref
// (pendingRef) on top of that tip, which is its own push that a crash
// kept out of the caller's record.

// ForeignCommitError: the remote's branch is not where its last recorded
// push left it.
type ForeignCommitError struct {
	Branch   string
	Expected string // the tip the caller recorded
	Found    string // the remote's tip; "" when the branch is gone
}

func (e *ForeignCommitError) Error() string {
	if e.Found == "" {
		return fmt.Sprintf("%s is gone from the remote (the run last pushed %s): it was deleted by someone else", sanitize(e.Branch), short(e.Expected))
	}
	return fmt.Sprintf("%s on the remote is at %s, a commit this run did not make (it last pushed %s)", sanitize(e.Branch), short(e.Found), short(e.Expected))
}

// IsForeignCommit reports a ForeignCommitError in err's chain.
func IsForeignCommit(err error) (*ForeignCommitError, bool) {
	var fe *ForeignCommitError
	ok := errors.As(err, &fe)
	return fe, ok
}

// ours: found is expect, or the commit the intent ref holds for branch
// when its first parent is expect (prepared, recorded, then pushed).
// expect "" checks nothing (a run whose log predates the record).
func ours(expect, found, pending string, pendingParents []string) bool {
	if expect == "" || found == expect {
		return true
	}
	return found != "" && found == pending && len(pendingParents) > 0 && pendingParents[0] == expect
}

// CheckTip fetches branch and returns the remote's tip, or a
// ForeignCommitError when it is neither expect nor this clone's own
// prepared push on top of it. expect "" only fetches.
func (r *Repo) CheckTip(ctx context.Context, branch, expect string) (string, error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", err
	}
	found, there, err := r.RemoteHead(ctx, branch)
	if err != nil {
		return "", err
	}
	if there {
		if have, _, _ := r.localRef(ctx, r.tracking(branch)); have != found {
			if err := r.fetchBranches(ctx, branch); err != nil {
				return "", err
			}
		}
	}
	pending, parents, err := r.pending(ctx, branch)
	if err != nil {
		return "", err
	}
	if !ours(expect, found, pending, parents) {
		return found, &ForeignCommitError{Branch: branch, Expected: expect, Found: found}
	}
	return found, nil
}

// pending is the intent ref of branch and its parents ("" when absent).
func (r *Repo) pending(ctx context.Context, branch string) (string, []string, error) {
	out, err := r.git(ctx, r.Dir, "for-each-ref", "--format=%(objectname) %(parent)", pendingRef(branch))
	if err != nil {
		return "", nil, fmt.Errorf("read the intent ref of %s: %w", sanitize(branch), err)
	}
	f := strings.Fields(firstLine(out))
	if len(f) == 0 {
		return "", nil, nil
	}
	return f[0], f[1:], nil
}

// FirstParents lists the commits on tip's first-parent line not
// reachable from stop ("" = none), newest first, each with its parents
// and subject: the merges the supervisor made on the wave branch are
// there, one per worker.
func (r *Repo) FirstParents(ctx context.Context, tip, stop string) ([]Commit, error) {
	if !isHex(tip) || (stop != "" && strings.HasPrefix(stop, "-")) {
		return nil, fmt.Errorf("first parents: invalid range %q..%q", stop, tip)
	}
	args := []string{"log", "--first-parent", "--format=%H%x00%P%x00%s", tip}
	if stop != "" {
		args = append(args, "^"+stop)
	}
	out, err := r.git(ctx, r.Dir, append(args, "--")...)
	if err != nil {
		return nil, fmt.Errorf("first parents of %s: %w", short(tip), err)
	}
	var list []Commit
	for _, l := range strings.Split(out, "\n") {
		f := strings.SplitN(l, "\x00", 3)
		if len(f) == 3 {
			list = append(list, Commit{SHA: f[0], Parents: strings.Fields(f[1]), Subject: f[2]})
		}
	}
	return list, nil
}

// Commit is a commit's id, parents and subject line.
type Commit struct {
	SHA     string
	Parents []string
	Subject string
}
