package webui

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// A backlog worker's output is served by issue number from the run
// directory the run's status document names, only inside the lane's
// state directory: no request names a file.
func TestIssueLogIsTheWorkersOutputAndNamesNoFile(t *testing.T) {
	f := newFixture(t)
	worker := filepath.Join(f.layout.StateDir, "backlog", "r1", "runs", "i3-a1")
	if err := os.MkdirAll(worker, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(worker, lanes.LogFile), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	_ = os.WriteFile(filepath.Join(outside, lanes.LogFile), []byte("do not serve\n"), 0o644)
	var asked []string
	o := f.options()
	o.Backlog = func(_ context.Context, run string) (any, error) {
		asked = append(asked, run)
		if run == "gone" {
			return nil, fmt.Errorf("%w: gone", ErrNoBacklogRun)
		}
		return map[string]any{"issues": []map[string]any{
			{"number": 3, "runDir": worker},
			{"number": 4, "runDir": outside},
			{"number": 5, "runDir": ""},
		}}, nil
	}
	h := New(o).Handler()
	if w := get(t, h, "/api/v1/backlog/issues/3/log?tail=2&run=r1"); w.Code != http.StatusOK || w.Body.String() != "two\nthree\n" {
		t.Fatalf("issue 3's tail: %d %q", w.Code, w.Body)
	}
	if len(asked) != 1 || asked[0] != "r1" {
		t.Errorf("the run asked for: %v, want r1", asked)
	}
	for path, code := range map[string]int{
		"/api/v1/backlog/issues/4/log":            http.StatusNotFound, // outside the state directory
		"/api/v1/backlog/issues/5/log":            http.StatusNotFound, // not started
		"/api/v1/backlog/issues/6/log":            http.StatusNotFound, // not in the run
		"/api/v1/backlog/issues/x/log":            http.StatusBadRequest,
		"/api/v1/backlog/issues/0/log":            http.StatusBadRequest,
		"/api/v1/backlog/issues/3/log?run=..%2Fx": http.StatusBadRequest,
		"/api/v1/backlog/issues/3/log?tail=0":     http.StatusBadRequest,
		"/api/v1/backlog/issues/3/log?run=gone":   http.StatusNotFound,
	} {
		w := get(t, h, path)
		if w.Code != code {
			t.Errorf("GET %s: %d, want %d (%s)", path, w.Code, code, w.Body)
		}
		if strings.Contains(w.Body.String(), "do not serve") {
			t.Errorf("GET %s served a file outside the lane", path)
		}
	}
}
