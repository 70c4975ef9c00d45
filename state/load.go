package state

import (
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/fanout"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// Observer reports the facts of one run directory (runtime record, status
// file, liveness, last marker). The runtime package provides the real one;
// state stays free of process and tmux access. Load calls it from several
// goroutines at once.
type Observer func(runDir string) RunFacts

// BlockerSource returns the open blocking coordination records of a wave.
type BlockerSource func(wave int) []Blocker

// Load gathers a lane's events and run facts and reduces them. Unreadable
// inputs become Problems; Load fails only if the state dir cannot be read.
func Load(l lanes.Layout, observe Observer, blockers BlockerSource, now time.Time) (Lane, error) {
	evs, bad, err := ReadEvents(l.EventsPath())
	if err != nil {
		out := Lane{SchemaVersion: SchemaVersion, Lane: l.Lane, Socket: l.Socket(), GeneratedAt: now.UTC(),
			Problems: []string{}, Waves: []Wave{}, LastEvents: []EventRef{}}
		if _, serr := os.Stat(l.StateDir); serr != nil && !os.IsNotExist(serr) {
			return out, fmt.Errorf("lane %s state %s: %w", l.Lane, l.StateDir, serr)
		}
		return out, fmt.Errorf("lane %s: %w", l.Lane, err)
	}
	return LoadEvents(l, evs, bad, observe, blockers, now)
}

// LoadEvents is Load over the lane's events already read (ReadEvents), so a
// caller that needs them for more than the reduction reads the log once.
func LoadEvents(l lanes.Layout, evs []Event, bad []string, observe Observer, blockers BlockerSource, now time.Time) (Lane, error) {
	return LoadFold(l, FoldEvents(evs), bad, observe, blockers, now)
}

// LoadFold is Load over the lane's log folded (FoldEvents), bad its
// unreadable lines. It leaves f as it was.
func LoadFold(l lanes.Layout, f *Fold, bad []string, observe Observer, blockers BlockerSource, now time.Time) (Lane, error) {
	out := Lane{SchemaVersion: SchemaVersion, Lane: l.Lane, Socket: l.Socket(), GeneratedAt: now.UTC(),
		Problems: []string{}, Waves: []Wave{}, LastEvents: []EventRef{}}
	if _, err := os.Stat(l.StateDir); err != nil && !os.IsNotExist(err) {
		return out, fmt.Errorf("lane %s state %s: %w", l.Lane, l.StateDir, err)
	}
	for _, b := range bad {
		out.Problems = append(out.Problems, "unreadable event line "+b)
	}
	alive := lanes.Held(l.LockPath())
	if info, err := lanes.ReadLockInfo(l.LockPath()); err == nil {
		out.Launcher = &Launcher{Pid: info.Pid, StartedAt: info.StartedAt, Alive: alive}
	} else if alive {
		// A live holder whose body is garbage or deleted still holds the
		// lane: its waves are running, not interrupted.
		out.Launcher = &Launcher{Alive: true}
		out.Problems = append(out.Problems, "lane lock held by a launcher with an unreadable lock body: "+err.Error())
	}
	runs := map[string]RunFacts{}
	runDirs := f.StartedRuns()
	if observe != nil {
		facts := observeAll(observe, runDirs)
		for i, d := range runDirs {
			if facts[i].Err != "" {
				out.Problems = append(out.Problems, facts[i].Err)
			}
			runs[d] = facts[i]
		}
	}
	bl := map[int][]Blocker{}
	out.Waves = f.Waves(runs, bl, now)
	out.Notifications = f.Notifications()
	if blockers != nil {
		for i := range out.Waves {
			if b := blockers(out.Waves[i].Wave); len(b) > 0 {
				out.Waves[i].Blockers = b
			}
		}
	}
	if out.Launcher == nil || !out.Launcher.Alive {
		for i := range out.Waves {
			if s := out.Waves[i].Status; s == WaveRunning || s == WaveWaitingForInput {
				out.Waves[i].Status = WaveInterrupted
			}
		}
	}
	for _, w := range out.Waves {
		out.LastEvents = append(out.LastEvents, w.LastEvents...)
	}
	slices.SortStableFunc(out.LastEvents, func(a, b EventRef) int { return a.At.Compare(b.At) })
	if n := len(out.LastEvents); n > lastEventsKept {
		out.LastEvents = out.LastEvents[n-lastEventsKept:]
	}
	return out, nil
}

// FindWave returns the wave n of a lane state, or nil.
func (l *Lane) FindWave(n int) *Wave {
	for i := range l.Waves {
		if l.Waves[i].Wave == n {
			return &l.Waves[i]
		}
	}
	return nil
}

// observeAll observes dirs on one goroutine per CPU (many small reads
// and decodes, and status waits for all of them).
func observeAll(observe Observer, dirs []string) []RunFacts {
	out := make([]RunFacts, len(dirs))
	fanout.Each(len(dirs), goruntime.GOMAXPROCS(0), func(i int) { out[i] = observe(dirs[i]) })
	return out
}
