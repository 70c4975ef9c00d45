package supervisor

import (
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
)

// Delivery is a finished run that merged every one of a selection of
// issues into its wave branch.
type Delivery struct {
	RunID      string
	WaveBranch string
	FinalPR    string // "" when the run opened none (local source: its file)
}

// Delivered finds the newest finished run of the lane in which every one
// of issues was merged. `backlog run --issues` for work already delivered
// says so instead of starting an empty run (whose claims would all be
// refused: the delivering run keeps them until its PR merges).
func Delivered(laneStateDir string, issues []int) (Delivery, bool, error) {
	if len(issues) == 0 {
		return Delivery{}, false, nil
	}
	dirs, err := runlog.List(laneStateDir)
	if err != nil {
		return Delivery{}, false, err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		r, _, err := runlog.Read(dirs[i])
		if err != nil {
			return Delivery{}, false, err
		}
		if r.Finished && mergedAll(r, issues) {
			d := Delivery{RunID: r.Info.ID, WaveBranch: r.Info.WaveBranch}
			if r.FinalPR != nil {
				d.FinalPR = r.FinalPR.URL
			}
			return d, true, nil
		}
	}
	return Delivery{}, false, nil
}

func mergedAll(r *backlog.Run, issues []int) bool {
	for _, n := range issues {
		if is := r.Issues[n]; is == nil || is.State != backlog.StateMerged {
			return false
		}
	}
	return true
}

// String is the sentence `backlog run` prints for it.
func (d Delivery) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "delivered by backlog run %s (wave branch %s", d.RunID, d.WaveBranch)
	if d.FinalPR != "" {
		fmt.Fprintf(&b, ", final pull request %s", d.FinalPR)
	}
	b.WriteString("); nothing to do")
	return b.String()
}
