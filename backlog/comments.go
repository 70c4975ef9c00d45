package backlog

import (
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/mdfence"
)

// questionLimit bounds a question quoted in a comment (GitHub refuses
// comments over 65536 characters; a question is one paragraph).
const questionLimit = 4000

// NeedsInputComment is the body of the comment that asks a worker's
// question on its issue. The question is the worker's text, and a worker
// may parrot whatever the issue said, so it is quoted in a code block:
// no mention, reference or hidden comment in it takes effect.
func NeedsInputComment(question string) string {
	return "The worker on this issue needs input:\n\n" + strings.TrimRight(mdfence.Fenced(question, "text", questionLimit), "\n")
}

// ParkedComment is the body of the comment that says run parked an
// issue: the detail and the conflicting files in code spans, the question
// in a code block (each may carry worker or issue text).
func ParkedComment(runID, detail, question string, files []string) string {
	var b strings.Builder
	b.WriteString("Parked by wave-orchestrator run " + mdfence.Inline(runID, 0) + ": " + mdfence.Inline(detail, 300))
	if len(files) > 0 {
		b.WriteString("\n\nConflicting files: " + codeList(files))
	}
	if strings.TrimSpace(question) != "" {
		b.WriteString("\n\n" + mdfence.Fenced(question, "text", questionLimit))
	}
	return strings.TrimRight(b.String(), "\n")
}
