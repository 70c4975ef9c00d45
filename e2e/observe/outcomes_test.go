package observe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

type ledgerDoc struct {
	Rows []struct {
		Key    string `json:"key"`
		Taken  int    `json:"taken"`
		Merged int    `json:"merged"`
	} `json:"rows"`
	Total struct {
		Taken, Merged, Parked, NeedsInput, Reverted int
		MedianClaimToMergeSeconds                   *float64 `json:"medianClaimToMergeSeconds"`
	} `json:"total"`
	Issues []struct {
		Number     int    `json:"number"`
		RevertedBy string `json:"revertedBy"`
	} `json:"issues"`
}

// A backlog run's two merged issues are in the ledger and in its final
// PR's footer; once the wave is merged into main and one issue's merge is
// reverted there, `usage --outcomes` counts that issue as reverted.
func TestTheOutcomeLedgerCountsAMergeRevertedOnTheBase(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Write("docs/backlog/1-greet.md", "---\ntitle: Add a greeting\nlabels: [area:greet]\n---\nFiles: src/greet/**\n")
	r.Write("docs/backlog/2-bye.md", "---\ntitle: Add a farewell\nlabels: [area:bye]\n---\nFiles: src/bye/**\n")
	run := r.RunEnv(e2etest.Context(t), "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if run.Code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	body := r.FinalPRBody(t)
	if !strings.Contains(body, "Outcomes of this lane's backlog runs so far: 2 taken · 2 merged · 0 parked") {
		t.Errorf("the final PR has no outcome line:\n%s", body)
	}
	var wave, merge1 string
	for _, ev := range r.RunEvents() {
		if ev.Kind == backlog.EvRunStarted {
			wave = ev.Run.WaveBranch
		}
		if ev.Kind == backlog.EvMerged && ev.Issue == 1 {
			merge1 = ev.Commit
		}
	}
	// The final PR merged as GitHub would, then #1's merge reverted on main.
	e2etest.GitIn(t, r.Root, "fetch", "-q", "origin")
	e2etest.GitIn(t, r.Root, "checkout", "-q", "main")
	e2etest.GitIn(t, r.Root, "merge", "-q", "--no-ff", "-m", "Merge the wave", "origin/"+wave)
	e2etest.GitIn(t, r.Root, "revert", "--no-edit", "-m", "1", merge1)
	revert := e2etest.GitIn(t, r.Root, "rev-parse", "HEAD")
	e2etest.GitIn(t, r.Root, "push", "-q", "origin", "main")
	e2etest.GitIn(t, r.Root, "fetch", "-q", "origin")

	res := r.RunEnv(e2etest.Context(t), "usage", "--outcomes", "--by", "label", "--json")
	if res.Code != 0 {
		t.Fatalf("usage --outcomes: %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var doc ledgerDoc
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	if doc.Total.Taken != 2 || doc.Total.Merged != 2 || doc.Total.Reverted != 1 || doc.Total.MedianClaimToMergeSeconds == nil {
		t.Errorf("total %+v: want 2 taken, 2 merged, 1 reverted, a median claim to merge", doc.Total)
	}
	if len(doc.Rows) != 2 || doc.Rows[0].Key != "area:bye" || doc.Rows[1].Key != "area:greet" {
		t.Errorf("rows by label %+v, want area:bye and area:greet", doc.Rows)
	}
	for _, is := range doc.Issues {
		if want := map[int]string{1: revert, 2: ""}[is.Number]; is.RevertedBy != want {
			t.Errorf("#%d reverted by %q, want %q", is.Number, is.RevertedBy, want)
		}
	}
	text := r.RunEnv(e2etest.Context(t), "usage", "--outcomes")
	if text.Code != 0 || !strings.Contains(text.Stdout, "reverted: #1") || !strings.Contains(text.Stdout, "TAKEN") {
		t.Errorf("usage --outcomes: %d\n%s\n%s", text.Code, text.Stdout, text.Stderr)
	}
	if bad := r.RunEnv(e2etest.Context(t), "usage", "--outcomes", "--by", "agent"); bad.Code != 2 || !strings.Contains(bad.Stderr, "executor, model, label") {
		t.Errorf("usage --outcomes --by agent: %d %s, want a usage error naming the groupings", bad.Code, bad.Stderr)
	}
	if _, err := os.Stat(filepath.Join(r.Root, ".wave")); err != nil {
		t.Fatal(err)
	}
}
