package gate

import (
	"encoding/json"
	"strings"
	"testing"
)

// check is one assertion on parsed signals; it returns "" when it holds.
type check func(Signals) string

func proofIs(state, completion, detail string) check {
	return func(s Signals) string {
		if s.Proof == nil {
			return "no proof"
		}
		if s.Proof.State != state || s.Proof.Completion != completion || s.Proof.Detail != detail {
			return "proof = " + jsonOf(s.Proof)
		}
		return ""
	}
}

func noProof(s Signals) string {
	if s.Proof != nil {
		return "unexpected proof " + jsonOf(s.Proof)
	}
	return ""
}

func rejected(kind string, n int, reasonPart string) check {
	return func(s Signals) string {
		d := s.Diagnostics[kind]
		if d.RejectedCount != n {
			return kind + " diagnostics = " + jsonOf(d)
		}
		if n > 0 && !strings.Contains(d.RejectedSamples[0].Reason, reasonPart) {
			return "reason = " + d.RejectedSamples[0].Reason
		}
		return ""
	}
}

func docDeltaIs(state string) check {
	return func(s Signals) string {
		if s.DocDelta == nil || s.DocDelta.State != state {
			return "doc delta " + jsonOf(s.DocDelta)
		}
		return ""
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

const goodProof = "[wave-proof] completion=integrated durability=durable proof=integration state=met detail=all good"

func TestParseLogGrammar(t *testing.T) {
	tests := []struct {
		name   string
		log    string
		checks []check
	}{
		{"plain", goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"dash bullet", "- " + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"star bullet", "* " + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"plus bullet", "+ " + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"numbered bullet", "3. " + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"backticked", "`" + goodProof + "`", []check{proofIs("met", "integrated", "all good")}},
		{"bullet and backticks", "- `" + goodProof + "`", []check{proofIs("met", "integrated", "all good")}},
		{"indented", "    " + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"complete means met", "[wave-proof] completion=contract durability=none proof=unit state=complete", []check{proofIs("met", "contract", "")}},
		{"upper-case values", "[WAVE-PROOF] completion=LIVE durability=None proof=Unit state=GAP", []check{proofIs("gap", "live", "")}},
		{"no detail", "[wave-proof] completion=live durability=none proof=unit state=met", []check{proofIs("met", "live", "")}},
		{"detail with spaces", "[wave-proof] completion=live durability=none proof=unit state=gap detail=the db   migration is not run yet", []check{proofIs("gap", "live", "the db   migration is not run yet")}},
		{"detail containing key=value", "[wave-proof] completion=live durability=none proof=unit state=gap detail=set retries=3 before release", []check{proofIs("gap", "live", "set retries=3 before release")}},
		{"keys in any order", "[wave-proof] state=met proof=unit durability=none completion=contract", []check{proofIs("met", "contract", "")}},
		{"last line wins (stale first)", "[wave-proof] completion=live durability=none proof=unit state=gap detail=old\n" + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"last line wins (stale last)", goodProof + "\n[wave-proof] completion=live durability=none proof=unit state=gap detail=new", []check{proofIs("gap", "live", "new")}},
		{"ansi colours stripped", "\x1b[32m[wave-proof]\x1b[0m completion=integrated durability=durable proof=integration state=met detail=all good\x1b[0m", []check{proofIs("met", "integrated", "all good")}},
		{"osc title stripped", "\x1b]0;agent\x07" + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"crlf line endings", goodProof + "\r\n", []check{proofIs("met", "integrated", "all good")}},
		{"carriage-return rewrite keeps visible text", "working... 40%\r" + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"prose mention is not a marker", "I will print [wave-proof] completion=live durability=none proof=unit state=met at the end", []check{noProof}},
		{"example in prose fence is not counted", "Example:\n```\nprint this when done:\n[wave-proof] completion=live durability=durable proof=live state=met\n```", []check{noProof, rejected(KindProof, 0, "")}},
		{"example in language fence with code is not counted", "```bash\necho '[wave-proof] completion=live'\n[wave-proof] completion=live durability=durable proof=live state=met\n```", []check{noProof}},
		{"fence of only markers counts", "```\n" + goodProof + "\n\n[wave-doc-delta] state=owned\n```", []check{proofIs("met", "integrated", "all good"), func(s Signals) string {
			if s.DocDelta == nil || s.DocDelta.State != "owned" {
				return "doc delta " + jsonOf(s.DocDelta)
			}
			return ""
		}}},
		{"tilde fence with prose not counted", "~~~\nnote\n" + goodProof + "\n~~~", []check{noProof}},
		{"marker after a closed example fence counts", "```\nexample\n[wave-proof] completion=live durability=durable proof=live state=gap\n```\n" + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"marker after an unclosed fence counts", "```\nsome code\n" + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"marker after an unclosed language fence counts", "Report:\n```text\n" + goodProof + "\n[wave-doc-delta] state=owned", []check{proofIs("met", "integrated", "all good"), docDeltaIs("owned")}},
		{"unclosed fence after a closed example: example still ignored", "```\nexample\n[wave-proof] completion=live durability=durable proof=live state=gap\n```\n```\n" + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"unclosed fence prose is still no marker", "```\nI will print [wave-proof] completion=live durability=none proof=unit state=met", []check{noProof}},
		{"unclosed fence inside json text counts", `{"type":"item.completed","item":{"type":"agent_message","text":"` + "```" + `\n` + goodProof + `"}}`, []check{proofIs("met", "integrated", "all good")}},
		{"claude json result", `{"type":"result","subtype":"success","is_error":false,"result":"Done.\n` + goodProof + `\n[wave-doc-delta] state=owned","session_id":"s1"}`, []check{proofIs("met", "integrated", "all good"), docDeltaIs("owned")}},
		{"claude stream-json result", `{"type":"system","subtype":"init"}` + "\n" + `{"type":"result","subtype":"success","result":"` + goodProof + `"}`, []check{proofIs("met", "integrated", "all good")}},
		{"codex json text", `{"type":"item.completed","item":{"type":"agent_message","text":"done\n` + goodProof + `"}}`, []check{proofIs("met", "integrated", "all good")}},
		{"codex aggregated_output", `{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"` + goodProof + `\n"}}`, []check{proofIs("met", "integrated", "all good")}},
		{"claude stream-json content", `{"type":"assistant","message":{"content":[{"type":"text","text":"` + goodProof + `"}]}}`, []check{proofIs("met", "integrated", "all good")}},
		{"json content string", `{"type":"user","message":{"role":"user","content":"` + goodProof + `"}}`, []check{proofIs("met", "integrated", "all good")}},
		{"json with example fence not counted", `{"type":"assistant","message":{"content":[{"type":"text","text":"e.g.\n` + "```" + `\nhere:\n` + goodProof + `\n` + "```" + `"}]}}`, []check{noProof}},
		{"invalid json line ignored", `{"text": "` + goodProof, []check{noProof}},
		{"bad completion enum rejected", "[wave-proof] completion=done durability=none proof=unit state=met", []check{noProof, rejected(KindProof, 1, "completion")}},
		{"bad state enum rejected", "[wave-proof] completion=live durability=none proof=unit state=maybe", []check{noProof, rejected(KindProof, 1, "state")}},
		{"missing key rejected", "[wave-proof] completion=live durability=none state=met", []check{noProof, rejected(KindProof, 1, "missing required key proof")}},
		{"placeholder template rejected", "[wave-proof] completion=<contract|integrated> durability=<none> proof=<unit> state=<met|gap>", []check{noProof, rejected(KindProof, 1, "completion")}},
		{"rejected does not erase earlier accepted", goodProof + "\n[wave-proof] completion=bogus durability=none proof=unit state=met", []check{proofIs("met", "integrated", "all good"), rejected(KindProof, 1, "completion")}},
		{"unknown tag ignored", "[wave-frobnicate] a=b\n" + goodProof, []check{proofIs("met", "integrated", "all good")}},
		{"security counts must be integers", "[wave-security] state=clear findings=none approvals=0", []check{rejected(KindSecurity, 1, "findings"), func(s Signals) string {
			if s.Security != nil {
				return "security accepted"
			}
			return ""
		}}},
		{"components last per id", "[wave-component] component=api level=repo-landed state=gap\n[wave-component] component=db level=repo-landed state=met\n[wave-component] component=api level=repo-landed state=complete detail=fixed",
			[]check{func(s Signals) string {
				if len(s.Components) != 2 || s.Components["api"].State != "met" || s.Components["api"].Detail != "fixed" || s.Components["db"].State != "met" {
					return "components " + jsonOf(s.Components)
				}
				return ""
			}}},
		{"wave-verdict bare form", "[wave-verdict] fail detail=regression in login\n", []check{func(s Signals) string {
			if s.Verdict == nil || s.Verdict.Verdict != "fail" || s.Verdict.Detail != "regression in login" {
				return "verdict " + jsonOf(s.Verdict)
			}
			return ""
		}}},
		{"wave-verdict stale verdict: last wins", "[wave-verdict] fail\n[wave-verdict] PASS detail=fixed", []check{func(s Signals) string {
			if s.Verdict == nil || s.Verdict.Verdict != "pass" {
				return "verdict " + jsonOf(s.Verdict)
			}
			return ""
		}}},
		{"wave-verdict bad value rejected", "[wave-verdict] maybe", []check{rejected(KindVerdict, 1, "verdict")}},
		{"gate dims", "[wave-gate] architecture=pass integration=pass durability=gap live=pass docs=concerns detail=docs lag", []check{func(s Signals) string {
			if s.Gate == nil || s.Gate.Docs != "concerns" || s.Gate.Durability != "gap" || s.Gate.Detail != "docs lag" {
				return "gate " + jsonOf(s.Gate)
			}
			return ""
		}}},
		{"eval ids lowercased", "[wave-eval] state=satisfied targets=2 benchmarks=1 regressions=0 target_ids=Latency, errors benchmark_ids=B1", []check{func(s Signals) string {
			if s.Eval == nil || strings.Join(s.Eval.TargetIDs, ",") != "latency,errors" || strings.Join(s.Eval.BenchmarkIDs, ",") != "b1" {
				return "eval " + jsonOf(s.Eval)
			}
			return ""
		}}},
		{"gaps accumulate", "[wave-gap] kind=docs detail=a\n[wave-gap] kind=ops detail=b", []check{func(s Signals) string {
			if len(s.Gaps) != 2 || s.Gaps[1].Kind != "ops" {
				return "gaps " + jsonOf(s.Gaps)
			}
			return ""
		}}},
		{"doc delta paths", "[wave-doc-delta] state=shared-plan paths=docs/a.md, docs/b.md detail=updated plan", []check{func(s Signals) string {
			if s.DocDelta == nil || len(s.DocDelta.Paths) != 2 || s.DocDelta.Paths[1] != "docs/b.md" || s.DocDelta.Detail != "updated plan" {
				return "doc delta " + jsonOf(s.DocDelta)
			}
			return ""
		}}},
		{"phase marker", "[wave-phase] coding\n[wave-phase] testing", []check{func(s Signals) string {
			if s.Phase != "testing" {
				return "phase " + s.Phase
			}
			return ""
		}}},
		{"unknown keys recorded", "[wave-doc-closure] state=closed colour=blue", []check{func(s Signals) string {
			d := s.Diagnostics[KindDocClosure]
			if s.DocClosure == nil || len(d.UnknownKeysSeen) != 1 || d.UnknownKeysSeen[0] != "colour" {
				return "diag " + jsonOf(d)
			}
			return ""
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ParseLog(tc.log)
			for _, c := range tc.checks {
				if msg := c(s); msg != "" {
					t.Errorf("ParseLog(%q): %s", tc.log, msg)
				}
			}
		})
	}
}

func TestParseLogOnlyTail(t *testing.T) {
	old := "[wave-proof] completion=live durability=none proof=unit state=gap detail=old\n"
	log := old + strings.Repeat("x", MaxLogChars+10) + "\n" + "tail line\n"
	if s := ParseLog(log); s.Proof != nil {
		t.Fatalf("marker beyond the last %d chars was parsed: %+v", MaxLogChars, s.Proof)
	}
	// A line cut by the window must not be read from the cut: here the
	// cut falls right before a marker quoted inside prose.
	marker := "[wave-proof] completion=live durability=none proof=unit state=met"
	rest := "\n" + strings.Repeat("y", MaxLogChars-len(marker)-2) + "\n"
	log = "the agent must never print " + marker + rest
	if got := log[len(log)-MaxLogChars:]; !strings.HasPrefix(got, marker) {
		t.Fatalf("test setup: window starts with %.20q", got)
	}
	if s := ParseLog(log); s.Proof != nil {
		t.Fatalf("prose cut by the window parsed as a marker: %+v", s.Proof)
	}
}

// claude --output-format json prints its whole answer as one JSON line;
// a line longer than the window is read whole, not dropped.
func TestParseLogReadsLongJSONResultWhole(t *testing.T) {
	answer := strings.Repeat("lorem ipsum ", MaxLogChars/12+100) + "\\n" + goodProof
	log := "starting\n" + `{"type":"result","result":"` + answer + `"}` + "\n"
	if s := ParseLog(log); s.Proof == nil {
		t.Fatal("marker in a long JSON result line was not read")
	}
}

// stream-json repeats the final answer in its result event; its markers
// are counted once.
func TestParseLogStreamJSONResultCountedOnce(t *testing.T) {
	text := `{"type":"assistant","message":{"content":[{"type":"text","text":"` + goodProof + `"}]}}` + "\n" +
		`{"type":"result","result":"` + goodProof + `"}`
	if d := ParseLog(text).Diagnostics[KindProof]; d.RawCount != 1 || d.AcceptedCount != 1 {
		t.Fatalf("diagnostics = %s", jsonOf(d))
	}
}

func TestParseLogDiagnosticsCount(t *testing.T) {
	log := goodProof + "\n[wave-proof] completion=x durability=none proof=unit state=met\n[wave-proof] state=met\n[wave-proof] completion=y durability=none proof=unit state=met\n[wave-proof] completion=z durability=none proof=unit state=met"
	d := ParseLog(log).Diagnostics[KindProof]
	if d.RawCount != 5 || d.AcceptedCount != 1 || d.RejectedCount != 4 || len(d.RejectedSamples) != maxRejectedSamples {
		t.Fatalf("diagnostics = %s", jsonOf(d))
	}
}

func FuzzParseLog(f *testing.F) {
	for _, s := range []string{
		goodProof,
		"```\n" + goodProof + "\n```",
		"```\nprose\n" + goodProof,
		`{"item":{"text":"` + goodProof + `"}}`,
		"[wave-component] component=a level=b state=met detail=x=y",
		"[wave-verdict] pass",
		"- `[wave-gate] architecture=pass integration=pass durability=pass live=pass docs=pass`",
		"\x1b[31m[wave-security]\x1b[0m state=blocked findings=1 approvals=0",
		"[[[[[[[[[[[[{\"text\":\"[wave-proof]\"}]]]]]]]]]]]]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sig := ParseLog(s)
		for k, d := range sig.Diagnostics {
			if d.AcceptedCount+d.RejectedCount != d.RawCount {
				t.Fatalf("%s: accepted %d + rejected %d != raw %d", k, d.AcceptedCount, d.RejectedCount, d.RawCount)
			}
		}
		if _, err := json.Marshal(sig); err != nil {
			t.Fatalf("signals do not marshal: %v", err)
		}
	})
}
