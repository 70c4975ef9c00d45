package supervisor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

func TestStatusOfAPodWorkerComesFromItsRunnersReport(t *testing.T) {
	dir := t.TempDir()
	out := time.Now().Add(-90 * time.Second)
	rec := runtime.Record{RunID: "r1-i3-a1", LastOutputAt: &out, Kubernetes: &runtime.KubeRef{Namespace: "agents", Job: "wave-x", Pod: "wave-x-abcde", Node: "node-1"},
		Git: &runtime.GitFacts{Ahead: 2, Dirty: 3}}
	if err := jsonfile.Write(filepath.Join(dir, lanes.RuntimeFile), rec); err != nil {
		t.Fatal(err)
	}
	is := &backlog.IssueRun{Number: 3, State: backlog.StateRunning, RunDir: dir}
	f, ok := live(t.Context(), is, nil, "refs/remotes/origin/wave/x", time.Now())
	if !ok || f.Pod != "agents/wave-x-abcde on node-1" || f.CommitsAhead == nil || *f.CommitsAhead != 2 || f.DirtyFiles == nil || *f.DirtyFiles != 3 ||
		f.LastOutputSec == nil || *f.LastOutputSec < 89 {
		t.Fatalf("live facts %+v (ok %v)", f, ok)
	}
}
