package serve

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// The same question on the page (a real browser) shows the override,
// the isolates, the escape sequence and the zero-width space as escapes.
func TestABidiOverrideInAQuestionNeverReachesThePage(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	r := e2etest.NewRepo(t)
	q := e2etest.PostRecord(t, r, "-a", "A1", "--kind", "human-feedback", "--summary", e2etest.HostileQuestion)
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
	if c, bad := e2etest.RawControl(shown); bad {
		t.Errorf("the page shows %U raw: %q", c, shown)
	}
	if !strings.Contains(shown, `approve the deploy? \u202eon\u202c \u2066yes\u2069\x1b[2J\u200b`) {
		t.Errorf("the page does not show the question's hidden characters as escapes: %q", shown)
	}
}
