package supervisor

import (
	"os"
	"path/filepath"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
)

// keptCheckout is the checkout a finished run of this lane other than
// this one kept of issue n on branch (not merged, still there), "" when
// none. Finished runs do not change: they are read once per process
// (keptIndex), and only when a worker starts without a checkout.
func (s *Supervisor) keptCheckout(n int, branch string) string {
	s.keptOnce.Do(func() { s.kept = s.keptIndex() })
	for _, k := range s.kept[n] {
		if k.branch != branch {
			continue
		}
		if _, err := os.Stat(k.path); err == nil {
			return k.path
		}
	}
	return ""
}

// keptWork is a checkout a finished run kept of an issue it did not merge.
type keptWork struct{ branch, path string }

// keptIndex lists, by issue, the checkouts the lane's finished runs kept,
// newest run first.
func (s *Supervisor) keptIndex() map[int][]keptWork {
	out := map[int][]keptWork{}
	dirs, err := runlog.List(s.o.Layout.StateDir)
	if err != nil {
		return out
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if filepath.Base(dirs[i]) == s.run().Info.ID {
			continue // this run: not finished, and its own checkouts are its
		}
		r, _, err := runlog.Read(dirs[i])
		if err != nil || !r.Finished {
			continue
		}
		for _, is := range r.List() {
			if is.Worktree != "" && is.State != backlog.StateMerged {
				out[is.Number] = append(out[is.Number], keptWork{branch: is.Branch, path: is.Worktree})
			}
		}
	}
	return out
}
