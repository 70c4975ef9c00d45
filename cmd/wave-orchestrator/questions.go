package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

func newQuestionsCmd(g *globals) *cobra.Command {
	var pendingOnly bool
	c := &cobra.Command{
		Use:   "questions",
		Short: "List the lane's questions to people: agents' (ask) and backlog workers' (needs-input)",
		Long: `List every question of the lane, oldest first: the waves' agents' (asked
with ` + "`ask`" + `, or posted as human-feedback, human-escalation or
clarification-request records) and the backlog runs' needs-input issues.
Each shows its id, where it was asked (wave and agent, or issue), its age,
its state (pending, answered, unanswered) and its text. Answer one with
` + "`wave-orchestrator answer ID TEXT`" + `.`,
		Example: `  wave-orchestrator questions --pending
  wave-orchestrator questions --json | jq '.[] | select(.state == "pending") | .id'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, err := openWaveRepo(g)
			if err != nil {
				return err
			}
			qs, problems, err := questions.List(e.layout)
			if err != nil {
				return err
			}
			for _, p := range problems {
				fmt.Fprintln(c.ErrOrStderr(), "wave-orchestrator: warning:", termtext.Escape(p))
			}
			if pendingOnly {
				qs = questions.PendingOf(qs)
			}
			if qs == nil {
				qs = []questions.Question{}
			}
			if g.json {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(qs)
			}
			printQuestions(c.OutOrStdout(), qs, time.Now())
			return nil
		},
	}
	c.Flags().BoolVar(&pendingOnly, "pending", false, "only the questions still waiting (pending or unanswered)")
	c.Flags().BoolVar(&g.json, "json", false, "print the questions as a JSON array (fields: docs/state.md)")
	return c
}

// printQuestions is the table of `questions`: every untrusted field
// escaped and on one line.
func printQuestions(w io.Writer, qs []questions.Question, now time.Time) {
	if len(qs) == 0 {
		fmt.Fprintln(w, "no questions")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWHERE\tAGE\tSTATE\tQUESTION")
	for _, q := range qs {
		state := q.State
		if !q.Blocking {
			state += " (non-blocking)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Escape(q.ID), termtext.Escape(q.Where()),
			age(now.Sub(q.AskedAt)), state, termtext.Escape(clip(q.Text, 120)))
		if q.State == questions.Answered && q.Answer != "" {
			fmt.Fprintf(tw, "\t\t\t\tanswer: %s\n", termtext.Escape(clip(q.Answer, 120)))
		}
	}
	_ = tw.Flush()
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

// age is a short duration: 45s, 12m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// unknownQuestion is the usage error of an id no question has: it lists
// the pending ones.
func unknownQuestion(err error) error {
	var u *questions.UnknownIDError
	if !errors.As(err, &u) {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "answer: no question %q in lane %s", u.ID, u.Lane)
	if len(u.Pending) == 0 {
		b.WriteString("; no question is pending")
		return usageError{errors.New(b.String())}
	}
	b.WriteString("; pending:")
	for _, q := range u.Pending {
		fmt.Fprintf(&b, "\n  %s  %s  %s", q.ID, q.Where(), clip(q.Text, 100))
	}
	return usageError{errors.New(b.String())}
}
