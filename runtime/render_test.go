package runtime

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The pane shows what stream-json, json, codex and opencode events say,
// not their JSON; plain output passes through as it is, even unfinished.
func TestPaneRendersVendorEventsAsText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     []string
		not      []string
	}{
		{"claude stream-json", "../usage/testdata/claude-stream.jsonl",
			[]string{"[claude] init (claude-sonnet-4-5-20250929)", "Reading the file first.", "→ Bash", "Done: two files.\r\n[wave-proof] done"}, []string{`"type"`}},
		{"claude stream-json result", "../usage/testdata/claude-stream-result.jsonl", []string{"ok\r\n[claude] success: 337 tok $0.042"}, []string{"ok\r\nok"}},
		{"claude json", "../usage/testdata/claude-json.txt", []string{"Wrote the report.\r\n[claude] success: 4.8k tok $0.013"}, []string{`"type"`}},
		{"codex", "../usage/testdata/codex-exec.jsonl", []string{"Looking around.", "a\r\n", "[codex] turn.completed: 9000 in, 700 out"}, []string{`"type"`}},
		{"opencode", "../usage/testdata/opencode.jsonl", []string{"Let me check."}, []string{`"type"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(c.in)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			r := newPaneRender(&out)
			for len(data) > 0 { // in pty-sized pieces
				n := min(5, len(data))
				r.Write(data[:n])
				data = data[n:]
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("pane lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range c.not {
				if strings.Contains(out.String(), w) {
					t.Errorf("pane shows %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestPanePassesPlainOutputAtOnce(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	r := newPaneRender(&out)
	r.Write([]byte("Continue? [y/N] "))
	if out.String() != "Continue? [y/N] " {
		t.Fatalf("a prompt without a newline was held: %q", out.String())
	}
	r.Write([]byte("\n{not json}\n  {\"type\":\"mystery\"}\n"))
	if want := "Continue? [y/N] \n{not json}\n  {\"type\":\"mystery\"}\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}
