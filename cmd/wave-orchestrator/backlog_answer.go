package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/internal/mdfence"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

func newBacklogAnswerCmd(g *globals) *cobra.Command {
	var file, operator string
	c := &cobra.Command{
		Use:   "answer N [TEXT]",
		Short: "Answer a needs-input issue: the answer becomes a comment, the needs-input label goes, the open run (or the next `backlog run`) takes it again",
		Example: `  wave-orchestrator backlog answer 12 "Use the v2 API; v1 is going away"
  wave-orchestrator backlog answer 12 --file answer.md
  echo "Keep the old flag as an alias" | wave-orchestrator backlog answer 12`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			n, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
			if err != nil || n <= 0 {
				return usageError{fmt.Errorf("answer: %q is not an issue number", args[0])}
			}
			text, err := answerText(args[1:], file, c.InOrStdin())
			if err != nil {
				return err
			}
			be, err := openBacklog(c.Context(), g, c.ErrOrStderr())
			if err != nil {
				return err
			}
			ctx := c.Context()
			is, err := be.src.Get(ctx, n)
			if errors.Is(err, forge.ErrNotFound) {
				return usageError{fmt.Errorf("answer: no issue #%d in %s", n, sourceName(be))}
			}
			if err != nil {
				return err
			}
			label := be.cfg.Backlog.NeedsInputLabel
			waiting := false
			for _, l := range is.Labels {
				waiting = waiting || strings.EqualFold(l, label)
			}
			if err := commentAnswer(ctx, be, n, text, operator); err != nil {
				return err
			}
			out := c.OutOrStdout()
			if err := freeAnswered(ctx, be, n, out); err != nil {
				return err
			}
			if openRunTakes(be, n, out) {
				return nil
			}
			if !waiting {
				fmt.Fprintf(out, "answered #%d (it had no %s label: nothing was waiting for it)\n", n, label)
				return nil
			}
			fmt.Fprintf(out, "answered #%d: the %s label is removed; the next `backlog run` takes it again, with the answer in its worker's prompt\n", n, label)
			return nil
		},
	}
	c.Flags().StringVar(&file, "file", "", "read the answer from this file (- = stdin)")
	c.Flags().StringVar(&operator, "operator", "", "who answers (default $USER, else the account name)")
	return c
}

// commentAnswer puts the answer on issue n and takes its needs-input
// label off. The lane's question for n, when it has one, is answered as
// `answer` answers it, which records who answered (the comment's author
// is the source's account, not the person).
func commentAnswer(ctx context.Context, be *backlogEnv, n int, text, operator string) error {
	if operator == "" {
		operator = defaultOperator()
	}
	label := be.cfg.Backlog.NeedsInputLabel
	if q, _, err := questions.Find(be.layout, "#"+strconv.Itoa(n)); err == nil && q.State != questions.Answered {
		_, err := questions.Answer(ctx, be.layout, q.ID, text, operator, false,
			questions.AnswerOptions{Issues: be.src, NeedsInputLabel: label})
		return err
	}
	body, marker := backlog.AnswerComment(text)
	if _, err := be.src.EnsureComment(ctx, n, marker, body); err != nil {
		return fmt.Errorf("answer #%d: %w", n, err)
	}
	if err := be.src.RemoveLabel(ctx, n, label); err != nil {
		return fmt.Errorf("answer #%d: remove the %s label: %w", n, label, err)
	}
	return nil
}

// answerText is the answer from the argument, --file, or stdin.
func answerText(args []string, file string, stdin io.Reader) (string, error) {
	var raw []byte
	var err error
	switch {
	case len(args) == 1 && file != "":
		return "", usageError{errors.New("answer: give the text or --file, not both")}
	case len(args) == 1:
		raw = []byte(args[0])
	case file != "" && file != "-":
		raw, err = os.ReadFile(file)
	default:
		raw, err = io.ReadAll(io.LimitReader(stdin, backlog.MaxAnswer+1))
	}
	if err != nil {
		return "", fmt.Errorf("answer: read %s: %w", orStdin(file), err)
	}
	if len(raw) > backlog.MaxAnswer {
		return "", usageError{fmt.Errorf("answer: longer than %d bytes", backlog.MaxAnswer)}
	}
	text := strings.TrimSpace(mdfence.Clean(string(raw)))
	if text == "" {
		return "", usageError{errors.New("answer: the answer is empty (give TEXT, --file F, or pipe it on stdin)")}
	}
	return text, nil
}

func orStdin(file string) string {
	if file == "" || file == "-" {
		return "stdin"
	}
	return file
}

// sourceName is where issues come from, for messages.
func sourceName(be *backlogEnv) string {
	if be.src.Kind() == forge.KindGitHub {
		return be.cfg.GitHub.Owner + "/" + be.cfg.GitHub.Repo + " on GitHub"
	}
	return be.cfg.Backlog.LocalDir
}

// freeAnswered removes the worktrees finished runs kept for issue n where
// its work is safe in a ref: the next run checks the same worker branch
// out in a worktree of its own, and git refuses a branch that another
// worktree has checked out. One with unsaved work is kept, saying why.
func freeAnswered(ctx context.Context, be *backlogEnv, n int, w io.Writer) error {
	dirs, err := runlog.List(be.layout.StateDir)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		r, _, err := runlog.Read(dir)
		if err != nil {
			return err
		}
		is, ok := r.Issues[n]
		if !ok || !r.Finished || is.Worktree == "" || is.State == backlog.StateMerged {
			continue
		}
		if _, err := os.Stat(is.Worktree); err == nil {
			pruneWorktree(ctx, be.git, is, false, w)
		}
	}
	return nil
}

// openRunTakes says what happens to an answer for issue n when the
// lane's open run asked it: that run takes it (alive), or takes it once
// `backlog run` resumes it. False when no open run waits for n.
func openRunTakes(be *backlogEnv, n int, w io.Writer) bool {
	dir, err := runlog.OpenDir(be.layout.StateDir)
	if err != nil || dir == "" {
		return false
	}
	r, _, err := runlog.Read(dir)
	if err != nil {
		return false
	}
	is, ok := r.Issues[n]
	if !ok || is.State != backlog.StateNeedsInput || is.Released {
		return false
	}
	if lanes.Held(be.layout.LockPath()) {
		fmt.Fprintf(w, "answered #%d: the open backlog run %s takes it within a poll; its worker goes on in %s with the answer in its prompt\n",
			n, r.Info.ID, oneLineTitle(is.Worktree))
		return true
	}
	fmt.Fprintf(w, "answered #%d: `backlog run` resumes the open run %s, which takes it again with the answer in its worker's prompt\n", n, r.Info.ID)
	return true
}
