package forge_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
)

// An issue file that is a symbolic link (to a file outside the
// repository) or a fifo is refused, named with why and the fix; its
// target's text never becomes an issue, and the other issues still list.
func TestASymlinkedIssueFileIsRefused(t *testing.T) {
	l, dir, _ := newLocal(t)
	writeIssue(t, dir, "1-good.md", map[string]any{"title": "good"}, "")
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(secret, []byte("---\ntitle: PRIVATE KEY\n---\n-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "2-link.md")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "3-fifo.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	type listed struct {
		issues []backlog.Issue
		err    error
	}
	done := make(chan listed, 1)
	go func() { is, err := l.ListOpen(t.Context(), nil); done <- listed{is, err} }()
	var issues []backlog.Issue
	var err error
	select {
	case got := <-done:
		issues, err = got.issues, got.err
	case <-time.After(30 * time.Second):
		t.Fatal("ListOpen blocked on the fifo")
	}
	if !slices.Equal(numbers(issues), []int{1}) {
		t.Errorf("ListOpen = %v, want only the regular file's issue [1]", numbers(issues))
	}
	for _, is := range issues {
		if strings.Contains(is.Title+is.Body, "PRIVATE KEY") {
			t.Fatalf("the link's target became issue #%d", is.Number)
		}
	}
	var bf *forge.BadIssueFiles
	if !errors.As(err, &bf) || len(bf.Files) != 2 {
		t.Fatalf("err = %v, want *BadIssueFiles for the link and the fifo", err)
	}
	for _, want := range []string{link + ": is a symbolic link", "replace the link with a copy of the file", fifo + ": is not a regular file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %q", err, want)
		}
	}
	if is, err := l.Get(t.Context(), 2); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Get(2) = %+v, %v; want the link refused", is, err)
	}
}
