package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"

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

// pageEval evaluates a JavaScript expression in the page.
func pageEval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// clickPage clicks the element sel names in one step in the page: the
// page redraws a running wave as it changes, so a node chromedp found may
// be gone by the time it clicks it.
func clickPage(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if !pageEval[bool](t, ctx, fmt.Sprintf(`(e => e ? (e.click(), true) : false)(document.querySelector(%q))`, sel)) {
		t.Fatalf("no %s on the page to click", sel)
	}
}

// waitPage waits until expr is true in the page.
func waitPage(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	e2etest.WaitFor(t, what, time.Minute, func() bool { return pageEval[bool](t, ctx, expr) })
}

// The human loop through the page, in a real browser: a wave launched
// after the page opened shows live (no reload), its agents running and
// then completed with their output; A1 asks a blocking question and shows
// as waiting for input, the page's answer box sends the answer on
// Ctrl+Enter, and the live launcher relaunches A1 (its second attempt)
// with the answer in its prompt and exits 0. Markup in a title and in the
// answer stays text.
func TestServePageShowsAWaveLiveAndAnswersAQuestion(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	r := e2etest.NewRepo(t)
	a1 := e2etest.ImplAgent("A1", "local.ask: "+e2etest.AskedQuestion)
	a1.Title = `Part <img src=x id=injected>`
	r.WriteWave(0, append([]e2etest.Agent{a1, e2etest.ImplAgent("A2", "local.delay: 3s")}, e2etest.ClosureAgents()...)...)
	url := r.Serve(t, "--allow-answer")
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	waitPage(t, ctx, "the page's event stream to open", `document.getElementById("conn").dataset.state === "open"`)

	l := e2etest.StartLaunch(t, r)
	waitPage(t, ctx, "A2 running on the page", `(document.querySelector('tr[data-agent="A2"]')||{dataset:{}}).dataset.state === "running"`)
	q := e2etest.PendingQuestion(t, r, l)
	box := fmt.Sprintf(`textarea[data-for=%q]`, q.ID)
	waitPage(t, ctx, "the question's answer box", fmt.Sprintf(`document.querySelector(%q) !== null`, box))
	if got := pageEval[string](t, ctx, `document.querySelector('tr[data-agent="A1"] td').textContent`); !strings.Contains(got, "<img src=x id=injected>") {
		t.Fatalf("A1's title on the page is %q: want the markup shown as text", got)
	}
	waitPage(t, ctx, "A1 waiting for input on the page", `document.querySelector('tr[data-agent="A1"]').dataset.state === "waiting-for-input"`)
	answer := "Postgres, the <i id=ital>managed</i> one"
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(box), answer),
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
	); err != nil {
		t.Fatalf("type the answer and send it with Ctrl+Enter: %v", err)
	}
	if code := l.Wait(t); code != 0 {
		t.Fatalf("launch exit %d after the answer from the page:\n%s", code, l.Console())
	}
	e2etest.CheckAnswerReachedA1(t, r, q, answer)
	qs, _, _ := questions.List(r.Layout())
	if len(qs) != 1 || qs[0].Operator != "web" {
		t.Fatalf("questions after the answer %+v: want one, answered by web", qs)
	}
	waitPage(t, ctx, "A1 completed on the page", `document.querySelector('tr[data-agent="A1"]').dataset.state === "completed"`)
	waitPage(t, ctx, "A2 completed on the page", `document.querySelector('tr[data-agent="A2"]').dataset.state === "completed"`)
	if att := pageEval[string](t, ctx, `document.querySelector('tr[data-agent="A1"]').children[2].textContent`); att != "2" {
		t.Errorf("A1's attempt on the page after its relaunch: %q, want 2", att)
	}
	clickPage(t, ctx, `button[data-output="0/A1"]`)
	waitPage(t, ctx, "A1's output tail", `document.querySelector('pre[data-tail="0/A1"]').textContent.trim() !== ""`)
	waitPage(t, ctx, "the page to show the question answered", fmt.Sprintf(`document.querySelector('[data-question=%q]').dataset.state === "answered"`, q.ID))
	for _, id := range []string{"injected", "ital"} {
		if pageEval[bool](t, ctx, fmt.Sprintf(`document.getElementById(%q) !== null`, id)) {
			t.Fatalf("element #%s exists: untrusted text reached the page as markup", id)
		}
	}
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

// Off loopback serve needs a token; with one, every request needs it, and
// a browser gets in through the login form once.
func TestServeTokenGuardsEveryRequest(t *testing.T) {
	r := e2etest.NewRepo(t)
	res := r.Run(e2etest.Context(t), "serve", "--addr", "0.0.0.0:0")
	if res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, "--token-env") {
		t.Fatalf("serve off loopback without a token: exit %d\n%s", res.Code, res.Stderr)
	}
	res = r.Run(e2etest.Context(t), "serve", "--token-env", "WAVE_TEST_NO_SUCH_VARIABLE")
	if res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, "WAVE_TEST_NO_SUCH_VARIABLE") {
		t.Fatalf("serve with an unset token variable: exit %d\n%s", res.Code, res.Stderr)
	}

	const token = "e2e-serve-token-9f2c"
	t.Setenv("WAVE_TEST_SERVE_TOKEN", token)
	url := r.Serve(t, "--token-env", "WAVE_TEST_SERVE_TOKEN")
	for _, c := range []struct {
		auth string
		code int
	}{{"", http.StatusUnauthorized}, {"Bearer nope", http.StatusUnauthorized}, {"Bearer " + token, http.StatusOK}} {
		req, _ := http.NewRequestWithContext(e2etest.Context(t), http.MethodGet, url+"api/v1/state", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("GET /api/v1/state with %q: %d, want %d", c.auth, resp.StatusCode, c.code)
		}
	}

	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, "the login form", `document.querySelector('input[name="token"]') !== null`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	); err != nil {
		t.Fatalf("log in: %v", err)
	}
	waitPage(t, ctx, "the page live after logging in", `(document.getElementById("conn")||{dataset:{}}).dataset.state === "open" && document.getElementById("lane").textContent === "main"`)
}

// The backlog through the API: /api/v1/backlog is the run's status
// document, /api/v1/questions lists the worker's needs-input question,
// and POST …/answer answers it on its issue as `answer` does, so the next
// run merges the issue with the answer in its worker's prompt.
func TestServeAnswersABacklogQuestion(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Asks", "Files: a/**\n\nlocal-agent: result=needs-input question=\"Which API?\"")
	r.CommitIssues(t)
	ctx := e2etest.Context(t)
	if first := r.RunEnv(ctx, "backlog", "run", "--issues", "1", "--no-dashboard"); !strings.Contains(first.Stdout, "#1 needs input") {
		t.Fatalf("the first run did not ask (exit %d):\n%s\n%s", first.Code, first.Stdout, first.Stderr)
	}
	url := r.ServeEnv(t, r.Env(), "--allow-answer")
	getJSON := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	var bl struct {
		Tally  struct{ NeedsInput int }
		Issues []struct {
			Number   int
			State    string
			Question string
		}
	}
	getJSON("api/v1/backlog", &bl)
	if bl.Tally.NeedsInput != 1 || len(bl.Issues) != 1 || bl.Issues[0].Question != "Which API?" {
		t.Fatalf("GET /api/v1/backlog: %+v", bl)
	}
	var qs []questions.Question
	getJSON("api/v1/questions", &qs)
	if len(qs) != 1 || qs[0].Issue == nil || *qs[0].Issue != 1 || qs[0].State != questions.Pending {
		t.Fatalf("GET /api/v1/questions: %+v", qs)
	}
	resp, err := http.Post(url+"api/v1/questions/"+qs[0].ID+"/answer", "application/json", strings.NewReader(`{"answer":"Use the v2 API","operator":"ana"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST answer: %d", resp.StatusCode)
	}
	second := r.RunEnv(ctx, "backlog", "run", "--issues", "1", "--no-dashboard")
	if second.Code != 0 || !strings.Contains(second.Stdout, "#1 merged into") {
		t.Fatalf("the run after the answer did not merge #1 (exit %d):\n%s\n%s", second.Code, second.Stdout, second.Stderr)
	}
	v := r.SurfaceStatus(t)
	b, err := os.ReadFile(filepath.Join(v.Issues[0].RunDir, "prompt.md"))
	if err != nil || !strings.Contains(string(b), "Use the v2 API") {
		t.Fatalf("the worker's prompt lacks the answer (%v):\n%s", err, b)
	}
}
