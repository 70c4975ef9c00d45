package launcher

import (
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// runtime.noProgressMinutes is the wave agents' no-progress brake: an
// agent that keeps printing while its owned files (its File ownership
// paths) did not change for that long is stopped (TERM, grace, KILL) and its run counts as failed
// with status code no-progress, retried like a stall with the reason in
// the wave's failures. Its files are looked at every tenth of the limit
// (at most every five minutes), by their size and modification time.

// StateNoProgress is the outcome of a run the launcher stopped for want
// of progress.
const StateNoProgress = state.AgentNoProgress

// ownedProgress is what the brake knows of one run: its owned files'
// mark, when it last changed (the first look counts as a change), and
// when it was last looked at.
type ownedProgress struct {
	mark     string
	at, seen time.Time
	stopped  bool
}

// brakeNoProgress looks at the owned files of each pending run due a look
// and stops the runs whose files did not change for the limit.
func (r *waveRun) brakeNoProgress(ctx context.Context, pending map[string]string) {
	limit := r.l.opt.Lane.Runtime.NoProgress()
	if limit <= 0 {
		return
	}
	if r.progress == nil {
		r.progress = map[string]*ownedProgress{}
	}
	now := r.l.now()
	for dir, id := range pending {
		p := r.progress[dir]
		if p == nil {
			p = &ownedProgress{seen: now}
			r.progress[dir] = p
		}
		if p.stopped || now.Sub(p.seen) < min(max(limit/10, time.Second), 5*time.Minute) {
			continue
		}
		p.seen = now
		if m := ownedMark(r.l.opt.Lane.RepoRoot, r.p.Agents[id].Agent.OwnedPaths); m != p.mark || p.at.IsZero() {
			p.mark, p.at = m, now
			continue
		}
		if now.Sub(p.at) < limit {
			continue
		}
		if rec, err := runtime.ReadRecord(filepath.Join(dir, lanes.RuntimeFile)); err != nil || rec.LastOutputAt == nil || !rec.LastOutputAt.After(p.at) {
			continue // silent since: the silence timer's, not the brake's
		}
		p.stopped = true
		r.l.printf("wave %d: %s: its owned files did not change for %s (runtime.noProgressMinutes); stopping it as no-progress", r.n, id, limit)
		grace := time.Duration(r.l.opt.Lane.Runtime.TerminateGraceMs) * time.Millisecond
		_ = r.l.runs.Terminate(ctx, dir, grace, r.l.opt.KeepSessions)
	}
}

// noProgressOutcome is o for a run the brake stopped.
func (r *waveRun) noProgressOutcome(dir string, o Outcome) Outcome {
	if p := r.progress[dir]; p != nil && p.stopped && o.Done {
		o.State = StateNoProgress
		o.Detail = fmt.Sprintf("no progress: its owned files did not change for %s (runtime.noProgressMinutes)", r.l.opt.Lane.Runtime.NoProgress())
	}
	return o
}

// ownedMark names the state of the owned paths (files, or directories
// walked): each entry's path, size and modification time, hashed.
func ownedMark(root string, owned []string) string {
	h := fnv.New64a()
	for _, rel := range owned {
		p := filepath.Join(root, filepath.FromSlash(rel))
		n := 0
		_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if n++; err != nil || n > 10000 {
				return fs.SkipAll // what is there to see is seen
			}
			fi, err := d.Info()
			if err != nil || fi.IsDir() {
				return nil
			}
			fmt.Fprintf(h, "%s\x00%d\x00%d\x00", path, fi.Size(), fi.ModTime().UnixNano())
			return nil
		})
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(h, "%s\x00missing\x00", p)
		}
	}
	return strconv.FormatUint(h.Sum64(), 36)
}
