package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// browser is a headless Chromium driven through the DevTools protocol;
// the test skips when there is none, unless WEBUITEST_REQUIRED=1 (CI).
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("WEBUITEST_REQUIRED") == "1" {
			t.Fatalf("WEBUITEST_REQUIRED=1 but no chromium on PATH: apt-get install -y chromium")
		}
		t.Skip("no chromium on PATH (apt-get install -y chromium); set WEBUITEST_REQUIRED=1 to fail instead")
	}
	// The machine's network is closed: nothing in the browser may reach
	// out (updates, sync, QUIC probes).
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// serve starts `serve` on a free loopback port and returns its URL.
func (r *testRepo) serve(t *testing.T, args ...string) string {
	t.Helper()
	bg := r.start(ctxFor(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	t.Cleanup(func() {
		_ = bg.cmd.Process.Signal(os.Interrupt)
		if res := bg.wait(t, "serve after an interrupt", 30*time.Second); res.code != 0 {
			t.Errorf("serve exit %d after an interrupt:\n%s", res.code, res.stderr)
		}
	})
	re := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/)`)
	var url string
	waitFor(t, "serve to listen", 30*time.Second, func() bool {
		if m := re.FindStringSubmatch(bg.err.String()); m != nil {
			url = m[1]
			return true
		}
		return false
	})
	return url
}

// pageEval evaluates a JavaScript expression in the page.
func pageEval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitPage waits until expr is true in the page.
func waitPage(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	waitFor(t, what, time.Minute, func() bool { return pageEval[bool](t, ctx, expr) })
}

// The page in a real browser: a wave launched after the page loaded
// shows up live (no reload), its agent running and then completed with
// its output; untrusted text stays text; the answer box answers a
// question and the answer reaches the wave's coordination log.
func TestServePageShowsAWaveLiveAndAnswersAQuestion(t *testing.T) {
	ctx := browser(t)
	r := newRepo(t)
	a1 := implAgent("A1", "local.delay: 3s")
	a1.title = `Part <img src=x id=injected>`
	r.writeWave(0, append([]agentSpec{a1, implAgent("A2")}, closureAgents()...)...)
	url := r.serve(t, "--allow-answer")
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	waitPage(t, ctx, "the page's event stream to open", `document.getElementById("conn").dataset.state === "open"`)

	launch := r.start(ctxFor(t), "launch", "--lane", "main", "--no-dashboard")
	waitPage(t, ctx, "A1 running on the page", `(document.querySelector('tr[data-agent="A1"]')||{dataset:{}}).dataset.state === "running"`)
	if res := launch.wait(t, "launch", 2*time.Minute); res.code != 0 {
		t.Fatalf("launch exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	waitPage(t, ctx, "A1 completed on the page", `document.querySelector('tr[data-agent="A1"]').dataset.state === "completed"`)
	waitPage(t, ctx, "A1's output tail", `document.querySelector('pre[data-tail="0/A1"]').textContent.trim() !== ""`)
	if got := pageEval[string](t, ctx, `document.querySelector('tr[data-agent="A1"] td').textContent`); !strings.Contains(got, "<img src=x id=injected>") {
		t.Fatalf("A1's title on the page is %q: want the markup shown as text", got)
	}
	if pageEval[bool](t, ctx, `document.getElementById("injected") !== null`) {
		t.Fatal("A1's title became an element: untrusted text reached the page as markup")
	}

	// A question, as `ask` writes it; the page learns of it from the
	// coordination log's event, without a reload.
	q, err := questions.Post(r.layout(), questions.Ask{Wave: 0, AgentID: "A1", Attempt: 1, Text: `Which colour? <b id="bold">bold</b>`}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	box := fmt.Sprintf(`textarea[data-for=%q]`, q.ID)
	waitPage(t, ctx, "the question's answer box", fmt.Sprintf(`document.querySelector(%q) !== null`, box))
	if pageEval[bool](t, ctx, `document.getElementById("bold") !== null`) {
		t.Fatal("the question's text became markup")
	}
	answer := "Blue, the <i>darker</i> one"
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(box), answer),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[data-answer=%q]`, q.ID))),
	); err != nil {
		t.Fatalf("type and send the answer: %v", err)
	}
	waitFor(t, "the answer in the coordination log", time.Minute, func() bool {
		qs, _, err := questions.List(r.layout())
		return err == nil && len(qs) == 1 && qs[0].State == questions.Answered
	})
	qs, _, _ := questions.List(r.layout())
	if qs[0].Answer != answer || qs[0].Operator != "web" {
		t.Fatalf("answered %q by %q, want %q by web", qs[0].Answer, qs[0].Operator, answer)
	}
	waitPage(t, ctx, "the page to show the question answered", fmt.Sprintf(`document.querySelector('[data-question=%q]').dataset.state === "answered"`, q.ID))
	screenshot(t, ctx, "serve-page.png")
}

// screenshot keeps a picture of the page in $WEBUITEST_SCREENSHOTS, when
// set, for a person to look at.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("WEBUITEST_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
	}
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}
