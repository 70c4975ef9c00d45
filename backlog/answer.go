package backlog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/mdfence"
)

// AnswerHeading opens the comment `backlog answer` posts on a
// needs-input issue; the worker of the next run reads the comment with
// the rest of the issue, fenced as untrusted text.
const AnswerHeading = "Answer to the question on this issue (`backlog answer`):"

// MaxAnswer bounds an answer: it goes into a comment and a prompt.
const MaxAnswer = 64 << 10

// AnswerComment is a person's answer as a comment: fenced as text (no
// mention, reference or HTML renders from it, and a worker reads it as
// data), ended by a marker that names its content, so answering twice
// with the same words posts it once.
func AnswerComment(text string) (body, marker string) {
	sum := sha256.Sum256([]byte(text))
	marker = "<!-- wave-orchestrator:answer sha=" + hex.EncodeToString(sum[:8]) + " -->"
	body = AnswerHeading + "\n\n" + strings.TrimRight(mdfence.Fenced(text, "text", MaxAnswer), "\n") + "\n\n" + marker
	return body, marker
}
