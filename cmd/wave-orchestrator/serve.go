package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/webui"
)

func newServeCmd(g *globals) *cobra.Command {
	var addr, tokenEnv string
	var allowAnswer bool
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the lane in a browser: a live page and a read-only JSON API (docs/serve.md)",
		Long: `Serve the lane over HTTP: one page (waves, agents with their output, the
backlog, the questions) that updates live, and the API behind it:
/api/v1/state (as status --json), /api/v1/backlog (as backlog status --json),
/api/v1/questions, /api/v1/events (Server-Sent Events) and
/api/v1/runs/{wave}/{agent}/log?tail=N.

Read-only unless --allow-answer. Off loopback, --token-env names the
environment variable holding the token every request must carry.`,
		Example: `  wave-orchestrator serve
  wave-orchestrator serve --allow-answer
  WAVE_SERVE_TOKEN=$(openssl rand -hex 16) wave-orchestrator serve --addr 0.0.0.0:7777 --token-env WAVE_SERVE_TOKEN`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			token := ""
			if tokenEnv != "" {
				token = os.Getenv(tokenEnv)
				if token == "" {
					return usageError{fmt.Errorf("--token-env %s: the variable is unset or empty", tokenEnv)}
				}
				if err := webui.CheckToken(token, tokenEnv); err != nil {
					return usageError{err}
				}
			}
			if err := webui.CheckAddr(addr, token); err != nil {
				return usageError{err}
			}
			e, err := openLane(g)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(c.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			o := webui.Options{
				Layout:      e.layout,
				State:       func(ctx context.Context) (state.Lane, error) { return launcher.Status(ctx, e.layout) },
				Backlog:     func(ctx context.Context, run string) (any, error) { return serveBacklog(ctx, e, run) },
				AllowAnswer: allowAnswer,
				Answer:      newAnswerer(e, c.ErrOrStderr()),
				Token:       token,
				Logger:      logger,
			}
			return webui.ListenAndServe(c.Context(), addr, o, func(a net.Addr) {
				mode := "read-only"
				if allowAnswer {
					mode = "answering allowed"
				}
				fmt.Fprintf(c.ErrOrStderr(), "serve: lane %s on http://%s/ (%s)\n", e.layout.Lane, a, mode)
			})
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:7777", "listen on `HOST:PORT` (off loopback needs --token-env)")
	c.Flags().BoolVar(&allowAnswer, "allow-answer", false, "let the page and POST /api/v1/questions/{id}/answer answer questions")
	c.Flags().StringVar(&tokenEnv, "token-env", "", "require the Bearer token held in environment variable `NAME` on every request")
	return c
}

// serveBacklog is /api/v1/backlog: the backlog status document of run.
func serveBacklog(ctx context.Context, e *laneEnv, run string) (any, error) {
	if _, err := runlog.List(e.layout.StateDir); err != nil {
		return nil, err
	}
	dir, err := runlog.Find(e.layout.StateDir, run)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", webui.ErrNoBacklogRun, err)
	}
	return backlogStatusView(ctx, e, dir)
}

// newAnswerer answers questions for serve and the dashboard as `answer`
// does, never forced: a wave question in its coordination log (a live
// launcher relaunches the agent), a backlog question on its issue (the
// source opened on first use) with the worktrees finished runs kept for
// it freed; what that says goes to w.
func newAnswerer(e *laneEnv, w io.Writer) func(ctx context.Context, id, text, operator string) (questions.Question, error) {
	issues := &lazyIssues{e: e, stderr: w}
	return func(ctx context.Context, id, text, operator string) (questions.Question, error) {
		opts := questions.AnswerOptions{Issues: issues, NeedsInputLabel: e.cfg.Backlog.NeedsInputLabel}
		q, err := questions.Answer(ctx, e.layout, id, text, operator, false, opts)
		if err != nil || q.Issue == nil {
			return q, err
		}
		be, err := issues.open(ctx)
		if err != nil {
			return q, err
		}
		return q, freeAnswered(ctx, be, *q.Issue, w)
	}
}

// lazyIssues opens the lane's issue source the first time a backlog
// question is answered: a lane of waves alone never needs (nor may have)
// one, and serve starts without it.
type lazyIssues struct {
	e      *laneEnv
	stderr io.Writer
	mu     sync.Mutex
	be     *backlogEnv
}

func (l *lazyIssues) open(ctx context.Context) (*backlogEnv, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.be != nil {
		return l.be, nil
	}
	be, err := openBacklogLane(ctx, l.e, l.stderr)
	if err != nil {
		return nil, fmt.Errorf("answer a backlog question: %w", err)
	}
	l.be = be
	return be, nil
}

func (l *lazyIssues) EnsureComment(ctx context.Context, n int, marker, body string) (backlog.Comment, error) {
	be, err := l.open(ctx)
	if err != nil {
		return backlog.Comment{}, err
	}
	return be.src.EnsureComment(ctx, n, marker, body)
}

func (l *lazyIssues) RemoveLabel(ctx context.Context, n int, label string) error {
	be, err := l.open(ctx)
	if err != nil {
		return err
	}
	return be.src.RemoveLabel(ctx, n, label)
}
