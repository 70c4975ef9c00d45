package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// The backlog view's parts, each a list of lines at most width wide.
// Untrusted text — titles, questions, details, file names, branches —
// goes through clean before it reaches a cell.

// issueColumn is one column of the issue table.
type issueColumn = column[backlog.IssueView]

// since is how much older the read's ages are at the view's clock while
// the run is live; a finished run's numbers are final.
func (v backlogView) since() time.Duration {
	if v.st.State != "running" || v.readAt.IsZero() || v.now.Before(v.readAt) {
		return 0
	}
	return v.now.Sub(v.readAt)
}

// head is the run's header (wrapped onto a second line when narrow) and
// the tally, or why there is nothing to show.
func (v backlogView) head(width int) []string {
	p := newPalette(v.cfg.Color)
	var b strings.Builder
	switch {
	case !v.loaded && v.loadErr == nil:
		return []string{p.dim.Render("reading the lane's backlog runs …")}
	case !v.found:
		b.WriteString(p.dim.Render("no backlog run on this lane yet") + "\n")
		b.WriteString(fit(p.dim.Render("start one: wave-orchestrator backlog run --issues 12,15,18"), width) + "\n")
		return splitLines(b.String())
	}
	r := v.st.Run
	parts := []string{
		p.bold.Render("backlog " + clean(r.ID)),
		p.run(v.st.State),
		clean(r.WaveBranch) + " → " + clean(r.Base),
		"source " + clean(r.Source),
		"elapsed " + dur(time.Duration(v.st.ElapsedSec)*time.Second+v.since()),
	}
	if v.st.APICalls > 0 {
		parts = append(parts, fmt.Sprintf("%d API calls", v.st.APICalls))
	}
	writeParts(&b, parts, width)
	b.WriteString(fit(tallyLine(v.st.Tally, p), width) + "\n")
	if f := v.st.ForeignCommit; f != nil {
		b.WriteString(fit(p.bad.Render(backlog.ForeignLine(*f)), width) + "\n")
	}
	if line := backlog.SandboxLine(v.st.Sandbox); line != "" {
		b.WriteString(fit(p.warn.Render(line), width) + "\n")
	}
	if v.st.Waiting != nil {
		b.WriteString(fit(p.warn.Render(backlog.WaitingLine(v.st.Waiting)), width) + "\n")
	}
	for _, pz := range v.st.Paused {
		b.WriteString(fit(p.warn.Render(clean(pz.Line)), width) + "\n")
	}
	if a := v.st.WaitingForAnswers; a != nil {
		b.WriteString(fit(p.warn.Render(backlog.InputWaitLine(*a)), width) + "\n")
	}
	if t := v.st.Train; t != nil && v.st.State != "finished" {
		b.WriteString(fit(p.live.Render(t.Line), width) + "\n")
	}
	return splitLines(b.String())
}

// tallyLine is the count the supervisor prints at every checkpoint.
func tallyLine(t backlog.Tally, p palette) string {
	s := fmt.Sprintf("merged %s / in flight %s / blocked %s / needs-input %s",
		p.good.Render(itoa(t.Merged)), p.live.Render(itoa(t.InFlight)), p.bad.Render(itoa(t.Blocked)), p.warn.Render(itoa(t.NeedsInput)))
	if t.Planned > 0 {
		s += " / waiting " + itoa(t.Planned)
	}
	if t.Stopped > 0 {
		s += " / stopped " + itoa(t.Stopped)
	}
	return s
}

// columnGap is the space between columns: one on narrow terminals,
// where every column counts.
func columnGap(width int) string {
	if width < 100 {
		return " "
	}
	return "  "
}

// issueColumns lays out the table for width: the live facts always, the
// queue, verify and CI checks columns once some issue has them, branch and PR on
// wide terminals; title and note share what is left.
func (v backlogView) issueColumns(width int) []issueColumn {
	issues := v.st.Issues
	widest := func(lo, hi int, f func(backlog.IssueView) string) int {
		w := lo
		for _, is := range issues {
			w = max(w, ansi.StringWidth(f(is)))
		}
		return min(w, hi)
	}
	some := func(f func(backlog.IssueView) bool) bool {
		for _, is := range issues {
			if f(is) {
				return true
			}
		}
		return false
	}
	num := func(is backlog.IssueView) string { return issueID(is.Number) }
	branch := func(is backlog.IssueView) string { return orDash(clean(is.Branch)) }
	cols := []issueColumn{
		{"#", widest(3, 8, num), num},
		{"STATE", 11, func(is backlog.IssueView) string { return is.State }},
	}
	if width >= 120 {
		cols = append(cols, issueColumn{"BRANCH", widest(6, 40, branch), branch})
	}
	since := v.since()
	cols = append(cols,
		issueColumn{"AHEAD", 5, func(is backlog.IssueView) string { return optInt(is.CommitsAhead) }},
		issueColumn{"DIRTY", 5, func(is backlog.IssueView) string { return optInt(is.DirtyFiles) }},
		issueColumn{"OUT", 5, func(is backlog.IssueView) string { return outputAge(is, since) }},
	)
	if some(func(is backlog.IssueView) bool { return is.QueuePosition > 0 }) {
		cols = append(cols, issueColumn{"Q", 2, func(is backlog.IssueView) string {
			if is.QueuePosition == 0 {
				return "-"
			}
			return itoa(is.QueuePosition)
		}})
	}
	if some(func(is backlog.IssueView) bool { return is.Verify != "" }) {
		cols = append(cols, issueColumn{"VERIFY", 7, func(is backlog.IssueView) string { return orDash(is.Verify) }})
	}
	if some(func(is backlog.IssueView) bool { return is.Checks != nil }) {
		cols = append(cols, issueColumn{"CHECKS", 9, func(is backlog.IssueView) string {
			if is.Checks == nil || backlog.Terminal(is.State) {
				return "-"
			}
			return is.Checks.Outcome
		}})
	}
	prCol := width >= 120 && some(func(is backlog.IssueView) bool { return is.PR != nil })
	if prCol {
		pr := func(is backlog.IssueView) string { return prCell(is.PR) }
		cols = append(cols, issueColumn{"PR", widest(2, 8, pr), pr})
	}
	gap := len(columnGap(width))
	used := 2 // selection marker
	for _, c := range cols {
		used += c.width + gap
	}
	rem := width - used
	title := func(is backlog.IssueView) string { return clean(is.Title) }
	note := func(is backlog.IssueView) string { return noteCell(is, !prCol) }
	switch {
	case rem >= 24:
		tw := min(widest(5, 1000, title), max(12, rem/2))
		cols = append(cols, issueColumn{"TITLE", tw, title}, issueColumn{"NOTE", rem - tw - gap, note})
	case rem >= 6:
		cols = append(cols, issueColumn{"TITLE", rem, title})
	}
	return cols
}

func optInt(n *int) string {
	if n == nil {
		return "-"
	}
	return itoa(*n)
}

func outputAge(is backlog.IssueView, since time.Duration) string {
	if is.LastOutputSec == nil {
		return "-"
	}
	return dur(time.Duration(*is.LastOutputSec)*time.Second + since)
}

func prCell(pr *backlog.PRRef) string {
	switch {
	case pr == nil:
		return "-"
	case pr.Number > 0:
		return "#" + itoa(pr.Number)
	}
	return "yes"
}

// noteCell is the one thing a user most needs to know about an issue:
// the files it conflicts in, its question, why it failed, its PR.
func noteCell(is backlog.IssueView, withPR bool) string {
	switch {
	case is.Conflicts > 0 && len(is.Files) > 0 && is.State != backlog.StateMerged:
		return "conflicts: " + clean(strings.Join(is.Files, ", "))
	case is.Question != "" && (is.State == backlog.StateNeedsInput || is.State == backlog.StateParked):
		return "? " + clean(is.Question)
	case is.Detail != "" && (is.State == backlog.StateFailed || is.State == backlog.StateParked):
		return clean(is.Detail)
	case is.Reworks > 0 && !backlog.Terminal(is.State):
		return "rework " + itoa(is.Reworks) + ": " + clean(is.Feedback)
	case len(is.Outside) > 0:
		return "outside its surface: " + clean(strings.Join(is.Outside, ", "))
	case withPR && is.PR != nil:
		return "PR " + prCell(is.PR)
	case is.State == backlog.StateMerged && is.MergeCommit != "":
		return "merged " + clean(short7(is.MergeCommit))
	}
	return clean(is.Detail)
}

func short7(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// table is the issue table: its header and, within budget lines (0:
// all), the rows the user must see first — selected, running, parked,
// failed — with a placeholder for each run of hidden rows.
func (v backlogView) table(width, budget int) []string {
	p := newPalette(v.cfg.Color)
	if len(v.list.all) == 0 {
		return []string{p.dim.Render("no issue taken yet")}
	}
	if line, none := v.list.noMatch(p); none {
		return []string{line}
	}
	cols := v.issueColumns(width)
	gap := columnGap(width)
	out := []string{headLine(cols, gap, p)}
	issues := v.list.rows
	style := func(c string, is backlog.IssueView, cell string) string {
		if c == "STATE" {
			return p.issueStyle(is.State).Render(cell)
		}
		return cell
	}
	row := func(i int) string { return fit(rowLine(issues[i], cols, gap, i == v.list.sel, style, p), width) }
	hidden := func(from, to int, where string) string { return hiddenIssues(issues[from:to], where) }
	return append(out, tableLines(len(issues), v.list.sel, budget, v.list.urgent, row, hidden, p, width)...)
}

// hiddenIssues is the placeholder for a run of hidden rows.
func hiddenIssues(issues []backlog.IssueView, where string) string {
	counts := map[string]int{}
	var order []string
	for _, is := range issues {
		w := is.State
		if w == backlog.StatePlanned {
			w = "waiting"
		}
		if counts[w] == 0 {
			order = append(order, w)
		}
		counts[w]++
	}
	parts := make([]string, len(order))
	for i, w := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[w], w)
	}
	s := fmt.Sprintf("  … %d more", len(issues))
	if where != "" {
		s += " " + where
	}
	return s + " (" + strings.Join(parts, ", ") + ")"
}

// selection is the selected issue in full: branch, session, attempt, PR
// link and worktree, then (unless brief) what its note cell cut off.
func (v backlogView) selection(width int, brief bool) []string {
	is, ok := v.Selected()
	if !ok || v.frameOnly() {
		return nil
	}
	p := newPalette(v.cfg.Color)
	parts := []string{p.bold.Render(issueID(is.Number)), orDash(clean(is.Branch))}
	switch {
	case is.Pod != "":
		parts = append(parts, "pod "+clean(is.Pod))
	case is.Session != "":
		parts = append(parts, "session "+clean(is.Session))
	}
	if is.Attempts > 0 {
		parts = append(parts, "attempt "+itoa(is.Attempts))
	}
	if is.PR != nil && is.PR.URL != "" {
		parts = append(parts, "PR "+clean(is.PR.URL))
	}
	if is.Reworks > 0 {
		parts = append(parts, backlog.ReworkLabel(is.Reworks, is.ReworkFrom))
	}
	if is.Worktree != "" {
		parts = append(parts, clean(is.Worktree))
	}
	out := []string{fit(strings.Join(parts, " · "), width)}
	if brief {
		return out
	}
	if n := noteCell(is, false); n != "" {
		out = append(out, fit(p.dim.Render("  "+n), width))
	}
	return out
}

// questions is the needs-input bucket, every question together so a
// person answers them in one go; brief puts them on one line.
func (v backlogView) questions(width int, brief bool) []string {
	qs := v.st.NeedsInput
	if len(qs) == 0 {
		return nil
	}
	p := newPalette(v.cfg.Color)
	title := p.bold.Render(fmt.Sprintf("Needs input (%d)", len(qs)))
	if brief {
		parts := make([]string, len(qs))
		for i, q := range qs {
			parts[i] = issueID(q.Issue) + " " + clean(q.Question)
		}
		return []string{fit(title+" "+strings.Join(parts, " · "), width)}
	}
	out := []string{title}
	for _, q := range qs {
		line := "  " + p.warn.Render(issueID(q.Issue)) + " " + clean(q.Question)
		if q.Title != "" {
			line += p.dim.Render("  (" + clean(q.Title) + ")")
		}
		out = append(out, fit(line, width))
	}
	return out
}

// dropped is the one line of issues that left the run before a worker.
func (v backlogView) dropped(width int) []string {
	if len(v.st.Dropped) == 0 {
		return nil
	}
	p := newPalette(v.cfg.Color)
	parts := make([]string, len(v.st.Dropped))
	for i, d := range v.st.Dropped {
		parts[i] = issueID(d.Issue) + " " + clean(d.Reason)
	}
	return []string{fit(p.bold.Render(fmt.Sprintf("Dropped (%d)", len(parts)))+" "+strings.Join(parts, " · "), width)}
}

// tail is what never shrinks: a failed read, corrupt event lines, and
// the run's result once no supervisor is working on it.
func (v backlogView) tail(width int) []string {
	p := newPalette(v.cfg.Color)
	var out []string
	if v.loadErr != nil {
		out = append(out, fit(p.bad.Render("reading the backlog run: ")+clean(v.loadErr.Error()), width))
	}
	if n := len(v.st.BadEvents); n > 0 {
		out = append(out, fit(p.warn.Render(fmt.Sprintf("%d corrupt event line(s) skipped: ", n))+clean(strings.Join(v.st.BadEvents, ", ")), width))
	}
	out = append(out, v.list.lines(width, p, v.now)...)
	if r := v.resultLine(p); v.found && r != "" {
		out = append(out, fit(r, width))
		if v.st.State == "finished" && v.st.FinalPR != nil && v.st.FinalPR.URL != "" {
			// Whole, on lines of its own: a URL or file path cut at the
			// window's edge is one nobody can open.
			whole := ansi.Hardwrap("final PR: "+clean(v.st.FinalPR.URL), max(width, 20), true)
			out = append(out, strings.Split(whole, "\n")...)
		}
	}
	return out
}

// resultLine is the run's outcome once it finished or lost its
// supervisor — what stays on screen after `backlog run` ends.
func (v backlogView) resultLine(p palette) string {
	st := v.st
	switch st.State {
	case "finished":
		sty, code := p.good, 0
		if st.ExitCode != nil {
			code = *st.ExitCode
		}
		switch code {
		case 0:
		case exitcode.NeedsHuman:
			sty = p.warn
		default:
			sty = p.bad
		}
		// Most useful first: the line is cut at the window's edge.
		parts := []string{sty.Render("■ backlog run finished"), fmt.Sprintf("exit %d", code),
			fmt.Sprintf("merged %d/%d", st.Tally.Merged, len(st.Issues))}
		if n := len(st.NeedsInput); n > 0 {
			parts = append(parts, fmt.Sprintf("%d question(s) above", n))
		}
		return strings.Join(parts, " · ")
	case "interrupted":
		return p.warn.Render("■ backlog run interrupted") + " · no supervisor holds the lane; `backlog run` resumes it, adopting live workers"
	}
	return ""
}

// run styles a run state word.
func (p palette) run(s string) string {
	switch s {
	case "running":
		return p.live.Render(s)
	case "finished":
		return p.good.Render(s)
	case "interrupted":
		return p.warn.Render(s)
	}
	return p.dim.Render(orDash(s))
}

// issueStyle colours an issue state as the wave view colours agents:
// green merged, red blocked, yellow waiting (for a person, or for a usage
// limit's reset), cyan in flight.
func (p palette) issueStyle(s string) style {
	switch s {
	case backlog.StateMerged:
		return p.good
	case backlog.StateParked, backlog.StateFailed:
		return p.bad
	case backlog.StateNeedsInput, backlog.ViewPaused:
		return p.warn
	case backlog.StateRunning, backlog.StateClaimed, backlog.StateReady, backlog.StateMerging:
		return p.live
	}
	return p.dim
}
