package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// Every vendor's output format yields the same markers to both modes:
// the worker's [backlog-result] and a wave agent's [wave-proof].
func TestEveryOutputFormatYieldsTheSameMarkersToBothModes(t *testing.T) {
	want := backlog.Result{State: backlog.ResultDone, Detail: "empty input returns an error now"}
	for _, name := range []string{"claude-text", "claude-json", "claude-stream-json", "codex-json", "opencode-json"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "agentlogs", name+".log"))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := backlog.ParseResult(DecodeLog(string(raw)))
			if !ok || got != want {
				t.Errorf("backlog result = %+v, %v; want %+v\ndecoded:\n%s", got, ok, want, DecodeLog(string(raw)))
			}
			sig := ParseLog(string(raw))
			if sig.Proof == nil || sig.Proof.Detail != "parser fixed" {
				t.Errorf("proof = %s", jsonOf(sig.Proof))
			}
			if d := sig.Diagnostics[KindProof]; d.RawCount != 1 {
				t.Errorf("proof counted %d times, want once (a repeated result event is one answer)", d.RawCount)
			}
		})
	}
}

func TestDecodeLog(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      []string
	}{
		{"plain text stays", "a\n[backlog-result] state=done\n", []string{"a\n[backlog-result] state=done\n"}},
		{"ansi removed", "\x1b[1mbold\x1b[0m\n", []string{"bold\n"}},
		{"event without text drops out", `{"type":"turn.started"}` + "\n", nil},
		{"claude json answer", `{"type":"result","result":"hi\nthere"}`, []string{"hi\nthere"}},
		{"repeated result kept once", `{"type":"assistant","message":{"content":[{"type":"text","text":"x"}]}}` + "\n" + `{"type":"result","result":"x"}`, []string{"x"}},
		{"content as plain string", `{"type":"user","message":{"content":"y"}}`, []string{"y"}},
		{"stderr between events stays", `{"result":"x"}` + "\nwarning: slow\n" + `{"text":"z"}`, []string{"x", "warning: slow", "z"}},
		{"json in a fence is quoted", "```\n" + `{"result":"x"}` + "\n```", []string{"```\n" + `{"result":"x"}` + "\n```"}},
		{"a message's open fence ends with it", `{"text":"` + "```" + `\nm1"}` + "\n" + `{"text":"m2"}`, []string{"```\nm1", "m2"}},
		{"broken json stays text", `{"text": "half`, []string{`{"text": "half`}},
		{"events nested in a command's output", `{"aggregated_output":"{\"text\":\"inner\"}"}`, []string{"inner"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AgentTexts(tc.log); !slices.Equal(got, tc.want) {
				t.Errorf("AgentTexts = %q, want %q", got, tc.want)
			}
			joined := ""
			for _, w := range tc.want {
				joined += w
				if !strings.HasSuffix(w, "\n") {
					joined += "\n"
				}
			}
			if got := DecodeLog(tc.log); got != joined {
				t.Errorf("DecodeLog = %q, want %q", got, joined)
			}
		})
	}
}
