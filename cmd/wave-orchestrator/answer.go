package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

type answerFlags struct {
	file, operator string
	force, resume  bool
}

func newAnswerCmd(g *globals) *cobra.Command {
	f := &answerFlags{}
	c := &cobra.Command{
		Use:   "answer ID [TEXT]",
		Short: "Answer a question of the lane (see `questions`); the agent that asked carries on with it",
		Long: `Answer question ID with TEXT (or --file, or stdin). A wave agent's question
is resolved in its coordination log: a live launcher sees it within a
second or two and starts the agent again with the question and the answer
in its prompt. With no launcher running, the answer waits for the next
` + "`resume`" + ` of the wave; --resume starts that resume detached (as
` + "`submit --wave N`" + ` does) and prints how to watch it. A backlog
question (ID, or #N for issue N) is answered on its issue as ` + "`backlog answer`" + `
does. An answered question is refused without --force; an unknown ID lists
the pending ones.`,
		Example: `  wave-orchestrator answer q-1a2b3c4d "Keep v1 for one more release"
  wave-orchestrator answer q-1a2b3c4d --file answer.md --operator ana
  echo "Use eu-west-1" | wave-orchestrator answer q-1a2b3c4d --resume
  wave-orchestrator answer '#12' "Yes, drop the flag"`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("answer: give the question's ID and the answer (TEXT, --file or stdin); `wave-orchestrator questions --pending` lists the IDs")
			}
			return cobra.RangeArgs(1, 2)(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			text, err := answerText(args[1:], f.file, c.InOrStdin())
			if err != nil {
				return err
			}
			return runAnswer(c, g, args[0], text, f)
		},
	}
	c.Flags().StringVar(&f.file, "file", "", "read the answer from this file (- = stdin)")
	c.Flags().StringVar(&f.operator, "operator", "", "who answers (default $USER, else the account name)")
	c.Flags().BoolVar(&f.force, "force", false, "answer a question that is already answered")
	c.Flags().BoolVar(&f.resume, "resume", false, "with no launcher running: start `resume` of the question's wave detached")
	return c
}

func runAnswer(c *cobra.Command, g *globals, id, text string, f *answerFlags) error {
	e, err := openLane(g)
	if err != nil {
		return err
	}
	operator := f.operator
	if operator == "" {
		operator = defaultOperator()
	}
	ctx := c.Context()
	q, _, err := questions.Find(e.layout, id)
	if err != nil {
		return unknownQuestion(err)
	}
	out := c.OutOrStdout()
	if q.Issue != nil {
		return answerIssue(ctx, c, g, q, text, operator, f.force)
	}
	a, err := questions.Answer(ctx, e.layout, q.ID, text, operator, f.force, questions.AnswerOptions{})
	if errors.Is(err, questions.ErrAlreadyAnswered) {
		return usageError{err}
	}
	if err != nil {
		return unknownQuestion(err)
	}
	fmt.Fprintf(out, "answered %s (%s)\n", a.ID, termtext.Escape(a.Where()))
	if lanes.Held(e.layout.LockPath()) {
		fmt.Fprintf(out, "the launcher of lane %s is running: it starts %s again with the answer in its prompt\n", e.lane.Name, termtext.Escape(a.AgentID))
		return nil
	}
	if !f.resume {
		fmt.Fprintf(out, "no launcher is running on lane %s: `wave-orchestrator resume -w %d` (or `answer --resume`) starts %s again with the answer\n",
			e.lane.Name, *a.Wave, termtext.Escape(a.AgentID))
		return nil
	}
	return resumeDetached(ctx, e, g, *a.Wave, out)
}

// answerIssue answers a backlog question on its issue, as `backlog
// answer` does (the same comment, the label removed, kept worktrees
// freed).
func answerIssue(ctx context.Context, c *cobra.Command, g *globals, q questions.Question, text, operator string, force bool) error {
	be, err := openBacklog(ctx, g, c.ErrOrStderr())
	if err != nil {
		return err
	}
	a, err := questions.Answer(ctx, be.layout, q.ID, text, operator, force,
		questions.AnswerOptions{Issues: be.src, NeedsInputLabel: be.cfg.Backlog.NeedsInputLabel})
	if errors.Is(err, questions.ErrAlreadyAnswered) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	if err := freeAnswered(ctx, be, *a.Issue, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "answered %s (issue #%d): the %s label is removed; an open `backlog run` or the next one takes it again, with the answer in its worker's prompt\n",
		a.ID, *a.Issue, be.cfg.Backlog.NeedsInputLabel)
	return nil
}

// resumeDetached submits `resume -w N` (the submit machinery: a watcher
// and the launcher in tmux session "launcher" on the lane socket) and
// prints how to follow it.
func resumeDetached(ctx context.Context, e *laneEnv, g *globals, n int, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	root, err := g.root()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self, "--repo-root", root, "--lane", e.lane.Name, "submit", "--wave", strconv.Itoa(n), "--json")
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("answer --resume: submit --wave %d: %w", n, err)
	}
	var sub struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal(b, &sub); err != nil || sub.RunID == "" {
		return fmt.Errorf("answer --resume: submit --wave %d printed %q", n, b)
	}
	fmt.Fprintf(out, "resuming wave %d detached as run %s\n  watch: tmux -L %s attach -t %s\n  wait:  wave-orchestrator wait --run-id %s\n",
		n, sub.RunID, e.layout.Socket(), lanes.LauncherSession, sub.RunID)
	return nil
}
