package serve

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// The viewport the scale test looks at: a laptop's browser window.
const viewW, viewH = 1280, 900

// spender is an implementation agent's command that does its work and
// reports what it spent as claude's result line does, which the runner
// meters.
const spender = `#!/bin/sh
set -e
mkdir -p src
echo done > "src/$(echo "$WAVE_AGENT_ID" | tr A-Z a-z).txt"
echo '{"type":"result","total_cost_usd":0.042,"usage":{"input_tokens":1200,"output_tokens":300}}'
echo '[wave-proof] completion=contract durability=none proof=unit state=met'
echo '[wave-doc-delta] state=owned'
`

// tenWaves is a lane of ten waves of twenty agents: waves 0-8 run to
// completion (their implementation agents report what they spent), wave
// 9's seventeen implementation agents run for minutes (the launcher
// returned runs in the background).
func tenWaves(t *testing.T) (*e2etest.Repo, func() *e2etest.BgLaunch) {
	t.Helper()
	r := e2etest.NewRepo(t)
	script := filepath.Join(t.TempDir(), "spender")
	if err := os.WriteFile(script, []byte(spender), 0o755); err != nil {
		t.Fatal(err)
	}
	wave := func(n int, knobs ...string) {
		var as []e2etest.Agent
		for i := 11; i <= 27; i++ {
			as = append(as, e2etest.ImplAgent(fmt.Sprintf("A%d", i), knobs...))
		}
		r.WriteWave(n, append(as, e2etest.ClosureAgents()...)...)
	}
	for n := 0; n < 9; n++ {
		wave(n, "id: shell", "shell.command: "+script)
	}
	if res := r.Run(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard", "--start-wave", "0", "--end-wave", "8"); res.Code != 0 {
		t.Fatalf("launch waves 0-8: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	wave(9, "local.delay: 10m")
	return r, func() *e2etest.BgLaunch {
		l := e2etest.StartLaunch(t, r, "--start-wave", "9")
		// Stopped before the repository goes: its runs write until then.
		t.Cleanup(func() {
			r.Run(context.Background(), "stop", "--lane", "main")
			l.Wait(t)
			for i := 11; i <= 27; i++ {
				if rec := filepath.Join(r.Layout().RunDir(9, fmt.Sprintf("A%d", i), 1), lanes.RuntimeFile); exists(rec) {
					e2etest.WaitTerminal(t, rec)
				}
			}
		})
		return l
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Ten waves of twenty agents stay one screen: the running wave first and
// open, its header and all its agents above the fold (checked in a
// screenshot of the viewport too), the nine finished waves folded to a
// line each with their stages and time, no output open, and the page at
// most two screens tall. The page says it is loading before its first
// read, never that no wave ran. A wave a person unfolds stays open across
// updates, and its agents' output opens on a click.
func TestServePageKeepsTenWavesOfTwentyAgentsToOneScreen(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	r, launchNine := tenWaves(t)
	url := r.Serve(t)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	static, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(static), "no wave has run") || !strings.Contains(string(static), "loading…") {
		t.Fatalf("before its first read the page says:\n%s", static)
	}
	launchNine()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(viewW, viewH), chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	waitPage(t, ctx, "wave 9's seventeen agents running on the page",
		`document.querySelectorAll('tr[data-wave="9"][data-state="running"]').length === 17`)

	order := pageEval[string](t, ctx, `[...document.querySelectorAll("details.wave")].map(d => d.dataset.wave + (d.open ? "+" : "-")).join(" ")`)
	if order != "9+ 8- 7- 6- 5- 4- 3- 2- 1- 0-" {
		t.Fatalf("waves on the page (number, + open): %s; want the running wave first and open, the others folded, newest first", order)
	}
	for _, n := range []int{9, 4} {
		sum := pageEval[string](t, ctx, fmt.Sprintf(`document.querySelector('details.wave[data-wave="%d"] > summary').textContent`, n))
		for _, want := range []string{fmt.Sprintf("Wave %d", n), "attempt 1/2", "20 agents", "integrating"} {
			if !strings.Contains(sum, want) {
				t.Errorf("wave %d's header %q lacks %q", n, sum, want)
			}
		}
		if !pageEval[bool](t, ctx, fmt.Sprintf(`document.querySelector('details.wave[data-wave="%d"] > summary [data-elapsed]') !== null`, n)) {
			t.Errorf("wave %d's header shows no elapsed time: %q", n, sum)
		}
	}
	if s := pageEval[string](t, ctx, `document.querySelector('details.wave[data-wave="4"] > summary').textContent`); !strings.Contains(s, "20 ok") || !strings.Contains(s, "$0.714 · 25.5k tok") ||
		!pageEval[bool](t, ctx, `document.querySelector('details.wave[data-wave="4"] > summary [data-stage="cont-qa-closure"][data-state="passed"]') !== null`) {
		t.Errorf("finished wave 4's header %q: want its 20 agents ok, what its 17 agents spent and its cont-QA stage passed", s)
	}
	if s := pageEval[string](t, ctx, `document.getElementById("summary").textContent`); !strings.Contains(s, "10 waves") || !strings.Contains(s, "spent $6.43") {
		t.Errorf("the lane's line %q: want its waves and what they spent", s)
	}
	if n := pageEval[int](t, ctx, `[...document.querySelectorAll("tr.tail")].filter(r => !r.hidden).length`); n != 0 {
		t.Errorf("%d outputs open on a page nobody touched", n)
	}

	// Above the fold: the running wave's header and its twenty rows lie in
	// the viewport, each the topmost thing at its middle.
	visible := pageEval[string](t, ctx, `(() => {
		const h = window.innerHeight, out = [];
		const seen = e => { const r = e.getBoundingClientRect();
			return r.top >= 0 && r.bottom <= h && e.contains(document.elementFromPoint(r.left + Math.min(r.width / 2, 40), (r.top + r.bottom) / 2)); };
		const head = document.querySelector('details.wave[data-wave="9"] > summary');
		if (!seen(head)) out.push("header");
		for (const row of document.querySelectorAll('tr[data-wave="9"][data-agent]')) if (!seen(row)) out.push(row.dataset.agent);
		return out.join(" ");
	})()`)
	if visible != "" {
		t.Errorf("below the fold of a %d×%d viewport: %s", viewW, viewH, visible)
	}
	if rows := pageEval[int](t, ctx, `document.querySelectorAll('tr[data-wave="9"][data-agent]').length`); rows != 20 {
		t.Errorf("wave 9 shows %d agent rows, want 20", rows)
	}
	if h := pageEval[int](t, ctx, `document.documentElement.scrollHeight`); h > 2*viewH {
		t.Errorf("the page is %d px tall: want at most two screens (%d px)", h, 2*viewH)
	}
	checkAboveTheFold(t, ctx)

	// A person unfolds wave 4 and opens A11's output: both stay across
	// the next updates.
	clickPage(t, ctx, `details.wave[data-wave="4"] > summary`)
	waitPage(t, ctx, "wave 4 open", `document.querySelector('details.wave[data-wave="4"]').open`)
	clickPage(t, ctx, `button[data-output="4/A11"]`)
	waitPage(t, ctx, "A11's output of wave 4", `document.querySelector('pre[data-tail="4/A11"]').textContent.includes("[wave-proof]")`)
	gen := pageEval[string](t, ctx, `document.getElementById("generated").textContent`)
	waitPage(t, ctx, "the next update", fmt.Sprintf(`document.getElementById("generated").textContent !== %q`, gen))
	if !pageEval[bool](t, ctx, `document.querySelector('details.wave[data-wave="4"]').open && !document.querySelector('tr[data-tail-row="4/A11"]').hidden && document.querySelector('details.wave[data-wave="9"]').open`) {
		t.Error("an update folded what the person opened")
	}
}

// checkAboveTheFold looks at a screenshot of the viewport (kept in
// $WEBUITEST_SCREENSHOTS): the running wave's header and its last agent
// row are painted in it, with text (dark pixels) where the page says they
// are.
func checkAboveTheFold(t *testing.T, ctx context.Context) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if dir := os.Getenv("WEBUITEST_SCREENSHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "serve-ten-waves-fold.png"), shot, 0o644); err != nil {
			t.Errorf("keep the screenshot: %v", err)
		}
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != viewW || b.Dy() != viewH {
		t.Fatalf("the screenshot is %v, want the %d×%d viewport", b, viewW, viewH)
	}
	for _, sel := range []string{`details.wave[data-wave="9"] > summary`, `tr[data-wave="9"][data-agent]`} {
		box := pageEval[[]float64](t, ctx, fmt.Sprintf(`(() => { const r = [...document.querySelectorAll(%q)].pop().getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()`, sel))
		if n := inked(img, image.Rect(int(box[0]), int(box[1]), int(box[2]), int(box[3]))); n < 20 {
			t.Errorf("the screenshot has %d text pixels where %s should be (%v)", n, sel, box)
		}
	}
}

// inked counts the dark pixels of img within r: text drawn there.
func inked(img image.Image, r image.Rectangle) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if (cr+cg+cb)/3 < 0x6000 {
				n++
			}
		}
	}
	return n
}
