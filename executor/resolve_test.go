package executor

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

func TestResolvePrecedence(t *testing.T) {
	lane := testLane("/repo")
	lane.RuntimePolicy.DefaultExecutorByRole["integration"] = "opencode"
	cases := []struct {
		name     string
		ec       *wave.ExecutorConfig
		role     string
		cli      string
		laneDef  string
		wantID   string
		wantBy   string
		wantModl string
	}{
		{"agent id beats everything", &wave.ExecutorConfig{ID: ptr("codex"), Profile: ptr("deep-review")}, "cont-qa", "opencode", "", "codex", ByAgentID, "claude-opus-4"},
		{"profile id beats role default", &wave.ExecutorConfig{Profile: ptr("Deep-Review")}, "integration", "", "", "claude", ByAgentProfile, "claude-opus-4"},
		{"role default beats --executor", nil, "integration", "codex", "", "opencode", ByLaneRole, ""},
		{"--executor beats lane default", nil, "implementation", "claude", "opencode", "claude", ByCLI, "claude-sonnet-4"},
		// The reference's launch sets --executor to the lane default when
		// the flag is absent, so the lane default reads as cli-default.
		{"lane default", nil, "implementation", "", "opencode", "opencode", ByCLI, ""},
		{"built-in default codex", nil, "implementation", "", "", "codex", ByCLI, ""},
		{"profile without id keeps model", &wave.ExecutorConfig{Profile: ptr("cheap")}, "implementation", "", "", "codex", ByCLI, "gpt-5-mini"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := *lane
			l.Executors.Default = tc.laneDef
			a := wave.Agent{ID: "A3", Executor: tc.ec}
			r, err := Resolve(&a, tc.role, &l, tc.cli, false)
			if err != nil {
				t.Fatal(err)
			}
			if r.ID != tc.wantID || r.SelectedBy != tc.wantBy || deref(r.Model) != tc.wantModl {
				t.Errorf("got id=%s by=%s model=%q, want %s %s %q", r.ID, r.SelectedBy, deref(r.Model), tc.wantID, tc.wantBy, tc.wantModl)
			}
		})
	}
}

func TestResolveMergesVendorSections(t *testing.T) {
	lane := testLane("/repo")
	lane.Executors.Codex.Config = []string{"lane=1", "shared=1"}
	lane.Executors.Codex.Sandbox = ptr("read-only")
	lane.Executors.Profiles["p"] = config.Profile{Codex: &wave.CodexConfig{Config: []string{"shared=1", "profile=1"}, Sandbox: ptr("workspace-write")},
		Fallbacks: []string{"opencode"}, Tags: []string{"a"}, Budget: &wave.Budget{Turns: ptr(5), Minutes: ptr(10)}}
	a := wave.Agent{ID: "A3", Executor: &wave.ExecutorConfig{Profile: ptr("p"), Fallbacks: []string{"claude", "opencode"}, Tags: []string{"b", "a"},
		Budget: &wave.Budget{Minutes: ptr(7)}, Codex: &wave.CodexConfig{Config: []string{"agent=1"}}}}
	r, err := Resolve(&a, "implementation", lane, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"lane=1", "shared=1", "profile=1", "agent=1"}; !slices.Equal(r.Codex.Config, want) {
		t.Errorf("codex config = %v, want %v", r.Codex.Config, want)
	}
	if deref(r.Codex.Sandbox) != "workspace-write" {
		t.Errorf("sandbox = %s, want the profile's", deref(r.Codex.Sandbox))
	}
	if !slices.Equal(r.Fallbacks, []string{"opencode", "claude"}) || !slices.Equal(r.Tags, []string{"a", "b"}) {
		t.Errorf("fallbacks=%v tags=%v", r.Fallbacks, r.Tags)
	}
	if *r.Budget.Turns != 5 || *r.Budget.Minutes != 7 {
		t.Errorf("budget = %d/%d, want turns from profile, minutes from agent", *r.Budget.Turns, *r.Budget.Minutes)
	}
	if r.Claude.MaxTurns != nil || r.Claude.MaxTurnsSource != nil || r.Opencode.Steps != nil || r.Opencode.StepsSource != nil {
		t.Errorf("budget.turns filled a vendor turn limit (the reference keeps it advisory): claude %v/%v opencode %v/%v",
			r.Claude.MaxTurns, r.Claude.MaxTurnsSource, r.Opencode.Steps, r.Opencode.StepsSource)
	}
	if deref(r.Claude.PermissionMode) != DefaultPermissionMode {
		t.Errorf("claude permission mode = %q: a headless agent without it wedges on a prompt", deref(r.Claude.PermissionMode))
	}
}

func TestResolveRetryPolicy(t *testing.T) {
	lane := testLane("/repo")
	cases := []struct {
		name         string
		ec           *wave.ExecutorConfig
		proofCentric bool
		wantPolicy   string
		wantChain    []string
	}{
		{"default allows lane order minus self", nil, false, FallbackAllowed, []string{"claude", "opencode"}},
		{"proof-centric is sticky", nil, true, Sticky, nil},
		{"explicit policy beats proof-centric", &wave.ExecutorConfig{RetryPolicy: ptr("fallback-allowed"), Fallbacks: []string{"claude"}}, true, FallbackAllowed, []string{"claude"}},
		{"sticky empties the chain", &wave.ExecutorConfig{RetryPolicy: ptr("sticky"), Fallbacks: []string{"claude"}}, false, Sticky, nil},
		{"allow flag beats policy", &wave.ExecutorConfig{RetryPolicy: ptr("sticky"), AllowFallbackOnRetry: ptr(true), Fallbacks: []string{"claude"}}, false, Sticky, nil},
		{"disallow flag", &wave.ExecutorConfig{AllowFallbackOnRetry: ptr(false), Fallbacks: []string{"claude"}}, false, Sticky, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Resolve(&wave.Agent{ID: "A3", Executor: tc.ec}, "implementation", lane, "", tc.proofCentric)
			if err != nil {
				t.Fatal(err)
			}
			if r.RetryPolicy != tc.wantPolicy || !slices.Equal(Chain(r), tc.wantChain) {
				t.Errorf("policy=%s chain=%v, want %s %v", r.RetryPolicy, Chain(r), tc.wantPolicy, tc.wantChain)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	lane := testLane("/repo")
	cases := []struct {
		ec   *wave.ExecutorConfig
		want string
	}{
		{&wave.ExecutorConfig{Profile: ptr("nope")}, `agent A3: unknown executor profile "nope"`},
		{&wave.ExecutorConfig{ID: ptr("gemini")}, `agent A3: unknown executor "gemini"`},
		{&wave.ExecutorConfig{Fallbacks: []string{"gemini"}}, `agent A3: unknown fallback executor "gemini"`},
		{&wave.ExecutorConfig{ID: ptr("shell")}, "agent A3: executor shell needs shell.command"},
	}
	for _, tc := range cases {
		_, err := Resolve(&wave.Agent{ID: "A3", Executor: tc.ec}, "implementation", lane, "", false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

func TestFallback(t *testing.T) {
	lane := testLane("/repo")
	a := implAgent() // codex, fallbacks [claude]
	base, err := Resolve(&a, "implementation", lane, "", false)
	if err != nil {
		t.Fatal(err)
	}
	on := func(cmds ...string) func(string) bool {
		return func(c string) bool { return slices.Contains(cmds, c) }
	}
	cases := []struct {
		name        string
		r           Resolved
		avail       func(string) bool
		wantID      string
		wantBlocked bool
	}{
		{"first available candidate", base, on("codex", "claude"), Claude, false},
		{"no candidate, original works: retry on original (reference blocks)", base, on("codex"), Codex, false},
		{"no candidate, original gone: blocked", base, on(), Codex, true},
		{"empty chain retries in place even when unavailable", withChain(base, nil), on(), Codex, false},
		{"skips tried executors", withHistory(withChain(base, []string{"claude", "opencode"}), Claude), on("claude", "opencode"), Opencode, false},
		{"local needs no command", withChain(base, []string{"local"}), on(), Local, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			next, blocked := fallback(tc.r, 2, "", tc.avail)
			if next.ID != tc.wantID || blocked != tc.wantBlocked {
				t.Fatalf("got %s blocked=%v, want %s blocked=%v", next.ID, blocked, tc.wantID, tc.wantBlocked)
			}
			if next.ID != tc.r.ID {
				last := next.History[len(next.History)-1]
				if !next.FallbackUsed || last.Attempt != 2 || last.ExecutorID != next.ID || last.Reason != "retry:failed-attempt" || next.SelectedBy != ByRetryFallback {
					t.Errorf("fallback not recorded: %+v", next)
				}
				if len(tc.r.History) == len(next.History) {
					t.Error("history shared with the input")
				}
			}
		})
	}
	// A fallback to claude takes claude's model, never codex's.
	next, _ := fallback(base, 2, "proof-gap", on("claude"))
	if deref(next.Model) != "claude-sonnet-4" || deref(next.FallbackReason) != "retry:proof-gap" {
		t.Errorf("model=%q reason=%q", deref(next.Model), deref(next.FallbackReason))
	}
}

func withChain(r Resolved, c []string) Resolved { r.Fallbacks = c; return r }

func withHistory(r Resolved, id string) Resolved {
	r.History = append(slices.Clone(r.History), HistoryEntry{Attempt: 1, ExecutorID: id, Reason: "x"})
	return r
}

func TestCommand(t *testing.T) {
	r := Resolved{ID: Shell, Shell: wave.ShellConfig{Command: ptr(`'/opt/my agent' --x {prompt_file}`)}}
	if got := Command(r); got != "/opt/my agent" {
		t.Errorf("shell command = %q", got)
	}
	if got := Command(Resolved{ID: Local}); got != "" {
		t.Errorf("local command = %q, want empty", got)
	}
}

func TestFileKeys(t *testing.T) {
	keys := []string{"id", "claude.max_turns", "codex.add_dirs", "claude.allowed_http_hook_urls", "opencode.config_json", "claude.effort"}
	for _, tc := range []struct {
		vendor string
		want   []string
	}{
		{Claude, []string{"maxTurns", "allowedHttpHookUrls", "effort"}},
		{Codex, []string{"addDirs"}},
		{Opencode, []string{"configJson"}},
		{Local, nil},
	} {
		if got := fileKeys(keys, tc.vendor); !slices.Equal(got, tc.want) {
			t.Errorf("fileKeys(%s) = %v, want %v", tc.vendor, got, tc.want)
		}
	}
}

// A Resolved built without Resolve (as tests and replays do) still
// serialises in the reference's shape: lists as [], explicit keys as null.
func TestResolvedJSONWithoutResolve(t *testing.T) {
	b, err := json.Marshal(Resolved{ID: Codex})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"fallbacks":[]`, `"executorHistory":[]`, `"budget":null`, `"profileName":null`,
		`"maxTurnsSource":null`, `"stepsSource":null`, `"config":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	for _, absent := range []string{"initialModel", `"local"`, `"shell"`} {
		if strings.Contains(string(b), absent) {
			t.Errorf("%s has %s, which the reference never writes", b, absent)
		}
	}
}

// A fallback that would exceed the lane's runtime mix target is blocked
// and the next candidate tried; with every candidate over target the retry
// stays on a usable current executor, and blocks only when it is gone.
func TestFallbackWithinRuntimeMix(t *testing.T) {
	lane := testLane("/repo")
	a := implAgent()
	base, err := Resolve(&a, "implementation", lane, "", false)
	if err != nil {
		t.Fatal(err)
	}
	r := withChain(base, []string{"claude", "opencode"})
	all := func(string) bool { return true }
	targets := map[string]int{"Claude": 1, "opencode": 2}
	fits := func(counts map[string]int) func(string) bool {
		return func(id string) bool { return MixFits(targets, counts, id) }
	}
	next, blocked, mix := FallbackWithin(r, 2, "x", all, fits(map[string]int{"codex": 3, "claude": 1}))
	if next.ID != Opencode || blocked || !slices.Equal(mix, []string{"claude"}) {
		t.Fatalf("got %s blocked=%v mix=%v, want opencode after claude is mix-blocked", next.ID, blocked, mix)
	}
	next, blocked, mix = FallbackWithin(r, 2, "x", all, fits(map[string]int{"claude": 1, "opencode": 2}))
	if next.ID != Codex || blocked || len(mix) != 2 {
		t.Fatalf("all over target: got %s blocked=%v mix=%v, want a retry on codex", next.ID, blocked, mix)
	}
	next, blocked, _ = FallbackWithin(r, 2, "x", func(c string) bool { return c != "codex" }, fits(map[string]int{"claude": 1, "opencode": 2}))
	if next.ID != Codex || !blocked {
		t.Fatalf("all over target, codex gone: got %s blocked=%v, want blocked", next.ID, blocked)
	}
	if next, _, mix := FallbackWithin(r, 2, "x", all, nil); next.ID != Claude || mix != nil {
		t.Fatalf("no targets: %s %v", next.ID, mix)
	}
	if !MixFits(targets, map[string]int{}, "local") || MixFits(map[string]int{"local": 0}, nil, "local") {
		t.Fatal("MixFits: untargeted must fit, a zero target must not")
	}
}

// fallback is FallbackWithin with no runtime mix targets.
func fallback(r Resolved, attempt int, statusCode string, available func(string) bool) (Resolved, bool) {
	next, blocked, _ := FallbackWithin(r, attempt, statusCode, available, nil)
	return next, blocked
}
