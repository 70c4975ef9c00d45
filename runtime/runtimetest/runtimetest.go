// Package runtimetest ends what a test's agent runs left running. An
// agent outlives its tmux session (a closed terminal is not a stop), so
// killing a test's tmux server leaves its runner and agent writing into
// the test's temporary directory while that is being removed: a test's
// clean-up stops them first, through package runtime as the product does.
package runtimetest

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// StopRuns stops every tmux run recorded under dir (each runtime.json
// at any depth) whose runner or agent still lives, all at once (TERM,
// grace, KILL), and waits until their processes are gone. It returns an
// error naming the runs whose processes outlived that.
func StopRuns(dir string, grace time.Duration) error {
	var live []*runtime.Record
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "runtime.json" {
			return nil
		}
		rec, err := runtime.ReadRecord(p)
		if err == nil && rec.SessionBackend != runtime.BackendKubernetes && len(alive(rec)) > 0 {
			live = append(live, rec)
		}
		return nil
	})
	var wg sync.WaitGroup
	for _, rec := range live {
		wg.Go(func() { _ = runtime.Terminate(context.Background(), *rec, grace) })
	}
	wg.Wait()
	deadline := time.Now().Add(grace + 10*time.Second)
	for {
		var left []string
		for _, rec := range live {
			if pids := alive(rec); len(pids) > 0 {
				left = append(left, fmt.Sprintf("%s (pids %v)", rec.RunID, pids))
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("runs still alive after they were stopped: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive is the record's runner and agent pids that still live.
func alive(rec *runtime.Record) []int {
	var pids []int
	if rec.RunnerStartTime != 0 && runtime.ProcAlive(rec.RunnerPid, rec.RunnerStartTime) {
		pids = append(pids, rec.RunnerPid)
	}
	if rec.ExecutorStartTime != 0 && runtime.ProcAlive(rec.ExecutorPid, rec.ExecutorStartTime) {
		pids = append(pids, rec.ExecutorPid)
	}
	return pids
}
