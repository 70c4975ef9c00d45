package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// kubeBacklog is a backlog repository whose workers run as pods of a
// fresh namespace on the test node, cloning and pushing its bare origin
// over HTTP on 127.0.0.1; the supervisor reaches the API server through
// a proxy that counts its requests.
type kubeBacklog struct {
	*e2etest.BacklogRepo
	c        *kubetest.Cluster
	ns       string
	node     *kubetest.Node
	requests *requestCounter
	ctl      string // the test's gate files
}

// backlogIssues is how many issues the kubernetes backlog test runs.
const backlogIssues = 20

// victim is the issue whose pod is deleted mid-run, with uncommitted work.
const victim = 7

func newKubeBacklog(t *testing.T) *kubeBacklog {
	t.Helper()
	k := onKube(t, e2etest.NewBacklogRepo(t))
	for n := 1; n <= backlogIssues; n++ {
		directive := fmt.Sprintf("local-agent: commit=part%d/work.md", n)
		if n == victim {
			// Leaves an uncommitted file, then waits for the test's go.
			directive += fmt.Sprintf(" dirty=part%d/wip.md wait=%s", n, filepath.Join(k.ctl, "go"))
		}
		k.Issue(n, fmt.Sprintf("Issue %d", n), fmt.Sprintf("Files: part%d/**\n\n%s", n, directive))
	}
	k.CommitIssues(t)
	return k
}

// onKube runs r's workers as pods of a fresh namespace on the test node.
func onKube(t *testing.T, r *e2etest.BacklogRepo) *kubeBacklog {
	t.Helper()
	c := kubeCluster.Get(t)
	ns := c.Namespace(t, "e2e-backlog")
	kubeconfig := manifestLauncher(t, c, ns)
	node := c.StartNode(t, kubetest.NodeOptions{Namespace: ns, Binaries: map[string]string{e2etest.Bin(): e2etest.Bin()}})
	counted, requests := countingKubeconfig(t, kubeconfig)
	url := gittest.ServeHTTP(t, r.Origin, "", "")
	cfgPath := filepath.Join(r.Root, "wave.config.yaml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	kube := "runtime:\n  backend: kubernetes\n  kubernetes:\n" +
		"    kubeconfig: " + strconv.Quote(counted) + "\n    namespace: " + ns + "\n    image: wave-agents:test\n" +
		"    serviceAccount: wave\n    binary: " + strconv.Quote(e2etest.Bin()) + "\n    gitURL: " + strconv.Quote(url) + "\n"
	r.Write("wave.config.yaml", strings.Replace(string(cfg), "runtime:\n", kube, 1))
	return &kubeBacklog{BacklogRepo: r, c: c, ns: ns, node: node, requests: requests, ctl: t.TempDir()}
}

// record is the newest mirrored record of issue n's worker (nil before
// it has one).
func (k *kubeBacklog) record(n int) *runtime.Record {
	runs, _ := filepath.Glob(filepath.Join(k.Layout().StateDir, "backlog", "*", "runs", fmt.Sprintf("i%d-a*", n)))
	if len(runs) == 0 {
		return nil
	}
	rec, err := runtime.ReadRecord(filepath.Join(runs[len(runs)-1], lanes.RuntimeFile))
	if err != nil {
		return nil
	}
	return rec
}

// deletePod deletes pod as a person or a node drain would, and waits
// until its process is gone.
func (k *kubeBacklog) deletePod(t *testing.T, pod string) {
	t.Helper()
	ctx := context.Background()
	if err := k.c.AdminClient().CoreV1().Pods(k.ns).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitFor(t, "pod "+pod+" to be gone", time.Minute, func() bool {
		_, err := k.c.AdminClient().CoreV1().Pods(k.ns).Get(ctx, pod, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// TestKubeBacklogKilledSupervisorAndDeletedPodMergeEachIssueOnce: twenty
// issues, one pod each, width 5. The supervisor is killed with SIGKILL
// while issue 7's worker holds uncommitted work, and that worker's pod
// is deleted while no supervisor runs. A new `backlog run` resumes: every
// issue is merged exactly once into the wave branch, and issue 7's
// uncommitted file, saved in the snapshot its runner pushed when its pod
// was deleted, is restored in its relaunch's pod and reaches the merge.
func TestKubeBacklogKilledSupervisorAndDeletedPodMergeEachIssueOnce(t *testing.T) {
	t.Parallel()
	for trial := range e2etest.Kill9Trials(1) {
		t.Run(fmt.Sprintf("trial%d", trial), func(t *testing.T) { kubeBacklogTrial(t) })
	}
}

func kubeBacklogTrial(t *testing.T) {
	k := newKubeBacklog(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	l := &e2etest.Lives{R: k.BacklogRepo, Args: []string{"backlog", "run", "--issues", issueList(backlogIssues), "--width", "5", "--no-dashboard"},
		// Lighter heartbeats than the suite's 200 ms: twenty pods on two cores.
		Env: []string{"WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS=1000", "WAVE_RUNTIME_TERMINATE_GRACE_MS=2000"}}
	defer l.Dump(t)
	start := time.Now()
	first := l.Start(ctx, "")
	ended := make(chan error, 1)
	go func() { ended <- first.Wait() }()
	var pod string
	e2etest.WaitFor(t, fmt.Sprintf("#%d's runner to report its uncommitted file", victim), 5*time.Minute, func() bool {
		select {
		case err := <-ended:
			t.Fatalf("the supervisor ended before #%d's worker reported (%v):\n%s", victim, err, l.Outs[0].String())
		default:
		}
		rec := k.record(victim)
		if rec == nil || rec.Git == nil || rec.Git.Dirty == 0 || rec.Kubernetes == nil || rec.Kubernetes.Pod == "" {
			return false
		}
		pod = rec.Kubernetes.Pod
		return true
	})
	if where := k.statusPods(t)[victim]; !strings.Contains(where, pod) {
		t.Errorf("backlog status names #%d's pod as %q, want %s", victim, where, pod)
	}
	_ = first.Process.Signal(syscall.SIGKILL)
	<-ended
	k.deletePod(t, pod)
	if err := os.WriteFile(filepath.Join(k.ctl, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	second := l.Start(ctx, "")
	if err := second.Wait(); err != nil {
		t.Fatalf("the resumed run: %v", err)
	}
	wall := time.Since(start)
	run, evs := e2etest.BacklogEvents(t, k.BacklogRepo)
	merged := map[int]int{}
	for _, ev := range evs {
		if ev.Kind == backlog.EvMerged {
			merged[ev.Issue]++
		}
	}
	log := e2etest.GitIn(t, k.Origin, "log", "--merges", "--format=%s", run.Info.WaveBranch)
	for n := 1; n <= backlogIssues; n++ {
		if merged[n] != 1 || run.Issues[n].State != backlog.StateMerged {
			t.Errorf("#%d: %d merged events, state %s; want merged once", n, merged[n], run.Issues[n].State)
		}
		if c := strings.Count(log, fmt.Sprintf("Merge #%d:", n)); c != 1 {
			t.Errorf("#%d has %d merge commits on the wave branch, want 1", n, c)
		}
		if !gittest.HasPath(k.Origin, run.Info.WaveBranch, fmt.Sprintf("part%d/work.md", n)) {
			t.Errorf("#%d's work is not on the wave branch", n)
		}
	}
	k.victimRecovered(t, run)
	// attach --issue takes the pod's way: the run ended, so its log
	// (brought back from origin) is shown instead.
	att := k.RunEnv(context.Background(), "attach", "--issue", strconv.Itoa(victim))
	if att.Code != 0 || !strings.Contains(att.Stderr, "its pod has no agent to attach to") || !strings.Contains(att.Stdout, "found earlier uncommitted work") {
		t.Errorf("attach --issue %d: exit %d\nstdout:\n%s\nstderr:\n%s", victim, att.Code, att.Stdout, att.Stderr)
	}
	if left := k.OriginRefs(t, "refs/wave/"); strings.Contains(left, "refs/wave/salvage/") || strings.Contains(left, "refs/wave/runs/") {
		t.Errorf("the run left snapshots or results on origin:\n%s", left)
	}
	k.oneJobPerRun(t)
	reqs := k.requests.total()
	t.Logf("measured: %d issues on the test node in %s (two supervisor lives, one pod deleted); the supervisor made %d API requests, %.1f per issue (%s)",
		backlogIssues, wall.Round(time.Second), reqs, float64(reqs)/backlogIssues, k.requests.summary())
}

// victimRecovered: the deleted pod's uncommitted file reached the merge,
// its relaunch was told it continues from the snapshot, and its pod
// restored it.
func (k *kubeBacklog) victimRecovered(t *testing.T, run *backlog.Run) {
	t.Helper()
	wip := fmt.Sprintf("part%d/wip.md", victim)
	if !gittest.HasPath(k.Origin, run.Info.WaveBranch, wip) {
		t.Errorf("#%d's uncommitted %s did not reach the wave branch", victim, wip)
	}
	is := run.Issues[victim]
	ref := fmt.Sprintf("refs/wave/salvage/%d/a1", victim)
	if is.Salvages != 1 {
		t.Errorf("#%d: %d salvages, want 1", victim, is.Salvages)
	}
	prompt, err := os.ReadFile(filepath.Join(filepath.Dir(is.RunDir), fmt.Sprintf("i%d-a2", victim), lanes.PromptFile))
	if err != nil || !strings.Contains(string(prompt), ref) {
		t.Errorf("the relaunch's prompt does not name the snapshot %s (%v):\n%s", ref, err, prompt)
	}
	out, _ := os.ReadFile(filepath.Join(filepath.Dir(is.RunDir), fmt.Sprintf("i%d-a2", victim), lanes.LogFile))
	if !strings.Contains(string(out), "found earlier uncommitted work in "+wip) {
		t.Errorf("the relaunch's worker did not find the restored %s; its log:\n%s", wip, out)
	}
}

// oneJobPerRun: no worker run got two Jobs (an adopted run is never
// started twice).
func (k *kubeBacklog) oneJobPerRun(t *testing.T) {
	t.Helper()
	jobs, err := k.c.AdminClient().BatchV1().Jobs(k.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perRun := map[string]int{}
	for _, j := range jobs.Items {
		perRun[j.Annotations["wave-orchestrator.dev/run-id"]]++
	}
	for id, n := range perRun {
		if n != 1 {
			t.Errorf("run %s has %d jobs", id, n)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(k.Layout().StateDir, "backlog", "*", "runs", "*"))
	if len(jobs.Items) > len(runs) {
		t.Errorf("%d jobs for %d worker runs", len(jobs.Items), len(runs))
	}
}

func issueList(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// statusPods reads the pods `backlog status --json` names.
func (k *kubeBacklog) statusPods(t *testing.T) map[int]string {
	t.Helper()
	res := k.RunEnv(context.Background(), "backlog", "status", "--json")
	var v struct {
		Issues []struct {
			Number int    `json:"number"`
			Pod    string `json:"pod"`
		} `json:"issues"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &v); err != nil {
		t.Fatalf("status --json: %v\n%s", err, res.Stdout)
	}
	pods := map[int]string{}
	for _, is := range v.Issues {
		if is.Pod != "" {
			pods[is.Number] = is.Pod
		}
	}
	return pods
}
