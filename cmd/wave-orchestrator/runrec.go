package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/submitted"
)

// withStateFile runs a foreground launch that records its state at path
// (--state-file), in a submitted run's shape: running with this pid,
// then its end.
func withStateFile(path string, g *globals, resume bool, run func() error) error {
	command := "launch"
	if resume {
		command = "resume"
	}
	r := submitted.NewRun(g.lane, submitted.Running, command, os.Args[1:], time.Now())
	r.Pid, r.StartedAt = os.Getpid(), &r.SubmittedAt
	if e, err := openLane(g); err == nil {
		r.Lane = e.lane.Name
	}
	if err := submitted.WriteFile(path, r); err != nil {
		return fmt.Errorf("--state-file: %w", err)
	}
	err := run()
	code, why := exitcode.Failed, ""
	var ee *exitError
	switch {
	case err == nil:
		code = 0
	case errors.As(err, &ee):
		code = ee.code
		if ee.err != nil {
			why = ee.err.Error()
		}
	case isUsageError(err):
		code, why = exitcode.Usage, err.Error()
	default:
		why = err.Error()
	}
	r.Finish(code, errors.Is(err, launcher.ErrStopped), why)
	if werr := submitted.WriteFile(path, r); werr != nil && err == nil {
		return fmt.Errorf("--state-file: %w", werr)
	}
	return err
}
