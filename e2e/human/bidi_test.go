package human

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// hostileQuestion reads "approve the deploy? yes" on a screen that obeys
// the right-to-left override and isolate it hides.
const hostileQuestion = "approve the deploy? \u202eon\u202c \u2066yes\u2069\x1b[2J\u200b"

// rawControl is the first character of s no text for people may hold raw.
func rawControl(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && termtext.Unsafe(r) {
			return r, true
		}
	}
	return 0, false
}

// A worker's question with bidirectional overrides, isolates, an escape
// sequence and a zero-width space reaches a webhook and a command sink
// with each written as a visible escape, never raw.
func TestABidiOverrideInAQuestionNeverReachesAWebhook(t *testing.T) {
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
	q := r.AskQuestion(0, "q-bidi", "A1\u202e", hostileQuestion)
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
				if c, bad := rawControl(s); bad {
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
	if c, bad := rawControl(string(b)); bad || !strings.Contains(string(b), `\\u202e`) {
		t.Errorf("command sink stdin holds %U raw or hides the override: %s", c, b)
	}
}

// The same question on the page (a real browser) shows the override,
// the isolates, the escape sequence and the zero-width space as escapes.
func TestABidiOverrideInAQuestionNeverReachesThePage(t *testing.T) {
	ctx := browser(t)
	r := e2etest.NewRepo(t)
	q := e2etest.PostRecord(t, r, "-a", "A1", "--kind", "human-feedback", "--summary", hostileQuestion)
	url := r.Serve(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("page: %s", pageEval[string](t, ctx, `document.body.textContent`))
		}
	})
	waitPage(t, ctx, "the question on the page", fmt.Sprintf(`document.querySelector('[data-question=%q] .text') !== null`, q))
	shown := pageEval[string](t, ctx, `document.getElementById("questions").textContent`)
	if c, bad := rawControl(shown); bad {
		t.Errorf("the page shows %U raw: %q", c, shown)
	}
	if !strings.Contains(shown, `approve the deploy? \u202eon\u202c \u2066yes\u2069\x1b[2J\u200b`) {
		t.Errorf("the page does not show the question's hidden characters as escapes: %q", shown)
	}
}
