package localagent

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// TestWorkerResultReadsBackAsTheIssueAsked: whatever question or detail an
// issue's directive gives the simulated worker (a tab, a quote, a leading
// space), the supervisor parses the same text back from its marker.
func TestWorkerResultReadsBackAsTheIssueAsked(t *testing.T) {
	cases := []struct {
		directive string
		want      backlog.Result
	}{
		{`result=needs-input commit=none question="Which	API?"`, backlog.Result{State: backlog.ResultNeedsInput, Question: "Which\tAPI?"}},
		{`result=blocked commit=none detail="  waits on \"ops\""`, backlog.Result{State: backlog.ResultBlocked, Detail: `  waits on "ops"`}},
		{`commit=none detail="\"quoted\""`, backlog.Result{State: backlog.ResultDone, Detail: `"quoted"`}},
	}
	for _, c := range cases {
		t.Run(c.directive, func(t *testing.T) {
			t.Chdir(t.TempDir())
			prompt := filepath.Join(t.TempDir(), "prompt.md")
			if err := os.WriteFile(prompt, []byte("# Issue\n\n"+directivePrefix+" "+c.directive+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			env := map[string]string{"WAVE_ISSUE_NUMBER": "4", "WAVE_ATTEMPT": "1"}
			if code := WorkerMain([]string{"--prompt-file", prompt}, &out, func(k string) string { return env[k] }); code != 0 {
				t.Fatalf("exit %d\n%s", code, out.String())
			}
			if got, ok := backlog.ParseResult(out.String()); !ok || got != c.want {
				t.Fatalf("marker read back as %+v (ok %v), want %+v\n%s", got, ok, c.want, out.String())
			}
		})
	}
}
