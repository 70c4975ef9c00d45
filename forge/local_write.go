package forge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// AddLabel adds label to issue n in the overlay; a label the issue has
// already changes nothing.
func (l *Local) AddLabel(ctx context.Context, n int, label string) error {
	return l.changeLabel(ctx, n, label, true)
}

// RemoveLabel removes label from issue n in the overlay; a label the issue
// does not have is not an error.
func (l *Local) RemoveLabel(ctx context.Context, n int, label string) error {
	return l.changeLabel(ctx, n, label, false)
}

func (l *Local) changeLabel(ctx context.Context, n int, label string, add bool) error {
	label = strings.TrimSpace(label)
	if label == "" {
		return fmt.Errorf("local backlog: label for issue #%d is empty", n)
	}
	return l.locked(ctx, func() error {
		path, err := l.find(n)
		if err != nil {
			return err
		}
		f, _, err := l.readFile(path)
		if err != nil {
			return err
		}
		ov, err := l.overlay(n)
		if err != nil {
			return err
		}
		changed := ov.withoutLabel(f.Labels, label)
		if add {
			changed = ov.withLabel(f.Labels, label)
		}
		if !changed {
			return nil
		}
		return l.writeOverlay(n, ov)
	})
}

// CloseIssue marks issue n closed in the overlay; an issue closed already
// (in its file or the overlay) changes nothing.
func (l *Local) CloseIssue(ctx context.Context, n int) error {
	return l.locked(ctx, func() error {
		path, err := l.find(n)
		if err != nil {
			return err
		}
		is, err := l.read(n, path)
		if err != nil {
			return err
		}
		if is.State == "closed" {
			return nil
		}
		ov, err := l.overlay(n)
		if err != nil {
			return err
		}
		now := l.now().UTC()
		ov.Closed, ov.ClosedAt = true, &now
		return l.writeOverlay(n, ov)
	})
}

// EnsureComment appends body to issue n's comments file unless a comment
// there that the supervisor wrote (author wave-orchestrator) already ends
// with marker.
func (l *Local) EnsureComment(ctx context.Context, n int, marker, body string) (backlog.Comment, error) {
	if err := validMarker(marker, body); err != nil {
		return backlog.Comment{}, fmt.Errorf("local backlog: comment on issue #%d: %w", n, err)
	}
	var out backlog.Comment
	err := l.locked(ctx, func() error {
		if _, err := l.find(n); err != nil {
			return err
		}
		cs, err := l.comments(n)
		if err != nil {
			return err
		}
		if c, ok := findMarker(cs, marker, localAuthor); ok {
			out = c
			return nil
		}
		out = backlog.Comment{ID: int64(len(cs) + 1), Body: body, Author: localAuthor, CreatedAt: l.now().UTC()}
		if err := jsonfile.WriteFileAtomic(l.commentsPath(n), formatComments(n, append(cs, out)), localFileMode); err != nil {
			return fmt.Errorf("local backlog: %w", err)
		}
		return nil
	})
	return out, err
}

// localFileMode is the mode of the files the local source writes under
// its state dir (overlays, comments, pull requests): its owner's only.
const localFileMode = 0o600

func (l *Local) prDir() string { return filepath.Join(l.state, "prs") }

// EnsurePR writes the "pull request" head→base: creates its file, or
// rewrites title and body when they changed.
func (l *Local) EnsurePR(ctx context.Context, head, base, title, body string) (PR, error) {
	if strings.TrimSpace(head) == "" || strings.TrimSpace(base) == "" {
		return PR{}, errors.New("local backlog: ensure PR: head and base are required")
	}
	var out PR
	err := l.locked(ctx, func() error {
		path := filepath.Join(l.prDir(), prFileName(head, base))
		p, oldBody, found, err := l.readPR(path, head, base)
		if err != nil {
			return err
		}
		now := l.now().UTC()
		if found && p.Title == title && oldBody == body {
			out = p.pr(path, body)
			return nil
		}
		if !found {
			num, err := l.nextPRNumber()
			if err != nil {
				return err
			}
			p = localPR{Number: num, Head: head, Base: base, State: "open", Created: now}
		}
		p.Title, p.Updated = title, now
		data, err := formatPR(p, body)
		if err != nil {
			return fmt.Errorf("local backlog: encode PR %s: %w", path, err)
		}
		if err := jsonfile.MkdirAll(l.prDir()); err != nil {
			return fmt.Errorf("local backlog: %w", err)
		}
		if err := jsonfile.WriteFileAtomic(path, data, localFileMode); err != nil {
			return fmt.Errorf("local backlog: %w", err)
		}
		out = p.pr(path, body)
		return nil
	})
	return out, err
}

// FindPR returns the "pull request" head→base, or nil.
func (l *Local) FindPR(ctx context.Context, head, base string) (*PR, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := filepath.Join(l.prDir(), prFileName(head, base))
	p, body, found, err := l.readPR(path, head, base)
	if err != nil || !found {
		return nil, err
	}
	pr := p.pr(path, body)
	return &pr, nil
}

func (l *Local) readPR(path, head, base string) (localPR, string, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return localPR{}, "", false, nil
	}
	if err != nil {
		return localPR{}, "", false, fmt.Errorf("local backlog: %w", err)
	}
	p, body, err := parsePR(data)
	if err != nil {
		return localPR{}, "", false, fmt.Errorf("local backlog: PR file %s: %w", path, err)
	}
	if p.Head != head || p.Base != base {
		return localPR{}, "", false, fmt.Errorf("local backlog: PR file %s holds %q → %q, not %q → %q (names sanitize alike)",
			path, p.Head, p.Base, head, base)
	}
	return p, body, true, nil
}

func (l *Local) nextPRNumber() (int, error) {
	entries, err := os.ReadDir(l.prDir())
	if errors.Is(err, fs.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("local backlog: %w", err)
	}
	top := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(l.prDir(), e.Name()))
		if err != nil {
			return 0, fmt.Errorf("local backlog: %w", err)
		}
		if p, _, err := parsePR(data); err == nil {
			top = max(top, p.Number)
		}
	}
	return top + 1, nil
}

func (p localPR) pr(path, body string) PR {
	return PR{Number: p.Number, URL: path, Head: p.Head, Base: p.Base, Title: p.Title, Body: body, State: p.State}
}
