package gitops

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestClassifyStderrNamesTheCauseOrCallsItPermanent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stderr, want string
	}{
		{"fatal: '/tmp/o.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights", CauseUnreachable},
		{"fatal: unable to access 'https://github.com/a/b.git/': Could not resolve host: github.com", CauseUnreachable},
		{"ssh: connect to host github.com port 22: Connection refused", CauseUnreachable},
		{"error: RPC failed; curl 56 GnuTLS recv error (-54): Error in the pull function.\nfatal: early EOF", CauseDropped},
		{"fatal: the remote end hung up unexpectedly", CauseDropped},
		{"fatal: unable to access 'https://x/': The requested URL returned error: 503", CauseServer},
		{"error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502", CauseServer},
		{"fatal: update_ref failed for ref 'refs/wave/salvage/1/a1': couldn't write '/r/.git/refs/wave/salvage/1/a1.lock'", CauseWrite},
		{"error: unable to create temporary file: No space left on device", CauseDiskFull},
		{"fatal: Unable to create '/r/.git/index.lock': File exists.", CauseLocked},
		// Refused permissions and credentials are never waited out.
		{"git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.", ""},
		{"remote: Invalid username or password.\nfatal: Authentication failed for 'https://github.com/a/b.git/'", ""},
		{"fatal: unable to access 'https://github.com/a/b.git/': The requested URL returned error: 403", ""},
		{"remote: Repository not found.\nfatal: repository 'https://github.com/a/b.git/' not found", ""},
		{"fatal: could not read Username for 'https://github.com': terminal prompts disabled", ""},
		// Everything else is permanent.
		{"fatal: bad revision 'nope'", ""},
		{"", ""},
	} {
		if got := classifyStderr(tc.stderr, ""); got != tc.want {
			t.Errorf("classify(%q) = %q, want %q", tc.stderr, got, tc.want)
		}
	}
}

func TestHookRefusalIsNotALostLease(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ summary, want string }{
		{"[remote rejected] (pre-receive hook declined)", CauseHook},
		{"[remote rejected] (protected branch hook declined)", CauseHook},
		{"[remote rejected] (unpacker error)", CauseDiskFull},
		{"[rejected] (stale info)", ""},
		{"[rejected] (non-fast-forward)", ""},
		{"[remote rejected] (failed to update ref)", ""},
	} {
		if got := hookRefusal(tc.summary); got != tc.want {
			t.Errorf("hookRefusal(%q) = %q, want %q", tc.summary, got, tc.want)
		}
	}
}

// TestOriginMovedAwayIsTransient: with the bare origin renamed away, a
// fetch, an ls-remote and a claim all fail with "origin unreachable", and
// work again once it is back.
func TestOriginMovedAwayIsTransient(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	ctx := ctxT(t)
	away := origin + ".away"
	if err := os.Rename(origin, away); err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{"fetch": r.Fetch(ctx)}
	_, _, checks["ls-remote"] = r.RemoteHead(ctx, "main")
	_, _, checks["claim"] = r.Claim(ctx, ClaimInfo{Issue: 3, RunID: "run-a", Host: "h", PID: 1, Lease: time.Now().Add(time.Hour)})
	for what, err := range checks {
		if cause, ok := TransientCause(err); !ok || cause != CauseUnreachable {
			t.Errorf("%s with origin gone: cause %q (transient %v), want %q; err %v", what, cause, ok, CauseUnreachable, err)
		}
	}
	if err := os.Rename(away, origin); err != nil {
		t.Fatal(err)
	}
	if err := r.Fetch(ctx); err != nil {
		t.Fatalf("fetch with origin back: %v", err)
	}
}

// TestHookDeclinedPushIsTransientNotALostClaim: a pre-receive hook that
// refuses every push makes a claim fail with a transient error naming
// the hook, never "claimed by someone else", and the merge push too.
func TestHookDeclinedPushIsTransientNotALostClaim(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	ctx := ctxT(t)
	hook := filepath.Join(origin, "hooks", "pre-receive")
	writeFile(t, hook, "#!/bin/sh\necho 'maintenance: pushes refused' >&2\nexit 1\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	won, _, err := r.Claim(ctx, ClaimInfo{Issue: 4, RunID: "run-a", Host: "h", PID: 1, Lease: time.Now().Add(time.Hour)})
	if cause, ok := TransientCause(err); won || !ok || cause != CauseHook {
		t.Fatalf("claim under a refusing hook: won %v, cause %q (transient %v), err %v; want a transient %q", won, cause, ok, err, CauseHook)
	}
	if errors.Is(err, ErrRejected) {
		t.Errorf("a hook refusal reads as a rejected lease: %v", err)
	}
	if err := r.Push(ctx, "refs/remotes/origin/main", "other"); err == nil {
		t.Fatal("push under a refusing hook succeeded")
	} else if cause, _ := TransientCause(err); cause != CauseHook {
		t.Errorf("push under a refusing hook: cause %q, err %v", cause, err)
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	if won, _, err := r.Claim(ctx, ClaimInfo{Issue: 4, RunID: "run-a", Host: "h", PID: 1, Lease: time.Now().Add(time.Hour)}); err != nil || !won {
		t.Fatalf("claim with the hook gone: won %v, %v", won, err)
	}
}
