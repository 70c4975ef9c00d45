package forge_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/wave-orchestrator/wave-orchestrator/forge"
)

// writeIssue writes an issue file whose front matter YAML-encodes every
// value, as a careful user's editor would, so hostile text survives.
func writeIssue(t *testing.T, dir, name string, front map[string]any, body string) string {
	t.Helper()
	y, err := yaml.Marshal(front)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("---\n"+string(y)+"---\n\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// treeHash fingerprints every file under dir (names and contents).
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s\x00%x\x00", p, sha256.Sum256(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func newLocal(t *testing.T) (*forge.Local, string, string) {
	t.Helper()
	root := t.TempDir()
	dir, state := filepath.Join(root, "docs", "backlog"), filepath.Join(root, ".wave", "backlog")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := forge.NewLocal(forge.LocalOptions{Dir: dir, StateDir: state, Base: "main",
		Now: func() time.Time { return time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return l, dir, state
}

func TestLocalRoundTripKeepsHostileTextVerbatim(t *testing.T) {
	l, dir, state := newLocal(t)
	ctx := t.Context()
	hostile := "Fix `rm -rf /`; $(curl evil) && ../../etc/passwd | \"quoted\" 'x' \x1b[31mred\x1b[0m\x07\t" + strings.Repeat("é", 300)
	body := "Files: internal/**\n\n$(whoami) `id` ; ../../../tmp\n<!-- wave-orchestrator:claim run=fake -->\n"
	writeIssue(t, dir, "3-fix.md", map[string]any{"title": hostile, "labels": []string{"bug", "area:api"},
		"priority": "high", "created": "2024-02-03"}, body)
	writeIssue(t, dir, "1-old.md", map[string]any{"title": "old one"}, "b1")
	writeIssue(t, dir, "2-done.md", map[string]any{"title": "done", "state": "closed"}, "")
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# not an issue\n"), 0o644)
	before := treeHash(t, dir)

	open, err := l.ListOpen(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(open); !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("ListOpen = %v, want [1 3]", got)
	}
	is, err := l.Get(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != hostile || is.Body != body || is.State != "open" ||
		!slices.Equal(is.Labels, []string{"bug", "area:api", "priority:high"}) ||
		!is.CreatedAt.Equal(time.Date(2024, 2, 3, 0, 0, 0, 0, time.UTC)) || is.URL != filepath.Join(dir, "3-fix.md") {
		t.Fatalf("Get(3) = %+v", is)
	}

	// Labels: file labels removed and overlay labels added, idempotently.
	for range 2 {
		must(t, l.AddLabel(ctx, 3, "wave:claimed"))
		must(t, l.RemoveLabel(ctx, 3, "bug"))
		must(t, l.RemoveLabel(ctx, 3, "never-there"))
	}
	if only, _ := l.ListOpen(ctx, []string{"wave:claimed", "area:api"}); !slices.Equal(numbers(only), []int{3}) {
		t.Errorf("ListOpen(wave:claimed, area:api) = %v", numbers(only))
	}
	if none, _ := l.ListOpen(ctx, []string{"bug"}); len(none) != 0 {
		t.Errorf("removed label still filters: %v", numbers(none))
	}

	// Comments: posted once, marker kept, readable in the state dir.
	marker := "<!-- wave-orchestrator:claim run=r1 -->"
	cbody := "Claimed.\n<!-- wave-orchestrator comment id=7 author=x created=2024-01-01T00:00:00Z bytes=1 -->\n" + hostile + "\n" + marker
	c1, err := l.EnsureComment(ctx, 3, marker, cbody)
	must(t, err)
	c2, err := l.EnsureComment(ctx, 3, marker, "other text "+marker)
	must(t, err)
	if c1.ID != c2.ID || c2.Body != cbody {
		t.Errorf("second EnsureComment = %+v, want the first %+v", c2, c1)
	}
	is, _ = l.Get(ctx, 3)
	if len(is.Comments) != 1 || is.Comments[0].Body != cbody {
		t.Errorf("comments = %+v, want the one, verbatim", is.Comments)
	}
	if raw, err := os.ReadFile(filepath.Join(state, "3.comments.md")); err != nil || !strings.Contains(string(raw), marker) {
		t.Errorf("comments file: %v, marker missing:\n%s", err, raw)
	}

	// PRs: one file per head/base, updated in place.
	head := "wave/2024-06-01-../../x"
	pr1, err := l.EnsurePR(ctx, head, "main", hostile, "Closes #3\n")
	must(t, err)
	pr2, err := l.EnsurePR(ctx, head, "main", hostile, "Closes #3\nCloses #1\n")
	must(t, err)
	other, err := l.EnsurePR(ctx, "wave/other", "main", "t", "b")
	must(t, err)
	found, err := l.FindPR(ctx, head, "main")
	must(t, err)
	if pr1.Number != pr2.Number || other.Number == pr1.Number || found == nil || found.Body != "Closes #3\nCloses #1\n" ||
		found.Title != hostile || found.Head != head {
		t.Errorf("PRs: first %+v second %+v other %+v found %+v", pr1, pr2, other, found)
	}
	if !strings.HasPrefix(found.URL, filepath.Join(state, "prs")+string(filepath.Separator)) {
		t.Errorf("PR file %s escaped %s/prs", found.URL, state)
	}
	if none, err := l.FindPR(ctx, "nope", "main"); none != nil || err != nil {
		t.Errorf("FindPR(nope) = %+v, %v", none, err)
	}

	// Close: idempotent, drops the issue from ListOpen.
	must(t, l.CloseIssue(ctx, 3))
	must(t, l.CloseIssue(ctx, 3))
	must(t, l.CloseIssue(ctx, 2))
	if open, _ := l.ListOpen(ctx, nil); !slices.Equal(numbers(open), []int{1}) {
		t.Errorf("after close ListOpen = %v, want [1]", numbers(open))
	}
	if after := treeHash(t, dir); after != before {
		t.Error("the issue files were modified")
	}
	if l.Calls() != 0 || l.Kind() != "local" {
		t.Errorf("Calls %d Kind %q", l.Calls(), l.Kind())
	}
	if b, err := l.DefaultBranch(ctx); b != "main" || err != nil {
		t.Errorf("DefaultBranch = %q, %v", b, err)
	}
}

func TestLocalBadFileIsNamedWithItsLineAndOthersStillList(t *testing.T) {
	l, dir, _ := newLocal(t)
	writeIssue(t, dir, "1-good.md", map[string]any{"title": "good"}, "")
	bad := filepath.Join(dir, "2-bad.md")
	os.WriteFile(bad, []byte("---\ntitle: bad\nlabels: [a]\nstate: finished\n---\nbody\n"), 0o644)
	writeIssue(t, dir, "3-good.md", map[string]any{"title": "also good"}, "")
	writeIssue(t, dir, "3-dup.md", map[string]any{"title": "same number"}, "")

	issues, err := l.ListOpen(t.Context(), nil)
	if !slices.Equal(numbers(issues), []int{1, 3}) {
		t.Errorf("ListOpen = %v, want the good issues [1 3]", numbers(issues))
	}
	var bf *forge.BadIssueFiles
	if !errors.As(err, &bf) || len(bf.Files) != 2 {
		t.Fatalf("err = %v, want *BadIssueFiles for the two bad files", err)
	}
	if want := bad + `:4: state must be open or closed, not "finished"`; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to contain %q", err, want)
	}
	if !strings.Contains(err.Error(), "3-good.md: issue number 3 is also used by 3-dup.md") {
		t.Errorf("err = %v, want the duplicate number named", err)
	}
	if _, err := l.Get(t.Context(), 2); err == nil || !strings.Contains(err.Error(), "2-bad.md:4:") {
		t.Errorf("Get(2) = %v, want the file and line", err)
	}
	if _, err := l.Get(t.Context(), 9); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("Get(9) = %v, want ErrNotFound", err)
	}
	if err := l.AddLabel(t.Context(), 9, "x"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("AddLabel(9) = %v, want ErrNotFound", err)
	}
}

func TestLocalPRNamesThatSanitizeAlikeAreRefused(t *testing.T) {
	l, _, _ := newLocal(t)
	_, err := l.EnsurePR(t.Context(), "a/b", "main", "t", "b")
	must(t, err)
	if _, err := l.EnsurePR(t.Context(), "a_b", "main", "t", "b"); err == nil || !strings.Contains(err.Error(), "sanitize alike") {
		t.Errorf("colliding PR name: err = %v, want a refusal", err)
	}
}

func TestNewLocalRefusesStateInsideIssueDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := forge.NewLocal(forge.LocalOptions{Dir: dir, StateDir: filepath.Join(dir, "state")}); err == nil {
		t.Error("a state dir inside the issue dir was accepted")
	}
	if _, err := forge.NewLocal(forge.LocalOptions{Dir: filepath.Join(dir, "missing"), StateDir: t.TempDir()}); err == nil {
		t.Error("a missing issue dir was accepted")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestLocalBadFileNameIsNotPrintedRaw(t *testing.T) {
	l, dir, _ := newLocal(t)
	os.WriteFile(filepath.Join(dir, "4-\x1b]0;owned\x07.md"), []byte("no front matter\n"), 0o644)
	_, err := l.ListOpen(t.Context(), nil)
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") || !strings.Contains(err.Error(), `\x1b]0;owned\x07.md`) {
		t.Errorf("err = %q, want the file named with its control characters escaped", err)
	}
}

func TestLocalDamagedOverlayHidesOnlyItsIssue(t *testing.T) {
	l, dir, state := newLocal(t)
	writeIssue(t, dir, "1-a.md", map[string]any{"title": "a"}, "")
	writeIssue(t, dir, "2-b.md", map[string]any{"title": "b"}, "")
	must(t, l.AddLabel(t.Context(), 2, "x"))
	os.WriteFile(filepath.Join(state, "2.json"), []byte("{torn"), 0o644)
	issues, err := l.ListOpen(t.Context(), nil)
	var bf *forge.BadIssueFiles
	if !slices.Equal(numbers(issues), []int{1}) || !errors.As(err, &bf) || !strings.Contains(err.Error(), "2.json") {
		t.Errorf("ListOpen = %v, %v; want [1] and the damaged overlay named", numbers(issues), err)
	}
}

// In the local source only comments the supervisor wrote to its store
// count: one by a person (an answer, a hand edit) carrying the marker, or
// a supervisor comment quoting it mid-text, does not stop the comment.
func TestLocalMarkerOnlyInOurOwnCommentsCounts(t *testing.T) {
	l, dir, state := newLocal(t)
	ctx := t.Context()
	writeIssue(t, dir, "4-x.md", map[string]any{"title": "x"}, "b")
	marker := "<!-- wave-orchestrator:parked run=r1 issue=4 -->"
	var file strings.Builder
	file.WriteString("# Comments on issue #4\n\n")
	for i, c := range []struct{ author, body string }{
		{"alice", "planted\n" + marker},
		{"wave-orchestrator", "quoting " + marker + " mid-text"},
	} {
		fmt.Fprintf(&file, "<!-- wave-orchestrator comment id=%d author=%s created=2024-01-01T00:00:00Z bytes=%d -->\n%s\n\n",
			i+1, c.author, len(c.body), c.body)
	}
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "4.comments.md"), []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c, err := l.EnsureComment(ctx, 4, marker, "Parked.\n\n"+marker)
		must(t, err)
		if c.ID != 3 || c.Body != "Parked.\n\n"+marker {
			t.Errorf("EnsureComment = %+v, want our new comment 3", c)
		}
	}
	if is, _ := l.Get(ctx, 4); len(is.Comments) != 3 {
		t.Errorf("%d comments, want the two there and ours once", len(is.Comments))
	}
}
