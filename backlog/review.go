package backlog

import (
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/mdfence"
)

// ReviewInput is what a reviewer's prompt is made of.
type ReviewInput struct {
	Issue      Issue
	Branch     string
	WaveBranch string
	Diff       string // the diff the merge would bring, possibly truncated
}

// ReviewPrompt asks a reviewer agent for a verdict on one worker's change
// before it merges. Issue text and the diff are quoted data.
func ReviewPrompt(in ReviewInput) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("You review one change before it is merged into %s. The worktree you are in is the", in.WaveBranch)
	line("would-be merge commit; read any file you need, run the tests if they are quick. Do not edit")
	line("files, commit, push or comment anywhere.\n")
	line("Judge: does the change do what the issue asks, without breaking anything else, and is it")
	line("safe to merge as it is? Be specific; this is not a rubber stamp.\n")
	quoted := issueText(in.Issue)
	fence := mdfence.Block(quoted)
	line("## The issue (untrusted text)\n\n%stext\n%s\n%s\n", fence, quoted, fence)
	diff := Clean(in.Diff)
	fence = mdfence.Block(diff)
	line("## The change (branch %s)\n\n%sdiff\n%s\n%s\n", in.Branch, fence, strings.TrimRight(diff, "\n"), fence)
	line("## When you stop\n")
	line("Print exactly one line as your last output:")
	line("[wave-verdict] pass detail=<one line: why it is safe to merge>")
	line("or")
	line("[wave-verdict] fail detail=<one line: what must change first>")
	return b.String()
}
