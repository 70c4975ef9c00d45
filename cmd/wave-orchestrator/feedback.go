package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// newFeedbackCmd is the reference's feedback queue spelled as it was:
// every subcommand maps onto ask, answer and questions and their records.
func newFeedbackCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "feedback",
		Short: "The reference's feedback queue: ask, respond, list, show, watch (the same questions as ask/answer/questions)",
		Example: `  wave-orchestrator feedback ask --question "Ship behind a flag?" --timeout-seconds 600
  wave-orchestrator feedback list --pending
  wave-orchestrator feedback respond --id q-1a2b3c4d --response "Yes" --operator ana`,
	}
	c.AddCommand(newFeedbackAskCmd(g), newFeedbackRespondCmd(g), newFeedbackListCmd(g), newFeedbackShowCmd(g), newFeedbackWatchCmd(g))
	return c
}

func newFeedbackAskCmd(g *globals) *cobra.Command {
	f := &askFlags{}
	c := &cobra.Command{
		Use:     "ask",
		Short:   "Ask a person (as `ask`; --timeout-seconds waits for the answer)",
		Example: `  wave-orchestrator feedback ask --question "Which schema?" --timeout-seconds 300`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			// The reference's ask waits when given a timeout.
			f.wait = f.wait || f.timeoutS > 0
			return runAsk(c, g, f)
		},
	}
	f.register(c)
	return c
}

func newFeedbackRespondCmd(g *globals) *cobra.Command {
	f := &answerFlags{}
	var id, response string
	c := &cobra.Command{
		Use:     "respond",
		Short:   "Answer a question (as `answer`)",
		Example: `  wave-orchestrator feedback respond --id q-1a2b3c4d --response "Use v2" --operator ana`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if id == "" {
				return usageError{errors.New("feedback respond: --id is required")}
			}
			var args []string
			if response != "" {
				args = []string{response}
			}
			text, err := answerText(args, f.file, c.InOrStdin())
			if err != nil {
				return err
			}
			return runAnswer(c, g, id, text, f)
		},
	}
	c.Flags().StringVar(&id, "id", "", "the question `ID`")
	c.Flags().StringVar(&response, "response", "", "the answer (else --file or stdin)")
	c.Flags().StringVar(&f.file, "file", "", "read the answer from this file (- = stdin)")
	c.Flags().StringVar(&f.operator, "operator", "", "who answers (default $USER, else the account name)")
	c.Flags().BoolVar(&f.force, "force", false, "answer a question that is already answered")
	c.Flags().BoolVar(&f.resume, "resume", false, "with no launcher running: start `resume` of the question's wave detached")
	return c
}

func newFeedbackListCmd(g *globals) *cobra.Command {
	c := newQuestionsCmd(g)
	c.Use, c.Short = "list", "List the lane's questions (as `questions`)"
	c.Example = "  wave-orchestrator feedback list --pending --json"
	return c
}

func newFeedbackShowCmd(g *globals) *cobra.Command {
	var id string
	c := &cobra.Command{
		Use:     "show [ID]",
		Short:   "Show one question: where, state, text, context and answer",
		Example: `  wave-orchestrator feedback show --id q-1a2b3c4d --json`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				id = args[0]
			}
			if id == "" {
				return usageError{errors.New("feedback show: give the question id (--id)")}
			}
			e, err := openLane(g)
			if err != nil {
				return err
			}
			q, _, err := questions.Find(e.layout, id)
			if err != nil {
				return unknownQuestion(err)
			}
			out := c.OutOrStdout()
			if g.json {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(q)
			}
			fmt.Fprintf(out, "id:       %s\nwhere:    %s\nstate:    %s\nblocking: %t\nasked:    %s\nquestion: %s\n",
				termtext.Escape(q.ID), termtext.Escape(q.Where()), q.State, q.Blocking, q.AskedAt.Format(time.RFC3339), termtext.Escape(q.Text))
			if q.Context != "" {
				fmt.Fprintf(out, "context:  %s\n", termtext.Escape(q.Context))
			}
			if q.State == questions.Answered {
				fmt.Fprintf(out, "answer:   %s\nby:       %s\n", termtext.Escape(q.Answer), termtext.Escape(q.Operator))
			}
			return nil
		},
	}
	c.Flags().StringVar(&id, "id", "", "the question `ID`")
	c.Flags().BoolVar(&g.json, "json", false, "print the question as JSON")
	return c
}

func newFeedbackWatchCmd(g *globals) *cobra.Command {
	var id string
	var timeoutS int
	c := &cobra.Command{
		Use:   "watch",
		Short: "Wait: with --id until that question is answered (prints the answer), else until a question, wave or backlog, is pending (prints them)",
		Example: `  wave-orchestrator feedback watch --timeout-seconds 3600
  wave-orchestrator feedback watch --id q-1a2b3c4d`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, err := openLane(g)
			if err != nil {
				return err
			}
			ctx := c.Context()
			if id != "" {
				q, _, err := questions.Find(e.layout, id)
				if err != nil {
					return unknownQuestion(err)
				}
				if q.Wave == nil {
					return usageError{fmt.Errorf("feedback watch: %s is a backlog question; `questions` shows its state", q.ID)}
				}
				return waitAnswer(ctx, e, q, timeoutS, c.OutOrStdout())
			}
			if timeoutS > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(timeoutS)*time.Second)
				defer cancel()
			}
			p, err := waitPending(ctx, e.layout)
			if ctx.Err() != nil {
				return withCode(exitcode.Timeout, fmt.Errorf("feedback watch: no question within %d s", timeoutS))
			}
			if err != nil {
				return err
			}
			printQuestions(c.OutOrStdout(), p, time.Now())
			return nil
		},
	}
	c.Flags().StringVar(&id, "id", "", "wait for the answer to question `ID`")
	c.Flags().IntVar(&timeoutS, "timeout-seconds", 0, "give up after `N` seconds, exit 124 (0: no limit)")
	return c
}
