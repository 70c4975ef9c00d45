package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// LocalOptions configures NewLocal.
type LocalOptions struct {
	Dir      string // issues: <Dir>/<n>-<slug>.md (front matter title, labels, state, priority, created; body below)
	StateDir string // mutable overlay kept out of Dir: labels added/removed, comments, closed, PRs
	Base     string // DefaultBranch answer
	Now      func() time.Time
}

// localAuthor is who the local source says wrote its comments.
const localAuthor = "wave-orchestrator"

// Local is the Source for a backlog kept as markdown files. It reads the
// issue files and never writes them: every change goes to an overlay
// under StateDir, written atomically and under a file lock, so two
// processes sharing it do not lose each other's writes.
type Local struct {
	dir, state, base string
	now              func() time.Time
	mu               sync.Mutex
}

var _ Source = (*Local)(nil)

// NewLocal returns a local source over o.Dir, which must exist.
func NewLocal(o LocalOptions) (*Local, error) {
	if o.Dir == "" || o.StateDir == "" {
		return nil, errors.New("local backlog: Dir and StateDir are required")
	}
	st, err := os.Stat(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("local backlog: issue dir: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("local backlog: issue dir %s is not a directory", o.Dir)
	}
	dir, err1 := filepath.Abs(o.Dir)
	state, err2 := filepath.Abs(o.StateDir)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("local backlog: %w", err)
	}
	if rel, err := filepath.Rel(dir, state); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
		return nil, fmt.Errorf("local backlog: state dir %s must be outside the issue dir %s", state, dir)
	}
	l := &Local{dir: dir, state: state, base: o.Base, now: o.Now}
	if l.now == nil {
		l.now = time.Now
	}
	return l, nil
}

// Kind is "local".
func (l *Local) Kind() string { return KindLocal }

// Calls is always 0: the local source makes no API calls.
func (l *Local) Calls() int64 { return 0 }

// DefaultBranch is LocalOptions.Base.
func (l *Local) DefaultBranch(context.Context) (string, error) {
	if l.base == "" {
		return "", errors.New("local backlog: no default branch configured")
	}
	return l.base, nil
}

// ListOpen returns the open issues carrying every label, by number. Files
// that cannot be read are reported in a *BadIssueFiles error returned
// together with the issues that could.
func (l *Local) ListOpen(ctx context.Context, labels []string) ([]backlog.Issue, error) {
	files, bad, err := l.scan()
	if err != nil {
		return nil, err
	}
	labels = cleanLabels(labels)
	var out []backlog.Issue
	for _, n := range sortedKeys(files) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		is, err := l.read(n, files[n])
		if err != nil {
			var b BadIssueFile
			if !errors.As(err, &b) {
				return nil, err
			}
			bad = append(bad, b)
			continue
		}
		if is.State == "open" && hasAll(is.Labels, labels) {
			out = append(out, is)
		}
	}
	if len(bad) > 0 {
		slices.SortFunc(bad, func(a, b BadIssueFile) int { return strings.Compare(a.Path, b.Path) })
		return out, &BadIssueFiles{Files: bad}
	}
	return out, nil
}

// Get returns issue n with its comments.
func (l *Local) Get(ctx context.Context, n int) (backlog.Issue, error) {
	path, err := l.find(n)
	if err != nil {
		return backlog.Issue{}, err
	}
	is, err := l.read(n, path)
	if err != nil {
		return backlog.Issue{}, err
	}
	if is.Comments, err = l.comments(n); err != nil {
		return backlog.Issue{}, err
	}
	return is, nil
}

// scan maps issue numbers to files; a number used by two files is bad in
// the second (by name order).
func (l *Local) scan() (map[int]string, []BadIssueFile, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("local backlog: read %s: %w", l.dir, err)
	}
	files := map[int]string{}
	var bad []BadIssueFile
	for _, e := range entries {
		n, ok := issueNumber(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		path := filepath.Join(l.dir, e.Name())
		if prev, dup := files[n]; dup {
			bad = append(bad, BadIssueFile{Path: path,
				Err: fmt.Errorf("issue number %d is also used by %s", n, filepath.Base(prev))})
			continue
		}
		files[n] = path
	}
	return files, bad, nil
}

func (l *Local) find(n int) (string, error) {
	files, _, err := l.scan()
	if err != nil {
		return "", err
	}
	path, ok := files[n]
	if !ok {
		return "", fmt.Errorf("local backlog: issue #%d (no %d-*.md in %s): %w", n, n, l.dir, ErrNotFound)
	}
	return path, nil
}

// read parses one issue file and lays its overlay over it. A malformed
// file is a BadIssueFile.
func (l *Local) read(n int, path string) (backlog.Issue, error) {
	f, fi, err := l.readFile(path)
	if err != nil {
		return backlog.Issue{}, err
	}
	ov, err := l.overlay(n)
	if err != nil {
		// A damaged overlay hides only its own issue, like a bad file.
		return backlog.Issue{}, BadIssueFile{Path: l.overlayPath(n), Err: err}
	}
	is := backlog.Issue{Number: n, Title: f.Title, Body: f.Body, URL: path, CreatedAt: f.Created}
	if is.CreatedAt.IsZero() {
		is.CreatedAt = fi.ModTime()
	}
	is.Labels, is.State = ov.apply(f.Labels, f.State)
	return is, nil
}

func (l *Local) readFile(path string) (issueFile, fs.FileInfo, error) {
	data, fi, err := readRegular(path)
	if err != nil {
		return issueFile{}, nil, BadIssueFile{Path: path, Err: err}
	}
	f, err := parseIssueFile(data)
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return issueFile{}, nil, BadIssueFile{Path: path, Line: le.Line, Err: le.Err}
		}
		return issueFile{}, nil, BadIssueFile{Path: path, Err: err}
	}
	return f, fi, nil
}

// errIssueLink is an issue file that is a symbolic link.
var errIssueLink = errors.New("is a symbolic link, and issue files are read only as regular files: " +
	"a link could make any file you can read (~/.ssh, another project) a worker's prompt; " +
	"replace the link with a copy of the file it points to")

// readRegular reads path and its file info without following a symbolic
// link at its end (the check and the read are one open, so the file
// cannot be swapped for a link in between), refusing anything but a
// regular file (a fifo would block the read).
func readRegular(path string) ([]byte, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, errIssueLink
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("is not a regular file (%s); an issue file must be a plain Markdown file", fi.Mode().Type())
	}
	data, err := io.ReadAll(f)
	return data, fi, err
}

func (l *Local) overlayPath(n int) string { return filepath.Join(l.state, fmt.Sprintf("%d.json", n)) }
func (l *Local) commentsPath(n int) string {
	return filepath.Join(l.state, fmt.Sprintf("%d.comments.md", n))
}

func (l *Local) overlay(n int) (overlay, error) {
	var ov overlay
	data, err := os.ReadFile(l.overlayPath(n))
	if errors.Is(err, fs.ErrNotExist) {
		return ov, nil
	}
	if err != nil {
		return ov, fmt.Errorf("local backlog: %w", err)
	}
	if err := json.Unmarshal(data, &ov); err != nil {
		return ov, fmt.Errorf("local backlog: overlay of issue #%d is not valid JSON: %w", n, err)
	}
	return ov, nil
}

func (l *Local) writeOverlay(n int, ov overlay) error {
	data, err := json.MarshalIndent(ov, "", "  ")
	if err != nil {
		return fmt.Errorf("local backlog: encode overlay of #%d: %w", n, err)
	}
	if err := jsonfile.WriteFileAtomic(l.overlayPath(n), append(data, '\n'), localFileMode); err != nil {
		return fmt.Errorf("local backlog: %w", err)
	}
	return nil
}

func (l *Local) comments(n int) ([]backlog.Comment, error) {
	path := l.commentsPath(n)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []backlog.Comment{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("local backlog: %w", err)
	}
	cs, err := parseComments(data)
	if err != nil {
		return nil, fmt.Errorf("local backlog: comments file %s: %w", path, err)
	}
	return cs, nil
}

// locked runs fn holding the in-process mutex and the state dir's file
// lock, so each write's read-check-write is atomic across processes.
func (l *Local) locked(ctx context.Context, fn func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := jsonfile.MkdirAll(l.state); err != nil {
		return fmt.Errorf("local backlog: state dir: %w", err)
	}
	fl := flock.New(filepath.Join(l.state, ".lock"))
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		return fmt.Errorf("local backlog: lock %s: %w", fl.Path(), errors.Join(err, ctx.Err()))
	}
	defer fl.Unlock()
	return fn()
}

func sortedKeys(m map[int]string) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
