// Package forge owns every conversation with an issue tracker: reading
// issues and comments, writing labels, comments, pull requests and issue
// closes, for GitHub (through go-github) and for a local markdown backlog,
// and, on GitHub, reading a commit's CI checks and the checks a branch
// requires. Every write is idempotent, so a supervisor that crashed or lost
// a response can repeat it without duplicating anything; every repeated
// GitHub read is a conditional request (conditional.go). It is the only
// package that imports go-github.
package forge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// ErrNotFound is wrapped by errors for an issue (or pull request) the
// tracker does not have.
var ErrNotFound = errors.New("not found")

// PR is a pull request as the supervisor needs it. State is "open" or
// "closed"; Merged tells a merged closed PR from an abandoned one.
type PR struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	Head   string `json:"head"`
	Base   string `json:"base"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"`
	Merged bool   `json:"merged"`
}

// Source is what the supervisor uses. Every write is idempotent: calling
// it again after a crash (or after a response was lost) does not duplicate
// anything.
type Source interface {
	Kind() string // "github" | "local"
	// ListOpen returns open issues (pull requests dropped) carrying every
	// label in labels, across all pages. The local source may return issues
	// together with a *BadIssueFiles error for the files it could not read.
	ListOpen(ctx context.Context, labels []string) ([]backlog.Issue, error)
	Get(ctx context.Context, n int) (backlog.Issue, error) // with Comments; ErrNotFound
	AddLabel(ctx context.Context, n int, label string) error
	RemoveLabel(ctx context.Context, n int, label string) error // absent → nil
	// EnsureComment posts body (which must end with marker) unless a
	// comment of the source's own identity (the token's login; the local
	// store's writer) on n already ends with marker; returns the existing
	// or new comment. A marker in anyone else's comment never counts.
	EnsureComment(ctx context.Context, n int, marker, body string) (backlog.Comment, error)
	// EnsurePR updates the open PR head→base if there is one, else creates it.
	EnsurePR(ctx context.Context, head, base, title, body string) (PR, error)
	FindPR(ctx context.Context, head, base string) (*PR, error) // any state; nil when none
	CloseIssue(ctx context.Context, n int) error                // already closed → nil
	// ClosePR closes the open pull request n after commenting body (which
	// must contain marker) on it once; a closed or merged one is left.
	ClosePR(ctx context.Context, n int, marker, body string) error
	DefaultBranch(ctx context.Context) (string, error)
	Calls() int64 // API calls made (local: 0)
}

// Kinds of Source.
const (
	KindGitHub = "github"
	KindLocal  = "local"
)

// BadIssueFile is one issue file the local source could not read.
type BadIssueFile struct {
	Path string // the file
	Line int    // 1-based line of the problem; 0 when it is about the whole file
	Err  error
}

func (b BadIssueFile) Error() string {
	if b.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", termtext.Escape(b.Path), b.Line, b.Err)
	}
	return fmt.Sprintf("%s: %v", termtext.Escape(b.Path), b.Err)
}

func (b BadIssueFile) Unwrap() error { return b.Err }

// BadIssueFiles is returned by the local source's ListOpen, alongside the
// issues it could read, when some issue files are malformed: one bad file
// must not hide the rest of the backlog. Callers print it as a warning
// and go on with the issues they got.
type BadIssueFiles struct {
	Files []BadIssueFile
}

func (e *BadIssueFiles) Error() string {
	parts := make([]string, len(e.Files))
	for i, f := range e.Files {
		parts[i] = f.Error()
	}
	noun := "files"
	if len(e.Files) == 1 {
		noun = "file"
	}
	return fmt.Sprintf("%d bad issue %s: %s", len(e.Files), noun, strings.Join(parts, "; "))
}

// Unwrap exposes each file's error to errors.Is / errors.As.
func (e *BadIssueFiles) Unwrap() []error {
	out := make([]error, len(e.Files))
	for i, f := range e.Files {
		out[i] = f
	}
	return out
}

// hasLabel reports whether labels holds label. GitHub compares label
// names without regard to case, and so do we, in both sources.
func hasLabel(labels []string, label string) bool {
	for _, l := range labels {
		if strings.EqualFold(l, label) {
			return true
		}
	}
	return false
}

// hasAll reports whether labels holds every one of want.
func hasAll(labels, want []string) bool {
	for _, w := range want {
		if !hasLabel(labels, w) {
			return false
		}
	}
	return true
}

func validMarker(marker, body string) error {
	if strings.TrimSpace(marker) == "" {
		return errors.New("empty marker")
	}
	if !endsWithMarker(body, marker) {
		return errors.New("comment body does not end with its marker")
	}
	return nil
}

// endsWithMarker: the marker is the last thing in body (trailing blanks
// aside), where the writer puts it; a marker quoted inside a comment's
// text is not that comment's.
func endsWithMarker(body, marker string) bool {
	return strings.HasSuffix(strings.TrimRight(body, " \t\r\n"), strings.TrimSpace(marker))
}

// findMarker is the first comment written by author (a login, compared as
// GitHub does, without regard to case) that ends with marker. Comments by
// anyone else never count, whatever they say.
func findMarker(comments []backlog.Comment, marker, author string) (backlog.Comment, bool) {
	for _, c := range comments {
		if author != "" && strings.EqualFold(c.Author, author) && endsWithMarker(c.Body, marker) {
			return c, true
		}
	}
	return backlog.Comment{}, false
}
