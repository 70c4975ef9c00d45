package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// usageScript is a fake vendor CLI: it prints a usage event under the
// cap, writes FILE, prints the event that crosses the cap, and then would
// run for ever.
func usageScript(first, second string) string {
	return "#!/bin/sh\n" +
		"printf '%s\\n' '" + first + "'\n" +
		"touch \"$1\"\n" +
		"printf '%s\\n' '" + second + "'\n" +
		"while :; do sleep 0.05; done\n"
}

// A running agent whose streamed usage crosses its token cap is stopped
// by its runner and recorded as budget-exceeded, in every vendor's format,
// with the usage it reached in its terminal record.
func TestAgentCrossingItsBudgetIsStoppedAsBudgetExceeded(t *testing.T) {
	t.Parallel()
	cases := map[string][2]string{
		"claude": {
			`{"type":"assistant","message":{"id":"a","model":"claude-sonnet-4-5","usage":{"input_tokens":400,"output_tokens":100,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}`,
			`{"type":"assistant","message":{"id":"b","model":"claude-sonnet-4-5","usage":{"input_tokens":900,"output_tokens":100,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}`},
		"codex": {
			`{"type":"turn.completed","usage":{"input_tokens":400,"cached_input_tokens":0,"output_tokens":100}}`,
			`{"type":"turn.completed","usage":{"input_tokens":1300,"cached_input_tokens":0,"output_tokens":200}}`},
		"opencode": {
			`{"type":"step_finish","part":{"id":"p1","type":"step-finish","cost":0.001,"tokens":{"input":400,"output":100,"reasoning":0,"cache":{"read":0,"write":0}}}}`,
			`{"type":"step_finish","part":{"id":"p2","type":"step-finish","cost":0.002,"tokens":{"input":900,"output":100,"reasoning":0,"cache":{"read":0,"write":0}}}}`},
	}
	for vendor, lines := range cases {
		t.Run(vendor, func(t *testing.T) {
			h := newHarness(t)
			root := t.TempDir()
			script := filepath.Join(root, "fake-"+vendor)
			if err := os.WriteFile(script, []byte(usageScript(lines[0], lines[1])), 0o755); err != nil {
				t.Fatal(err)
			}
			p := h.payload(t, root, "A1")
			p.Argv = []string{script, filepath.Join(root, "first-printed")}
			p.TerminateGraceMs = 200
			limit := int64(1000)
			p.Usage = &UsagePolicy{Pricing: usage.DefaultPricing(), Cap: usage.Cap{Tokens: &limit}}
			h.start(t, p)
			obs := h.waitDone(t, p.RunDir)
			rec := obs.Record
			if obs.Verdict.State != StateBudgetExceeded || !rec.BudgetExceeded || !strings.Contains(rec.ExitReason, "budget exceeded: tokens 1.5k of 1.0k") {
				t.Fatalf("verdict %+v, record reason %q", obs.Verdict, rec.ExitReason)
			}
			if rec.Usage == nil || rec.Usage.Tokens() != 1500 {
				t.Fatalf("final usage %+v", rec.Usage)
			}
			log, _ := os.ReadFile(p.LogPath)
			if !strings.Contains(string(log), "[wave] budget exceeded (tokens 1.5k of 1.0k); stopping the agent") {
				t.Fatalf("log:\n%s", log)
			}
		})
	}
}

// The runtime record carries the live usage while the agent runs, and a
// warning once it passes warnAtPercent of its cap.
func TestRuntimeRecordCarriesLiveUsageAndTheBudgetWarning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := t.TempDir()
	script := filepath.Join(root, "fake-codex")
	body := "#!/bin/sh\nprintf '%s\\n' '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":900,\"cached_input_tokens\":100,\"output_tokens\":50}}'\nwhile [ ! -e \"$1\" ]; do sleep 0.05; done\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	release := filepath.Join(root, "release")
	p := h.payload(t, root, "A1")
	p.Argv = []string{script, release}
	limit := int64(1000)
	p.Usage = &UsagePolicy{Model: "gpt-5-codex", Pricing: usage.DefaultPricing(), Cap: usage.Cap{Tokens: &limit}}
	h.start(t, p)
	waitFor(t, "live usage in runtime.json", func() bool {
		rec, err := ReadRecord(p.RuntimePath)
		return err == nil && rec.Usage != nil && rec.Usage.Tokens() == 950 && rec.BudgetWarning != ""
	})
	os.WriteFile(release, nil, 0o644)
	obs := h.waitDone(t, p.RunDir)
	u := obs.Record.Usage
	if obs.Verdict.State != StateCompleted || u == nil || *u.InputTokens != 800 || *u.CacheReadTokens != 100 || u.CostUSD == nil || *u.Model != "gpt-5-codex" {
		t.Fatalf("verdict %+v usage %+v", obs.Verdict, u)
	}
}

// A run nothing reports usage for records null, not zeros.
func TestUnmeteredRunRecordsNullUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.payload(t, t.TempDir(), "A1", "exit", "0")
	p.Usage = &UsagePolicy{Pricing: usage.DefaultPricing()}
	h.start(t, p)
	h.waitDone(t, p.RunDir)
	data, _ := os.ReadFile(p.RuntimePath)
	if !strings.Contains(string(data), `"usage": null`) {
		t.Fatalf("runtime.json:\n%s", data)
	}
}

// A claude agent in stream-json shows its messages as text in its tmux
// pane while agent.log keeps the events as printed (markers, usage and
// salvage read them there).
func TestStreamJSONIsTextInThePaneAndRawInTheLog(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := t.TempDir()
	release := filepath.Join(root, "release")
	script := filepath.Join(root, "fake-claude")
	event := `{"type":"assistant","message":{"id":"a","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Reading the parser now."}],"usage":{"input_tokens":10,"output_tokens":5}}}`
	body := "#!/bin/sh\nprintf '%s\\n' '" + event + "'\nwhile [ ! -e \"$1\" ]; do sleep 0.05; done\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	p := h.payload(t, root, "A1")
	p.Argv = []string{script, release}
	h.start(t, p)
	var pane string
	waitFor(t, "the message in the pane", func() bool {
		pane, _ = h.tm.Capture(context.Background(), p.SessionName, 50)
		return strings.Contains(pane, "Reading the parser now.")
	})
	if strings.Contains(pane, `"type"`) {
		t.Errorf("the pane shows the JSON event:\n%s", pane)
	}
	os.WriteFile(release, nil, 0o644)
	h.waitDone(t, p.RunDir)
	log, _ := os.ReadFile(p.LogPath)
	if !strings.Contains(string(log), event) {
		t.Errorf("agent.log lacks the raw event:\n%s", log)
	}
}
