package gitops

import (
	"errors"
	"strings"
	"syscall"
)

// A transient failure is one that may pass by itself: the remote
// unreachable or its connection dropped, the disk full, a hook on the
// remote refusing pushes for a while, another git process holding a lock.
// The supervisor waits those out; anything else (a refused permission, a
// revoked credential, a malformed ref) is permanent. The classification
// lives here, beside the code that runs git and reads its stderr, so no
// caller matches git's words itself.

// Causes of transient failures, in the words the supervisor shows.
const (
	CauseUnreachable = "origin unreachable"
	CauseDropped     = "connection to origin dropped"
	CauseServer      = "origin answered with a server error"
	CauseDiskFull    = "no space left on device"
	CauseWrite       = "could not write to disk"
	CauseHook        = "origin's hook refused the push"
	CauseLocked      = "another git process holds a lock"
	CauseTimeout     = "git timed out"
)

// TransientCause reports, in words, why err may pass by itself: ok is
// false for a permanent failure (or one that is not git's).
func TransientCause(err error) (string, bool) {
	var ge *Error
	if errors.As(err, &ge) && ge.Transient != "" {
		return ge.Transient, true
	}
	return "", false
}

// TransientText classifies git's output text (a worker's log, where the
// worker ran git itself): the cause in words, "" when nothing in text
// says the environment failed.
func TransientText(text string) string { return classifyStderr(text, "") }

// permanentSigns are the words of a refused permission or a rejected
// credential: never waited out, even when the same stderr also says the
// remote could not be read.
var permanentSigns = []string{
	"permission denied", "authentication failed", "could not read username", "could not read password",
	"invalid username or password", "returned error: 401", "returned error: 403", "access denied",
	"repository not found", "403 forbidden", "401 unauthorized", "host key verification failed",
}

// transientSigns map git's (and ssh's, curl's) words to a cause; the first
// match wins, so the more specific come first.
var transientSigns = []struct {
	sign, cause string
}{
	{"no space left on device", CauseDiskFull},
	{"disk quota exceeded", CauseDiskFull},
	{"couldn't write '", CauseWrite},
	{"unable to write", CauseWrite},
	{"failed to write", CauseWrite},
	{"short write", CauseWrite},
	{"write error", CauseWrite},
	{"returned error: 5", CauseServer},
	{"could not resolve host", CauseUnreachable},
	{"temporary failure in name resolution", CauseUnreachable},
	{"connection refused", CauseUnreachable},
	{"connection timed out", CauseUnreachable},
	{"operation timed out", CauseUnreachable},
	{"network is unreachable", CauseUnreachable},
	{"no route to host", CauseUnreachable},
	{"failed to connect", CauseUnreachable},
	{"does not appear to be a git repository", CauseUnreachable},
	{"could not read from remote repository", CauseUnreachable},
	{"unable to access '", CauseUnreachable},
	{"the remote end hung up", CauseDropped},
	{"early eof", CauseDropped},
	{"rpc failed", CauseDropped},
	{"connection reset", CauseDropped},
	{"broken pipe", CauseDropped},
	{"unexpected disconnect", CauseDropped},
	{"transfer closed", CauseDropped},
	{"hook declined", CauseHook},
	{"unpacker error", CauseDiskFull},
	{".lock': file exists", CauseLocked},
}

// classifyStderr is the cause of a failure whose stderr is text, "" when
// it is permanent. dir, when set, is where git ran: a failed write there
// with (almost) no space left is called what it is.
func classifyStderr(text, dir string) string {
	low := strings.ToLower(text)
	for _, p := range permanentSigns {
		if strings.Contains(low, p) {
			return ""
		}
	}
	for _, s := range transientSigns {
		if !strings.Contains(low, s.sign) {
			continue
		}
		if s.cause == CauseWrite && dir != "" && lowOnSpace(dir) {
			return CauseDiskFull
		}
		return s.cause
	}
	return ""
}

// lowOnSpace: the filesystem holding dir has less than 1 MiB or no inode
// free for us, which is what a write failing there most likely means.
func lowOnSpace(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return uint64(st.Bavail)*uint64(st.Bsize) < 1<<20 || (st.Files > 0 && st.Ffree == 0)
}

// hookRefusal reports whether a push's rejection summary is the remote's
// hook (or its disk) refusing the update, not a lease or fast-forward
// answer: "[remote rejected] (pre-receive hook declined)". Such a refusal
// says nothing about who holds the ref, so it must not read as a lost
// compare-and-swap.
func hookRefusal(summary string) string {
	if !strings.HasPrefix(summary, "[remote rejected]") {
		return ""
	}
	switch low := strings.ToLower(summary); {
	case strings.Contains(low, "hook declined"):
		return CauseHook
	case strings.Contains(low, "unpacker error"), strings.Contains(low, "no space"):
		return CauseDiskFull
	}
	return ""
}
