package dashboard

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// RenderBacklogStatus writes `backlog status` for a terminal: the run,
// its tally, waits, one line per issue and the questions. Issue text is
// cleaned of control characters.
func RenderBacklogStatus(w io.Writer, v backlog.StatusView) {
	t := v.Tally
	fmt.Fprintf(w, "backlog run %s (%s) · wave branch %s → %s · source %s\n", v.Run.ID, v.State, v.Run.WaveBranch, v.Run.Base, v.Run.Source)
	fmt.Fprintf(w, "tally: merged %d / in flight %d / blocked %d / needs-input %d", t.Merged, t.InFlight, t.Blocked, t.NeedsInput)
	if t.Planned > 0 {
		fmt.Fprintf(w, " / waiting %d", t.Planned)
	}
	if t.Stopped > 0 {
		fmt.Fprintf(w, " / stopped %d", t.Stopped)
	}
	fmt.Fprintf(w, " · elapsed %s", (time.Duration(v.ElapsedSec) * time.Second).String())
	if v.Usage != nil {
		fmt.Fprintf(w, " · spent %s", v.Usage.String())
	}
	if v.APICalls > 0 {
		fmt.Fprintf(w, " · %d API calls", v.APICalls)
	}
	fmt.Fprintln(w)
	if f := v.ForeignCommit; f != nil {
		fmt.Fprintf(w, "%s\n", backlog.ForeignLine(*f))
	}
	if line := backlog.SandboxLine(v.Sandbox); line != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	if v.Waiting != nil {
		fmt.Fprintf(w, "%s\n", backlog.WaitingLine(v.Waiting))
	}
	for _, p := range v.Paused {
		fmt.Fprintf(w, "%s\n", p.Line)
	}
	for _, p := range v.Probes {
		fmt.Fprintf(w, "%s\n", backlog.ProbeLine(p))
	}
	if a := v.WaitingForAnswers; a != nil {
		fmt.Fprintf(w, "%s\n", backlog.InputWaitLine(*a))
	}
	if v.Train != nil && v.State != "finished" {
		fmt.Fprintf(w, "%s\n", v.Train.Line)
	}
	for _, is := range v.Issues {
		renderBacklogIssue(w, is)
	}
	if len(v.NeedsInput) > 0 {
		fmt.Fprintf(w, "needs input:\n")
		for _, q := range v.NeedsInput {
			text := q.Question
			if text == "" {
				text = q.Title
			}
			fmt.Fprintf(w, "  #%-5d %s\n", q.Issue, backlog.OneLine(text))
		}
	}
	for _, d := range v.Dropped {
		fmt.Fprintf(w, "  #%-5d dropped     %s %s\n", d.Issue, d.Reason, backlog.OneLine(d.Detail))
	}
	for _, b := range v.BlockedHosts {
		fmt.Fprintf(w, "%s\n", backlog.BlockedLine(b))
	}
	if v.FinalPR != nil {
		line := "final PR: " + v.FinalPR.URL
		if c := v.FinalPRChecks; c != nil {
			line += " · " + backlog.ChecksLine(c)
		}
		fmt.Fprintf(w, "%s\n", line)
	}
	for _, b := range v.BadEvents {
		fmt.Fprintf(w, "warning: corrupt event line skipped at %s\n", b)
	}
}

// renderBacklogIssue is one issue's line of `backlog status` and the
// lines under it (question, detail, conflicting or outside files).
func renderBacklogIssue(w io.Writer, is backlog.IssueView) {
	oneLine := backlog.OneLine
	extra := []string{}
	if is.Branch != "" {
		extra = append(extra, is.Branch)
	}
	if is.CommitsAhead != nil {
		extra = append(extra, fmt.Sprintf("%d ahead", *is.CommitsAhead))
	}
	if is.DirtyFiles != nil {
		extra = append(extra, fmt.Sprintf("%d dirty", *is.DirtyFiles))
	}
	if is.LastOutputSec != nil {
		extra = append(extra, fmt.Sprintf("output %ds ago", *is.LastOutputSec))
	}
	if is.QueuePosition > 0 {
		extra = append(extra, fmt.Sprintf("queue #%d", is.QueuePosition))
	}
	if is.Verify != "" {
		v := "verify " + is.Verify
		if len(is.VerifyAhead) > 0 && !backlog.Terminal(is.State) {
			v += " on top of " + issueRefs(is.VerifyAhead)
		}
		extra = append(extra, v)
	}
	if is.Checks != nil && !backlog.Terminal(is.State) {
		extra = append(extra, backlog.ChecksLine(is.Checks))
	}
	if is.PR != nil && is.PR.URL != "" {
		extra = append(extra, is.PR.URL)
	}
	if is.Reworks > 0 {
		extra = append(extra, backlog.ReworkLabel(is.Reworks, is.ReworkFrom))
	}
	if is.Usage != nil {
		extra = append(extra, "spent "+oneLine(is.Usage.String()))
	}
	fmt.Fprintf(w, "  #%-5d %-11s %s  [%s]\n", is.Number, is.State, oneLine(is.Title), strings.Join(extra, ", "))
	if is.Question != "" && is.State == backlog.StateParked {
		fmt.Fprintf(w, "         question: %s\n", oneLine(is.Question))
	} else if is.Detail != "" && (is.State == backlog.StateParked || is.State == backlog.StateFailed) {
		fmt.Fprintf(w, "         %s\n", oneLine(is.Detail))
	}
	if len(is.Files) > 0 && is.Conflicts > 0 && !backlog.Terminal(is.State) || is.State == backlog.StateParked && len(is.Files) > 0 {
		fmt.Fprintf(w, "         conflicting files: %s\n", oneLine(strings.Join(is.Files, ", ")))
	}
	if len(is.Outside) > 0 {
		fmt.Fprintf(w, "         changed outside its declared surface: %s\n", oneLine(strings.Join(is.Outside, ", ")))
	}
}

// issueRefs is "#3 #5".
func issueRefs(ns []int) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = "#" + strconv.Itoa(n)
	}
	return strings.Join(out, " ")
}
