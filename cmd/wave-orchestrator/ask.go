package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// exitWaitTimeout is `ask --wait`'s exit code when no answer came within
// --timeout-seconds (timeout(1)'s code).
const exitWaitTimeout = 124

// askFlags are `ask`'s flags (and `feedback ask`'s, which maps onto it).
type askFlags struct {
	text, context         string
	waveN, attempt        int
	agent                 string
	blocking, nonBlocking bool
	wait                  bool
	timeoutS              int
}

func (f *askFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVarP(&f.text, "question", "q", "", "the question (required)")
	fl.StringVar(&f.context, "context", "", "what the person needs to know to answer")
	waveVar(c, &f.waveN, "wave", "w", envInt("WAVE_NUMBER", -1), "the asking agent's wave `N` (default $WAVE_NUMBER)")
	fl.StringVarP(&f.agent, "agent", "a", os.Getenv("WAVE_AGENT_ID"), "the asking agent `ID` (default $WAVE_AGENT_ID)")
	fl.IntVar(&f.attempt, "attempt", envInt("WAVE_ATTEMPT", 0), "the asking run's attempt (default $WAVE_ATTEMPT)")
	fl.BoolVar(&f.blocking, "blocking", false, "the wave waits for the answer (the default)")
	fl.BoolVar(&f.nonBlocking, "non-blocking", false, "recorded and shown, but nothing waits for it")
	fl.BoolVar(&f.wait, "wait", false, "block until answered and print the answer")
	fl.IntVar(&f.timeoutS, "timeout-seconds", 0, "with --wait: give up after `N` seconds, exit 124 (0: no limit)")
}

func newAskCmd(g *globals) *cobra.Command {
	f := &askFlags{}
	c := &cobra.Command{
		Use:   "ask",
		Short: "Ask a person a question from inside an agent's run; prints the question id",
		Long: `Ask a person a question. Agents run it: wave, agent, attempt and lane come
from the WAVE_* environment the runner sets. The question is appended to the
wave's coordination log; a blocking one (the default) holds the wave in
waiting-for-input until someone runs ` + "`wave-orchestrator answer ID TEXT`" + `.

Without --wait the agent finishes its run after asking: the live launcher
waits for the answer and starts the agent again with the question and the
answer in its prompt ("Answers from people"). With --wait the command
blocks until the answer and prints it on stdout (exit 0), or exits 124 when
--timeout-seconds pass first.`,
		Example: `  wave-orchestrator ask --question "Keep the v1 endpoint?" --context "two clients still call it"
  answer=$(wave-orchestrator ask --question "Which region?" --wait --timeout-seconds 600)
  wave-orchestrator ask --non-blocking --question "Rename the flag later?"`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runAsk(c, g, f) },
	}
	f.register(c)
	return c
}

func runAsk(c *cobra.Command, g *globals, f *askFlags) error {
	if f.blocking && f.nonBlocking {
		return usageError{errors.New("ask: --blocking and --non-blocking exclude each other")}
	}
	if f.text == "" {
		return usageError{errors.New("ask: --question is required")}
	}
	if f.timeoutS < 0 || f.timeoutS > 0 && !f.wait {
		return usageError{fmt.Errorf("ask: --timeout-seconds %d: needs --wait and must be 0 or more", f.timeoutS)}
	}
	if f.waveN < 0 {
		if os.Getenv("WAVE_ISSUE_NUMBER") != "" {
			return usageError{errors.New("ask: a backlog worker asks by ending with `[backlog-result] state=needs-input question=<the question>`")}
		}
		return usageError{errors.New("ask: --wave is required (or WAVE_NUMBER in the environment)")}
	}
	if g.lane == "" {
		g.lane = os.Getenv("WAVE_LANE")
	}
	e, err := openLane(g)
	if err != nil {
		return err
	}
	q, err := questions.Post(e.layout, questions.Ask{Wave: f.waveN, AgentID: f.agent, Attempt: f.attempt,
		Text: f.text, Context: f.context, Blocking: !f.nonBlocking}, time.Now())
	if err != nil {
		return usageError{err}
	}
	out := c.OutOrStdout()
	if !f.wait {
		fmt.Fprintln(out, q.ID)
		return nil
	}
	fmt.Fprintf(c.ErrOrStderr(), "ask: %s asked; waiting for the answer (`wave-orchestrator answer %s TEXT`)\n", q.ID, q.ID)
	return waitAnswer(c.Context(), e, q, f.timeoutS, out)
}

// waitAnswer blocks until q is answered and prints the answer.
func waitAnswer(ctx context.Context, e *laneEnv, q questions.Question, timeoutS int, out io.Writer) error {
	if timeoutS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(timeoutS)*time.Second)
		defer cancel()
	}
	a, err := questions.Wait(ctx, e.layout, *q.Wave, q.ID)
	if errors.Is(err, context.DeadlineExceeded) {
		return withCode(exitWaitTimeout, fmt.Errorf("ask: no answer to %s within %d s", q.ID, timeoutS))
	}
	if err != nil {
		return err
	}
	// The answer is the person's text for the agent to read: printed as
	// given except for terminal controls.
	fmt.Fprintln(out, termtext.EscapeLines(a.Answer))
	return nil
}
