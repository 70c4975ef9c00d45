package backlog

import (
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/mdfence"
)

// AskedQuestion is what a needs-input issue asks: the last line that asks
// (holds a '?' outside a URL) of the newest comment that asks, else the
// last such line of the body, else the title. The text is carried as
// data, only trimmed; escaping it for a terminal is the printer's job.
func AskedQuestion(is Issue) string {
	for i := len(is.Comments) - 1; i >= 0; i-- {
		if q, ok := askingLine(is.Comments[i].Body); ok {
			return q
		}
	}
	if q, ok := askingLine(is.Body); ok {
		return q
	}
	return strings.TrimSpace(is.Title)
}

// askingLine returns the last line of text that asks, without markdown
// quote, bullet or heading markers.
func askingLine(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !asks(l) {
			continue
		}
		for _, p := range []string{">", "#", "- ", "* "} {
			for strings.HasPrefix(l, p) {
				l = strings.TrimSpace(strings.TrimPrefix(l, p))
			}
		}
		return l, true
	}
	return "", false
}

// asks reports whether a line holds a '?' that is not part of a URL
// ("see https://x/?page=2" asks nothing).
func asks(line string) bool {
	for _, w := range strings.Fields(line) {
		if strings.Contains(w, "://") && !strings.HasSuffix(w, "?") {
			continue
		}
		if strings.Contains(w, "?") {
			return true
		}
	}
	return false
}

// needsInputMarker starts the hidden marker the supervisor ends its
// needs-input comment with ("<!-- wave-orchestrator:needs-input run=… issue=N -->").
const needsInputMarker = "<!-- wave-orchestrator:needs-input run="

// OwnQuestion is the question of the newest needs-input comment written
// by self (the supervisor's own identity): the fenced block
// NeedsInputComment put it in, as the worker asked it. A comment by
// anyone else never counts, whatever it holds.
func OwnQuestion(comments []Comment, self string) (string, bool) {
	if strings.TrimSpace(self) == "" {
		return "", false
	}
	for i := len(comments) - 1; i >= 0; i-- {
		c := comments[i]
		body := strings.TrimRight(c.Body, " \t\r\n")
		last := body[strings.LastIndexByte(body, '\n')+1:]
		if !strings.EqualFold(c.Author, self) || !strings.HasPrefix(last, needsInputMarker) || !strings.HasSuffix(last, "-->") {
			continue
		}
		if q, ok := mdfence.FirstBlock(body); ok {
			return q, true
		}
	}
	return "", false
}

// KeepQuestions puts the questions known to have been asked (asked:
// issue → question, from earlier runs or the supervisor's own comment)
// into the plan's needs-input bucket and its skip details: the issue
// list carries no comments, so the planner alone knows only the title.
func (p *Plan) KeepQuestions(asked map[int]string) {
	for i, q := range p.NeedsInput {
		if a, ok := asked[q.Issue]; ok && strings.TrimSpace(a) != "" {
			p.NeedsInput[i].Question = a
		}
	}
	for i, s := range p.Skipped {
		if a, ok := asked[s.Issue]; ok && s.Reason == ReasonNeedsInput && strings.TrimSpace(a) != "" {
			p.Skipped[i].Detail = a
		}
	}
}
