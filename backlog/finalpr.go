package backlog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/mdfence"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// FinalPRInput is what the one pull request wave → base says.
type FinalPRInput struct {
	Run          *Run
	DefaultBase  bool   // base is the repository's default branch (Closes #n fires)
	CloseCommand string // how to close the issues otherwise
	Marker       string
	BaseConflict string // merging origin/<base> into the wave branch failed in these files
	// Spend is what each issue's worker and reviewer runs spent; Total
	// the whole run's (nil: nothing reported usage).
	Spend map[int]usage.Usage
	Total *usage.Usage
	// Outcomes is the lane's outcome ledger in one line (every backlog
	// run of the lane, this one included), "" when unknown.
	Outcomes string
}

// FinalPRTitle is the final PR's title.
func FinalPRTitle(r *Run) string {
	t := r.Tally()
	return fmt.Sprintf("%s: %d issue(s) merged", r.Info.WaveBranch, t.Merged)
}

// FinalPRBody is the final PR's body: a Closes line for every merged
// issue and only those, the worker PRs or branches, the tally, and the
// parked and needs-input issues with their questions.
func FinalPRBody(in FinalPRInput) string {
	r := in.Run
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	t := r.Tally()
	line("Backlog run `%s` merged %d issue(s) into `%s`, one at a time.", r.Info.ID, t.Merged, r.Info.WaveBranch)
	line("")
	line("Tally: merged %d / in flight %d / blocked %d / needs-input %d.", t.Merged, t.InFlight, t.Blocked, t.NeedsInput)
	line("")
	if in.Total != nil {
		line("Spent: %s.", in.Total.String())
		line("")
	}
	writeForeign(line, r)
	var merged, parked, asking []*IssueRun
	for _, is := range r.List() {
		switch is.State {
		case StateMerged:
			merged = append(merged, is)
		case StateParked, StateFailed:
			parked = append(parked, is)
		case StateNeedsInput:
			asking = append(asking, is)
		}
	}
	if len(merged) > 0 {
		line("## Merged")
		line("")
		for _, is := range merged {
			link := "branch `" + is.Branch + "`"
			if is.PR != nil && is.PR.URL != "" {
				link = is.PR.URL
			}
			line("- #%d %s — %s%s%s", is.Number, oneLineText(is.Title), link, ReworkNote(is.Reworks), spentNote(in.Spend, is.Number))
		}
		line("")
		if !in.DefaultBase {
			line("`%s` is not the default branch, so GitHub will not close these issues when this PR merges.", r.Info.Base)
			line("After it merges, run `%s` to close them.", in.CloseCommand)
			line("")
		}
		for _, is := range merged {
			line("Closes #%d", is.Number)
		}
		line("")
	}
	if len(parked) > 0 {
		line("## Parked (not in this PR)")
		line("")
		for _, is := range parked {
			line("- #%d %s — %s", is.Number, oneLineText(is.Title), oneLineText(is.Detail))
			if is.Question != "" {
				line("  - question: %s", oneLineText(is.Question))
			}
			if len(is.Files) > 0 && is.Conflicts > 0 {
				line("  - conflicting files: %s", codeList(is.Files))
			}
		}
		line("")
	}
	if bucket := r.Bucket(); len(asking) > 0 || len(bucket) > 0 {
		line("## Needs input (not in this PR)")
		line("")
		for _, is := range asking {
			line("- #%d %s — %s", is.Number, oneLineText(is.Title), oneLineText(is.Question))
		}
		for _, q := range bucket {
			line("- #%d %s — %s", q.Issue, oneLineText(q.Title), oneLineText(q.Question))
		}
		line("")
	}
	writeOutside(&b, r)
	writeSandbox(&b, r)
	writeSpend(&b, in)
	if in.BaseConflict != "" {
		line("Merging `%s` into the wave branch conflicted in %s; resolve it in this PR.", r.Info.Base, oneLineText(in.BaseConflict))
		line("")
	}
	if in.Outcomes != "" {
		line("Outcomes of this lane's backlog runs so far: %s.", in.Outcomes)
		line("")
	}
	if in.Marker != "" {
		line("%s", in.Marker)
	}
	return b.String()
}

// writeForeign says, first thing, that origin's wave branch holds a
// commit the run did not make: it is in this PR, attributed to no issue
// and never verified.
func writeForeign(line func(string, ...any), r *Run) {
	f := r.Foreign
	if f == nil {
		return
	}
	line("## A commit this run did not make is on the wave branch")
	line("")
	if f.Found == "" {
		line("`%s` was deleted on origin after this run last pushed it (at `%s`). Merges stopped there.", r.Info.WaveBranch, shortSHA(f.Expected))
	} else {
		line("`%s` on origin is at `%s`, not at `%s`, the tip this run pushed last. That commit (and any before it that the run did not make)",
			r.Info.WaveBranch, shortSHA(f.Found), shortSHA(f.Expected))
		line("is in this pull request, attributed to no issue and never verified. Merges stopped when it was found; review it before merging.")
	}
	line("")
}

// shortSHA is a commit id cut to twelve characters, hex digits only.
func shortSHA(s string) string {
	s = strings.Map(func(r rune) rune {
		if (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') {
			return r
		}
		return -1
	}, s)
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// spentNote is " · spent 12.3k tok $0.42" for an issue that reported usage.
func spentNote(spend map[int]usage.Usage, n int) string {
	if u, ok := spend[n]; ok && u.Known() {
		return " · spent " + u.String()
	}
	return ""
}

// writeSpend is the per-issue spend table: every issue with usage, merged
// or not (a parked issue cost money too), and the run's total. It is what
// `wave-orchestrator usage --by issue` prints for the run.
func writeSpend(b *strings.Builder, in FinalPRInput) {
	if in.Total == nil {
		return
	}
	nums := make([]int, 0, len(in.Spend))
	for n, u := range in.Spend {
		if u.Known() {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	fmt.Fprintf(b, "## Spend\n\n| issue | input | output | cache read | cache write | cost |\n|---|---|---|---|---|---|\n")
	row := func(what string, u usage.Usage) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", what, usage.TokensCell(u.InputTokens), usage.TokensCell(u.OutputTokens),
			usage.TokensCell(u.CacheReadTokens), usage.TokensCell(u.CacheWriteTokens), usage.CostCell(u.CostUSD))
	}
	for _, n := range nums {
		row(fmt.Sprintf("#%d", n), in.Spend[n])
	}
	row("total", *in.Total)
	b.WriteString("\n")
}

// codeList is file names (a worker's, so untrusted: a file may be named
// "Closes #9") as code spans, comma-separated.
func codeList(files []string) string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = oneLineText(f)
	}
	return strings.Join(out, ", ")
}

// oneLineText is untrusted text made safe for one markdown line (a
// title saying "Closes #7" closes nothing; no markup or mention renders).
func oneLineText(s string) string { return mdfence.Inline(s, 200) }

// writeOutside lists, per issue, the files its worker changed outside
// the issue's declared Files: list: merged anyway (surfacePolicy warn) or
// the reason it parked (park). A reviewer of this PR is told what no
// declaration covered, since the plan ran other work beside it.
func writeOutside(b *strings.Builder, r *Run) {
	var with []*IssueRun
	for _, is := range r.List() {
		if len(is.Outside) > 0 && (is.State == StateMerged || is.State == StateParked) {
			with = append(with, is)
		}
	}
	if len(with) == 0 {
		return
	}
	fmt.Fprintf(b, "## Changed outside the declared surface\n\n")
	for _, is := range with {
		how := "merged"
		if is.State != StateMerged {
			how = "parked, not in this PR"
		}
		fmt.Fprintf(b, "- #%d (%s): %s\n", is.Number, how, codeList(is.Outside))
	}
	fmt.Fprintf(b, "\n")
}

// writeSandbox says when workers of the run ran without a sandbox, and
// lists the hosts the sandbox refused (a worker that tried one may have
// been told to by the issue's text).
func writeSandbox(b *strings.Builder, r *Run) {
	if st := r.Sandbox; st != nil && st.Unconfined != "" {
		fmt.Fprintf(b, "## Sandbox\n\nWorkers of this run ran without a sandbox (%s): they could read the home directory of the "+
			"user who ran them and reach any host. Review their changes with that in mind.\n\n", oneLineText(st.Unconfined))
	}
	blocked := r.BlockedHosts()
	if len(blocked) == 0 {
		return
	}
	fmt.Fprintf(b, "## Blocked hosts\n\nThe sandbox refused these connections (not in `backlog.sandbox.allowHosts`):\n\n")
	for _, h := range blocked {
		refs := make([]string, len(h.Issues))
		for i, n := range h.Issues {
			refs[i] = fmt.Sprintf("#%d", n)
		}
		fmt.Fprintf(b, "- %s — %s\n", oneLineText(h.Host), strings.Join(refs, ", "))
	}
	fmt.Fprintf(b, "\n")
}

// ReworkNote is ", merged after N rework round(s)" for an issue that was
// sent back before it merged, else "".
func ReworkNote(rounds int) string {
	switch {
	case rounds == 1:
		return ", merged after 1 rework round"
	case rounds > 1:
		return fmt.Sprintf(", merged after %d rework rounds", rounds)
	}
	return ""
}
