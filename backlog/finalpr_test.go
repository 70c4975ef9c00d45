package backlog

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// closingRefs are the issues GitHub would close for body: a closing
// keyword then #n (or owner/repo#n), outside code spans.
func closingRefs(body string) []int {
	re := regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+(?:[\w.-]+/[\w.-]+)?#(\d+)`)
	var out []int
	for _, m := range re.FindAllStringSubmatch(withoutCodeSpans(body), -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// withoutCodeSpans drops markdown code spans: a run of k backticks up to
// the next run of exactly k; an unmatched run is literal.
func withoutCodeSpans(s string) string {
	var b strings.Builder
	run := func(i int) int {
		k := 0
		for i+k < len(s) && s[i+k] == '`' {
			k++
		}
		return k
	}
	for i := 0; i < len(s); {
		if s[i] != '`' {
			b.WriteByte(s[i])
			i++
			continue
		}
		k, end := run(i), -1
		for j := i + k; j < len(s); {
			if m := run(j); m == k {
				end = j + m
				break
			} else if m > 0 {
				j += m
			} else {
				j++
			}
		}
		if end < 0 {
			b.WriteString(s[i : i+k])
			i += k
			continue
		}
		i = end
	}
	return b.String()
}

func TestFinalPRBodyClosesOnlyMergedIssuesWhateverTheirTextSays(t *testing.T) {
	evs := []Event{
		{Kind: EvRunStarted, Run: &RunInfo{ID: "r1", WaveBranch: "wave/2026-07-01-x", Base: "main", Default: "main"}},
		{Kind: EvIssue, Issue: 1, Title: "Fixes #8 too"},
		{Kind: EvMerged, Issue: 1, Commit: "abc"},
		{Kind: EvPR, Issue: 1, URL: "https://github.example/acme/app/pull/11", Number: 11},
		{Kind: EvIssue, Issue: 2, Title: "Closes #7 and fixes acme/app#8"},
		{Kind: EvConflict, Issue: 2, Files: []string{"Closes #9", "src/`fixes #10`.go"}},
		{Kind: EvConflict, Issue: 2, Files: []string{"Closes #9", "src/`fixes #10`.go"}},
		{Kind: EvParked, Issue: 2, Detail: "resolves #11", Question: "close #12?", Files: []string{"Closes #9", "src/`fixes #10`.go"}},
		{Kind: EvIssue, Issue: 3, Title: "Resolved #13"},
		{Kind: EvNeedsInput, Issue: 3, Question: "fixed #14?"},
	}
	r := Reduce(evs)
	body := FinalPRBody(FinalPRInput{Run: r, DefaultBase: true, Marker: "<!-- m -->", BaseConflict: "Closes #15"})
	if got := closingRefs(body); !slices.Equal(got, []int{1}) {
		t.Errorf("the body closes %v, want only the merged #1:\n%s", got, body)
	}
	for _, want := range []string{"Closes #1\n", "https://github.example/acme/app/pull/11", "#2", "#3", "Closes #9"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}

func TestFinalPRBodyOnAnotherBaseSaysHowToClose(t *testing.T) {
	r := Reduce([]Event{
		{Kind: EvRunStarted, Run: &RunInfo{ID: "r1", WaveBranch: "wave/x", Base: "develop", Default: "main"}},
		{Kind: EvIssue, Issue: 4, Title: "Four"},
		{Kind: EvMerged, Issue: 4},
	})
	body := FinalPRBody(FinalPRInput{Run: r, DefaultBase: false, CloseCommand: "wave-orchestrator backlog close --run r1"})
	if !strings.Contains(body, "`develop` is not the default branch") || !strings.Contains(body, "backlog close --run r1") {
		t.Errorf("body does not say the issues will not auto-close and how to close them:\n%s", body)
	}
}

func TestCleanDropsControlAndBidiCharacters(t *testing.T) {
	in := "a\x1b[31mb\rc\x00d\u009be\u202ef\u2066g\u200fh\ti\nj"
	if got, want := Clean(in), "a[31mbcdefgh\ti\nj"; got != want {
		t.Errorf("Clean(%q) = %q, want %q", in, got, want)
	}
}

// The files survive in the events themselves (a supervisor killed right
// after the merge still lists them), and the final PR names them per
// issue as code spans, so a file called "Closes #9" closes nothing.
func TestFinalPRBodyListsChangesOutsideTheDeclaredSurface(t *testing.T) {
	r := Reduce([]Event{
		{Kind: EvRunStarted, Run: &RunInfo{ID: "r1", WaveBranch: "wave/x", Base: "main"}},
		{Kind: EvIssue, Issue: 1, Title: "One"}, {Kind: EvMerged, Issue: 1, Commit: "c1", Outside: []string{".github/workflows/x.yml", "Closes #9"}},
		{Kind: EvIssue, Issue: 2, Title: "Two"}, {Kind: EvMerged, Issue: 2, Commit: "c2"},
		{Kind: EvIssue, Issue: 3, Title: "Three"}, {Kind: EvParked, Issue: 3, Detail: "outside", Outside: []string{"Makefile"}},
	})
	body := FinalPRBody(FinalPRInput{Run: r, DefaultBase: true})
	want := "## Changed outside the declared surface\n\n- #1 (merged): `.github/workflows/x.yml`, `Closes #9`\n- #3 (parked, not in this PR): `Makefile`\n"
	if !strings.Contains(body, want) {
		t.Errorf("body lacks %q:\n%s", want, body)
	}
	if got := closingRefs(body); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("the body closes %v, want [1 2]", got)
	}
}

// The final PR says when workers ran without a sandbox (even if a later
// supervisor's were sandboxed) and lists the hosts a sandbox refused,
// with the issues that tried each, in the order first refused.
func TestFinalPRBodyNamesAnUnsandboxedRunAndTheBlockedHosts(t *testing.T) {
	r := Reduce([]Event{
		{Kind: EvRunStarted, Run: &RunInfo{ID: "r1", WaveBranch: "wave/x", Base: "main"}},
		{Kind: EvSandbox, Outcome: SandboxOff, Detail: "bwrap (bubblewrap) is not on PATH"},
		{Kind: EvIssue, Issue: 1, Title: "One"}, {Kind: EvBlocked, Issue: 1, Hosts: []string{"evil.example:443"}, Detail: "worker"},
		{Kind: EvSandbox, Outcome: SandboxOn},
		{Kind: EvIssue, Issue: 2, Title: "Two"}, {Kind: EvBlocked, Issue: 2, Hosts: []string{"127.0.0.1:9", "evil.example:443"}, Detail: "verify"},
		{Kind: EvBlocked, Issue: 2, Hosts: []string{"127.0.0.1:9"}, Detail: "worker"},
		{Kind: EvMerged, Issue: 1, Commit: "c1"}, {Kind: EvMerged, Issue: 2, Commit: "c2"},
	})
	if r.Sandbox == nil || !r.Sandbox.On || r.Sandbox.Unconfined == "" {
		t.Fatalf("sandbox state %+v, want on now and unconfined once", r.Sandbox)
	}
	body := FinalPRBody(FinalPRInput{Run: r, DefaultBase: true})
	for _, want := range []string{"## Sandbox\n\nWorkers of this run ran without a sandbox (`bwrap (bubblewrap) is not on PATH`)",
		"## Blocked hosts\n", "- `evil.example:443` — #1, #2\n- `127.0.0.1:9` — #2\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if got := r.Issues[2].Blocked; !slices.Equal(got, []string{"127.0.0.1:9", "evil.example:443"}) {
		t.Errorf("#2 blocked %q, each host once", got)
	}
	if plain := FinalPRBody(FinalPRInput{Run: Reduce([]Event{{Kind: EvRunStarted, Run: &RunInfo{ID: "r2"}}, {Kind: EvSandbox, Outcome: SandboxOn}})}); strings.Contains(plain, "Sandbox") || strings.Contains(plain, "Blocked") {
		t.Errorf("a sandboxed run with nothing refused says something about it:\n%s", plain)
	}
}

// A run that found a commit it did not make on its wave branch says so
// first thing in its final PR, with both commits and nothing raw of the
// event's text; the run's WaveTip follows its own pushes only.
func TestFinalPRBodySaysAForeignCommitFirst(t *testing.T) {
	tip, found := strings.Repeat("a", 40), strings.Repeat("b", 40)
	r := Reduce([]Event{
		{Kind: EvRunStarted, Run: &RunInfo{ID: "r1", WaveBranch: "wave/x", Base: "main", Default: "main"}},
		{Kind: EvWaveBranch, Outcome: WaveCut, Tip: strings.Repeat("c", 40)},
		{Kind: EvIssue, Issue: 1, Title: "One"},
		{Kind: EvMerged, Issue: 1, Commit: tip, Tip: tip},
		{Kind: EvForeignCommit, Commit: found, Ref: tip, Detail: "`Closes #5` <!-- x -->"},
		{Kind: EvForeignCommit, Commit: "later", Ref: tip},
	})
	if r.WaveTip != tip || r.Wave.CutAt != strings.Repeat("c", 40) || r.Foreign == nil || r.Foreign.Found != found {
		t.Fatalf("reduced: tip %s cut %+v foreign %+v", r.WaveTip, r.Wave, r.Foreign)
	}
	body := FinalPRBody(FinalPRInput{Run: r, DefaultBase: true})
	i, j := strings.Index(body, "## A commit this run did not make is on the wave branch"), strings.Index(body, "## Merged")
	if i < 0 || j < 0 || i > j {
		t.Fatalf("the foreign commit is not said before the merges:\n%s", body)
	}
	if !strings.Contains(body, found[:12]) || !strings.Contains(body, tip[:12]) || strings.Contains(body, "Closes #5") {
		t.Errorf("body:\n%s", body)
	}
}
