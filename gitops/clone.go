package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CloneOptions configure Clone.
type CloneOptions struct {
	Options
	// Branch is the branch to clone and check out.
	Branch string
	// Depth, when positive, makes a shallow clone of that many commits
	// (ignored for a plain path origin, which git copies locally anyway).
	Depth int
}

// Clone clones url's Branch into dir and returns the clone. A dir that is
// already a clone (a restarted container keeps its emptyDir) is opened,
// not cloned again, so a retry after a crash does no harm. The URL goes to
// git after "--" and never into an error: it may carry credentials.
func Clone(ctx context.Context, url, dir string, o CloneOptions) (*Repo, error) {
	if url == "" || strings.HasPrefix(url, "-") {
		return nil, fmt.Errorf("clone into %s: invalid origin URL", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return Open(ctx, dir, o.Options)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if err := preCheckName(o.Branch); err != nil {
		return nil, fmt.Errorf("clone into %s: %w", dir, err)
	}
	args := []string{"clone", "-q", "--no-tags", "--single-branch", "--branch", o.Branch}
	if o.Depth > 0 && !isLocalPath(url) {
		args = append(args, "--depth", strconv.Itoa(o.Depth))
	}
	// A half-made clone (killed mid-transfer) is emptied first: git
	// refuses a non-empty target. The directory itself stays: in a pod
	// it is a volume's mount point.
	if err := emptyDir(dir); err != nil {
		return nil, fmt.Errorf("clone into %s: %w", dir, err)
	}
	// The clone's own home does not exist yet: this call gets one of its
	// own, as hardened, removed after.
	secrets := secretNames(o.Options)
	entries, err := userConfig(ctx, filepath.Dir(dir), secrets, timeout)
	if err != nil {
		return nil, fmt.Errorf("clone into %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp("", "wave-clone-")
	if err != nil {
		return nil, fmt.Errorf("clone into %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	h, err := makeHome(tmp, entries)
	if err != nil {
		return nil, fmt.Errorf("clone into %s: %w", dir, err)
	}
	rn := homeRunner(h, o.Env, secrets, timeout)
	rn.secrets = credentials(rn.secrets, o.Options)
	if _, err := rn.run(ctx, call{dir: filepath.Dir(dir), args: append(args, "--", url, dir), net: true}); err != nil {
		var ge *Error
		if errors.As(err, &ge) {
			ge.Args = append(args, "--", "<origin>", dir)
		}
		return nil, fmt.Errorf("clone %s into %s: %w", sanitize(o.Branch), dir, err)
	}
	return Open(ctx, dir, o.Options)
}

// emptyDir makes dir an empty directory, removing what is in it.
func emptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// isLocalPath reports an origin git reaches through the file system.
func isLocalPath(url string) bool {
	return strings.HasPrefix(url, "/") || strings.HasPrefix(url, ".") || strings.HasPrefix(url, "file://")
}

// CredentialEnv is the environment (Options.Env) that makes git answer
// credential requests from the files username and password in dir — a
// mounted kubernetes.io/basic-auth Secret — and from nothing else: no
// helper of the user's or the system's, no prompt. The secret goes from
// the files to git's helper pipe only; it is never in argv or env.
func CredentialEnv(dir string) ([]string, error) {
	if !filepath.IsAbs(dir) || strings.ContainsAny(dir, "'\n\\") {
		return nil, fmt.Errorf("git credentials directory %q: want an absolute path without quotes", dir)
	}
	// git runs a helper starting with "!" through the shell; the only
	// text in it is ours, and the directory is single-quoted.
	helper := `!f() { test "$1" = get || exit 0; printf 'username=%s\npassword=%s\n' "$(cat '` + dir + `/username')" "$(cat '` + dir + `/password')"; }; f`
	return []string{
		"GIT_CONFIG_COUNT=2",
		// The empty value clears the helpers configured so far.
		"GIT_CONFIG_KEY_0=credential.helper", "GIT_CONFIG_VALUE_0=",
		"GIT_CONFIG_KEY_1=credential.helper", "GIT_CONFIG_VALUE_1=" + helper,
	}, nil
}
