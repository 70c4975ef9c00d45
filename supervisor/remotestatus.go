package supervisor

import (
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// podLive is the live facts of a worker running in a pod, from its
// runner's reports as the launcher mirrored them into runtime.json (its
// checkout is not on this machine): commits ahead and uncommitted files
// as the runner counted them in its clone, its last output, and where it
// runs. ok is false for a run that is not a pod's.
func podLive(is *backlog.IssueRun, now time.Time) (backlog.LiveFacts, bool) {
	var f backlog.LiveFacts
	if is.RunDir == "" {
		return f, false
	}
	rec, err := runtime.ReadRecord(filepath.Join(is.RunDir, lanes.RuntimeFile))
	if err != nil || rec.Kubernetes == nil {
		return f, false
	}
	f.Pod = podWhere(rec.Kubernetes)
	if g := rec.Git; g != nil {
		ahead, dirty := g.Ahead, g.Dirty
		f.CommitsAhead, f.DirtyFiles = &ahead, &dirty
	}
	if out := rec.LastOutputAt; out != nil {
		age := int64(now.Sub(*out).Seconds())
		f.LastOutputSec = &age
	}
	return f, true
}

// podWhere names a run's pod for people: namespace/pod on node, or its
// Job while no pod was seen.
func podWhere(k *runtime.KubeRef) string {
	name := k.Pod
	if name == "" {
		name = "job " + k.Job
	}
	where := k.Namespace + "/" + name
	if k.Node != "" {
		where += " on " + k.Node
	}
	return where
}
