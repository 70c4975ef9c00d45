package gitops

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// DefaultSlugMax is BranchSlug's length cap when max <= 0.
const DefaultSlugMax = 40

// BranchSlug turns issue text into a branch-name fragment: lower-case ASCII
// letters and digits separated by single dashes, at most max bytes, never
// empty ("issue"). Everything else — shell metacharacters, dots, slashes,
// non-ASCII letters — becomes a separator, so the result is always a valid
// ref component.
func BranchSlug(s string, max int) string {
	if max <= 0 {
		max = DefaultSlugMax
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
		if b.Len() >= max {
			break
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > max {
		out = strings.TrimRight(out[:max], "-")
	}
	if out == "" {
		return "issue"
	}
	return out
}

// CheckRefFormat validates a branch name with git check-ref-format --branch
// (plus what that command lets through but we never want: a leading dash,
// which argv would read as an option, and the @{-N} shorthand).
func CheckRefFormat(ctx context.Context, name string) error {
	if err := preCheckName(name); err != nil {
		return err
	}
	if _, err := bootstrapRunner(nil, secretEnv, nil, 30*time.Second).run(ctx, call{dir: os.TempDir(), args: []string{"check-ref-format", "--branch", name}}); err != nil {
		return fmt.Errorf("invalid branch name %q: %w", name, err)
	}
	return nil
}

// checkFullRef validates a full ref name (refs/...) such as a snapshot ref.
func (r *Repo) checkFullRef(ctx context.Context, ref string) error {
	if err := preCheckName(ref); err != nil {
		return err
	}
	if !strings.HasPrefix(ref, "refs/") {
		return fmt.Errorf("invalid ref %q: must start with refs/", ref)
	}
	if _, err := r.git(ctx, r.Dir, "check-ref-format", ref); err != nil {
		return fmt.Errorf("invalid ref %q: %w", ref, err)
	}
	return nil
}

// checkBranch is CheckRefFormat counted against this Repo.
func (r *Repo) checkBranch(ctx context.Context, name string) error {
	if err := preCheckName(name); err != nil {
		return err
	}
	if _, ok := r.branchOK.Load(name); ok {
		return nil
	}
	if _, err := r.git(ctx, r.Dir, "check-ref-format", "--branch", name); err != nil {
		return fmt.Errorf("invalid branch name %q: %w", name, err)
	}
	r.branchOK.Store(name, true)
	return nil
}

func preCheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("invalid branch name: empty")
	case strings.HasPrefix(name, "-"):
		return fmt.Errorf("invalid branch name %q: starts with '-'", name)
	case strings.Contains(name, "@{"):
		return fmt.Errorf("invalid branch name %q: contains '@{'", name)
	case strings.ContainsFunc(name, isControl):
		return fmt.Errorf("invalid branch name %q: contains a control character", name)
	}
	return nil
}
