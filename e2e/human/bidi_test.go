package human

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// A worker's question with bidirectional overrides, isolates, an escape
// sequence and a zero-width space reaches a webhook and a command sink
// with each written as a visible escape, never raw.
func TestABidiOverrideInAQuestionNeverReachesAWebhook(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	got := filepath.Join(t.TempDir(), "command-sink.jsonl")
	r.Write("sink.sh", "#!/bin/sh\ncat >> \"$1\"\n")
	r.WithNotify(fmt.Sprintf("  - kind: webhook\n    urlEnv: %s\n    events: [question-asked]\n  - kind: command\n    argv: [sh, sink.sh, %s]\n    events: [question-asked]\n", e2etest.HookEnv, got))
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 3s")}, e2etest.ClosureAgents()...)...)
	cmd := r.LaunchEnv(e2etest.Context(t), e2etest.HookEnv+"="+hook.URL())
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.WaitFollowing(1)
	q := r.AskQuestion(0, "q-bidi", "A1\u202e", e2etest.HostileQuestion)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("launch: %v\n%s", err, out.String())
	}
	if n := hook.Count("question-asked", q); n != 1 {
		t.Fatalf("webhook got the question %d times, want once", n)
	}
	hook.Mu.Lock()
	for _, b := range hook.Bodies {
		for k, v := range b {
			if s, ok := v.(string); ok {
				if c, bad := e2etest.RawControl(s); bad {
					t.Errorf("webhook %s holds %U raw: %q", k, c, s)
				}
			}
		}
		if text, _ := b["text"].(string); !strings.Contains(text, `\u202e`) {
			t.Errorf("webhook text %q does not show the override", text)
		}
	}
	hook.Mu.Unlock()
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatalf("command sink wrote nothing: %v", err)
	}
	if c, bad := e2etest.RawControl(string(b)); bad || !strings.Contains(string(b), `\\u202e`) {
		t.Errorf("command sink stdin holds %U raw or hides the override: %s", c, b)
	}
}
