package usage

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeterReadsEachVendorsStreamedUsage(t *testing.T) {
	src := func(s string) string { return s + "; cost from pricing " + DefaultPricesAsOf }
	cases := []struct {
		fixture, model string
		want           Usage
	}{
		{"claude-stream.jsonl", "", Usage{InputTokens: i64(15), OutputTokens: i64(100), CacheReadTokens: i64(2000), CacheWriteTokens: i64(2100),
			CostUSD: f64(0.01002), Model: str("claude-sonnet-4-5-20250929"), Source: str(src("claude messages"))}},
		{"claude-stream-result.jsonl", "", Usage{InputTokens: i64(310), OutputTokens: i64(27), CacheReadTokens: i64(0), CacheWriteTokens: i64(0),
			CostUSD: f64(0.0421), Model: str("claude-sonnet-4-5-20250929"), Source: str("claude result")}},
		{"claude-json.txt", "", Usage{InputTokens: i64(40), OutputTokens: i64(220), CacheReadTokens: i64(3000), CacheWriteTokens: i64(1500),
			CostUSD: f64(0.0135), Source: str("claude result")}},
		{"codex-exec.jsonl", "gpt-5-codex", Usage{InputTokens: i64(3000), OutputTokens: i64(700), CacheReadTokens: i64(6000),
			CostUSD: f64(0.0115), Model: str("gpt-5-codex"), Source: str(src("codex events"))}},
		{"codex-legacy.jsonl", "", Usage{InputTokens: i64(1500), OutputTokens: i64(150), CacheReadTokens: i64(1100),
			CostUSD: f64(0.0035125), Model: str("gpt-5-codex"), Source: str(src("codex events"))}},
		{"opencode.jsonl", "", Usage{InputTokens: i64(1000), OutputTokens: i64(90), CacheReadTokens: i64(1300), CacheWriteTokens: i64(400),
			CostUSD: f64(0.006), Source: str("opencode events")}},
		{"opencode-nocost.jsonl", "anthropic/claude-sonnet-4-5", Usage{InputTokens: i64(1_000_000), OutputTokens: i64(0), CacheReadTokens: i64(0), CacheWriteTokens: i64(0),
			CostUSD: f64(3), Model: str("anthropic/claude-sonnet-4-5"), Source: str(src("opencode events"))}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.fixture))
			if err != nil {
				t.Fatal(err)
			}
			// As a pty delivers it: CRLF line ends, in odd-sized pieces.
			data = []byte(strings.ReplaceAll(string(data), "\n", "\r\n"))
			m := &Meter{Model: c.model, Pricing: DefaultPricing()}
			for len(data) > 0 {
				n := min(7, len(data))
				m.Write(data[:n])
				data = data[n:]
			}
			if got := m.Total(); !same(got, c.want) {
				t.Fatalf("usage\n got %s\nwant %s", js(got), js(c.want))
			}
		})
	}
}

func TestMeterCountsEveryStartOfARestartedAgent(t *testing.T) {
	data, _ := os.ReadFile("testdata/claude-json.txt")
	m := &Meter{Pricing: DefaultPricing()}
	m.Write(data)
	m.Restart()
	m.Write(data)
	got := m.Total()
	if *got.InputTokens != 80 || *got.OutputTokens != 440 || math.Abs(*got.CostUSD-0.027) > 1e-9 {
		t.Fatalf("two starts: %s", js(got))
	}
}

func TestUnknownUsageIsNullNeverZero(t *testing.T) {
	m := &Meter{Pricing: DefaultPricing()}
	m.Write([]byte("plain text output\n{\"type\":\"assistant\",\"message\":{\"content\":\"no usage here\"}}\n"))
	u := m.Total()
	if u.Known() || u.Ptr() != nil {
		t.Fatalf("usage from text: %s", js(u))
	}
	b, _ := json.Marshal(struct {
		Usage *Usage `json:"usage"`
	}{u.Ptr()})
	if string(b) != `{"usage":null}` {
		t.Fatalf("json %s", b)
	}
	// Tokens without a price: the cost stays unknown.
	m = &Meter{Model: "some-local-model", Pricing: DefaultPricing()}
	m.Write([]byte(`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}` + "\n"))
	if u := m.Total(); u.CostUSD != nil || *u.InputTokens != 10 {
		t.Fatalf("unpriced: %s", js(u))
	}
}

func TestCodexLateSmallerTotalNeverLowersTheCount(t *testing.T) {
	m := &Meter{}
	m.Write([]byte(`{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":0,"output_tokens":90}}` + "\n"))
	m.Write([]byte(`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10}}` + "\n"))
	if u := m.Total(); u.Tokens() != 990 {
		t.Fatalf("tokens %d, want 990", u.Tokens())
	}
}

func TestCapCheck(t *testing.T) {
	cases := []struct {
		name       string
		cap        Cap
		u          Usage
		over, warn string
	}{
		{"under", Cap{Tokens: i64(1000)}, Usage{InputTokens: i64(500)}, "", ""},
		{"warn at 80%", Cap{Tokens: i64(1000)}, Usage{InputTokens: i64(800)}, "", "tokens 800 of 1.0k (80%)"},
		{"at the cap", Cap{Tokens: i64(1000)}, Usage{InputTokens: i64(600), OutputTokens: i64(400)}, "tokens 1.0k of 1.0k", ""},
		{"cost over", Cap{CostUSD: f64(0.5)}, Usage{CostUSD: f64(0.75)}, "cost $0.750 of $0.500", ""},
		{"cost unknown", Cap{CostUSD: f64(0.5)}, Usage{InputTokens: i64(1e9)}, "", ""},
		{"no cap", Cap{}, Usage{InputTokens: i64(1e9)}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			over, warn := c.cap.Check(c.u, 0)
			if over != c.over || warn != c.warn {
				t.Fatalf("got (%q, %q), want (%q, %q)", over, warn, c.over, c.warn)
			}
		})
	}
}

func TestPricingLookup(t *testing.T) {
	p := Pricing{AsOf: "2026-01-02", Models: map[string]Price{"my-model": {Input: 1}}}.Merged()
	for model, want := range map[string]float64{"claude-sonnet-4-5-20250929": 3, "anthropic/claude-haiku-4-5": 1, "my-model": 1, "gpt-5-codex": 1.25, "gpt-5.1": 1.25} {
		if pr, ok := p.Lookup(model); !ok || pr.Input != want {
			t.Errorf("%s: %v %v, want input %v", model, pr, ok, want)
		}
	}
	if _, ok := p.Lookup("llama"); ok {
		t.Error("llama priced")
	}
	if p.AsOf != "2026-01-02" {
		t.Errorf("asOf %q", p.AsOf)
	}
}

func TestAddKeepsUnknownNull(t *testing.T) {
	a := Usage{InputTokens: i64(1), Model: str("a")}
	b := Usage{InputTokens: i64(2), CostUSD: f64(0.1), Model: str("b")}
	s := Add(a, b)
	if *s.InputTokens != 3 || s.OutputTokens != nil || *s.CostUSD != 0.1 || *s.Model != "mixed" {
		t.Fatalf("sum %s", js(s))
	}
}

func same(a, b Usage) bool {
	eqI := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqF := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || math.Abs(*x-*y) < 1e-9) }
	eqS := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eqI(a.InputTokens, b.InputTokens) && eqI(a.OutputTokens, b.OutputTokens) && eqI(a.CacheReadTokens, b.CacheReadTokens) &&
		eqI(a.CacheWriteTokens, b.CacheWriteTokens) && eqF(a.CostUSD, b.CostUSD) && eqS(a.Model, b.Model) && eqS(a.Source, b.Source)
}

func js(u Usage) string { b, _ := json.Marshal(u); return string(b) }
