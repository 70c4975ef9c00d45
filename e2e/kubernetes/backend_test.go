package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// kubeLane is a repository whose lane runs its agents as Jobs in a fresh
// namespace of the test cluster, on a node that runs the pods here.
type kubeLane struct {
	*e2etest.Repo
	c    *kubetest.Cluster
	ns   string
	node *kubetest.Node
}

func newKubeLane(t *testing.T) *kubeLane {
	t.Helper()
	c := kubeCluster.Get(t)
	ns := c.Namespace(t, "e2e")
	kubeconfig := manifestLauncher(t, c, ns)
	node := c.StartNode(t, kubetest.NodeOptions{Namespace: ns, Binaries: map[string]string{e2etest.Bin(): e2etest.Bin()}})
	r := e2etest.NewRepo(t)
	cfg := strings.Replace(e2etest.Config, "runtime:\n", "runtime:\n  backend: kubernetes\n  kubernetes:\n"+
		"    kubeconfig: "+kubeconfig+"\n    namespace: "+ns+"\n    image: wave-agents:test\n"+
		"    serviceAccount: wave\n    binary: "+e2etest.Bin()+"\n    workspace: {hostPath: "+r.Root+"}\n", 1)
	r.Write("wave.config.yaml", cfg)
	return &kubeLane{Repo: r, c: c, ns: ns, node: node}
}

// manifestLauncher applies docs/kubernetes/rbac.yaml to ns, unchanged
// but for the launcher's subject (a ServiceAccount, whose token works on
// the harness and a real cluster alike), and returns a kubeconfig of that
// launcher: the lanes run as the user the manifest binds, not as admin.
// The pods run as its ServiceAccount wave.
func manifestLauncher(t *testing.T, c *kubetest.Cluster, ns string) string {
	t.Helper()
	c.ApplyManifest(t, filepath.Join("..", "..", "docs", "kubernetes", "rbac.yaml"), ns,
		rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "launcher", Namespace: ns}, nil)
	kubeconfig, err := c.ServiceAccountKubeconfig(context.Background(), ns, "launcher")
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

func (k *kubeLane) jobs() int {
	k.T.Helper()
	l, err := k.c.AdminClient().BatchV1().Jobs(k.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		k.T.Fatal(err)
	}
	return len(l.Items)
}

func TestKubeWavePassesEndToEnd(t *testing.T) {
	t.Parallel()
	k := newKubeLane(t)
	k.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, k.Repo)
	if res.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "A1 started (local) as job "+k.ns+"/") || strings.Contains(res.Stdout, "tmux -L") {
		t.Errorf("launch does not say where the agents run:\n%s", res.Stdout)
	}
	for _, f := range []string{"src/a1.txt", "src/a2.txt", "docs/plans/waves/reviews/wave-0-cont-qa.md"} {
		if _, err := os.Stat(filepath.Join(k.Root, f)); err != nil {
			t.Errorf("deliverable %s: %v", f, err)
		}
	}
	var rec struct {
		SessionBackend string `json:"sessionBackend"`
		Kubernetes     struct {
			Namespace, Job, Pod string
		} `json:"kubernetes"`
	}
	e2etest.ReadJSONFile(t, filepath.Join(k.Layout().RunDir(0, "A1", 1), "runtime.json"), &rec)
	if rec.SessionBackend != "kubernetes" || rec.Kubernetes.Namespace != k.ns || rec.Kubernetes.Pod == "" {
		t.Fatalf("A1's record %+v does not say it ran in the cluster", rec)
	}
	// One Job per run: two implementation agents and three closure agents.
	if n := k.jobs(); n != 5 {
		t.Errorf("%d jobs, want 5", n)
	}
	// status reads the same records as for tmux runs.
	st := k.Run(e2etest.Context(t), "status", "--lane", "main", "--json")
	var lane state.Lane
	if err := json.Unmarshal([]byte(st.Stdout), &lane); err != nil || len(lane.Waves) != 1 || lane.Waves[0].Status != state.WaveCompleted {
		t.Fatalf("status: %v %s", err, st.Stdout)
	}
}

func TestKubeExitCodeIsTheAgents(t *testing.T) {
	t.Parallel()
	e2etest.ExitCodeHonoured(t, newKubeLane(t).Repo)
}

// killLauncherOnceRunning writes wave 0 (ids, each taking delay, then
// closure), launches it and kill -9s the launcher once every id's runner
// reports running.
func (k *kubeLane) killLauncherOnceRunning(t *testing.T, delay string, ids ...string) {
	t.Helper()
	var impl []e2etest.Agent
	for _, id := range ids {
		impl = append(impl, e2etest.ImplAgent(id, "local.delay: "+delay))
	}
	k.WriteWave(0, append(impl, e2etest.ClosureAgents()...)...)
	first := k.Command(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitFor(t, "running agents "+strings.Join(ids, " "), time.Minute, func() bool {
		for _, id := range ids {
			b, err := os.ReadFile(filepath.Join(k.Layout().RunDir(0, id, 1), "runtime.json"))
			if err != nil || !strings.Contains(string(b), `"running"`) {
				return false
			}
		}
		return true
	})
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
}

func TestKubeKilledLauncherAdoptsRunningJobs(t *testing.T) {
	t.Parallel()
	k := newKubeLane(t)
	ids := []string{"A1", "A2", "A3"}
	k.killLauncherOnceRunning(t, "4s", ids...)
	res := e2etest.Launch(t, k.Repo)
	if res.Code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, adopted := e2etest.AgentStarts(k.Events())
	for _, id := range ids {
		if launched[id] != 1 || adopted[id] != 1 {
			t.Fatalf("%s launched %d adopted %d; want one launch and one adoption", id, launched[id], adopted[id])
		}
		if _, err := os.Stat(filepath.Join(k.Root, "src", strings.ToLower(id)+".txt")); err != nil {
			t.Fatalf("result of %s lost: %v", id, err)
		}
	}
	if n := k.jobs(); n != 6 {
		t.Errorf("%d jobs, want 6: the adopted runs got no second Job", n)
	}
}

func TestKubeStopAfterLauncherDeath(t *testing.T) {
	t.Parallel()
	k := newKubeLane(t)
	k.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 60s")}, e2etest.ClosureAgents()...)...)
	e2etest.KillLauncherWhileRunning(t, k.Repo, "A1")
	// Nothing mirrors the run now: status says so, and never calls the
	// run lost on its own.
	e2etest.WaitFor(t, "status to notice the missing launcher", 30*time.Second, func() bool {
		st := k.Run(e2etest.Context(t), "status", "--lane", "main", "--json")
		var lane state.Lane
		if json.Unmarshal([]byte(st.Stdout), &lane) != nil || len(lane.Waves) != 1 {
			return false
		}
		for _, a := range lane.Waves[0].Agents {
			if a.ID == "A1" {
				if a.State == state.AgentLost {
					t.Fatalf("status without a launcher calls A1 lost: %+v", a)
				}
				return a.State == state.AgentRunning && strings.Contains(a.Detail, "is its launcher running?") && a.Backend == "kubernetes"
			}
		}
		return false
	})
	res := k.Run(e2etest.Context(t), "stop", "--lane", "main")
	if res.Code != 0 || !strings.Contains(res.Stdout, "1 run(s) terminated") || !strings.Contains(res.Stdout, "job "+k.ns+"/") {
		t.Fatalf("stop: %d %s %s", res.Code, res.Stdout, res.Stderr)
	}
	var rec struct {
		TerminalDisposition string `json:"terminalDisposition"`
	}
	e2etest.ReadJSONFile(t, filepath.Join(k.Layout().RunDir(0, "A1", 1), "runtime.json"), &rec)
	if rec.TerminalDisposition != "terminated" {
		t.Fatalf("after stop A1's record says %q, want terminated", rec.TerminalDisposition)
	}
	if n := k.jobs(); n != 0 {
		t.Errorf("%d jobs left after stop", n)
	}
}

// The launcher is killed with SIGKILL at random moments of a wave (while
// it creates Jobs, while agents run, while closure runs), then started
// again, several times: every agent's work lands, the wave passes, each
// run has one Job, and no agent ever has two runs at once.
func TestKubeLauncherKill9Soak(t *testing.T) {
	t.Parallel()
	for trial := range e2etest.Kill9Trials(1) {
		t.Run(fmt.Sprintf("trial%d", trial), func(t *testing.T) {
			kubeKill9Trial(t, rand.New(rand.NewPCG(uint64(trial), 13)))
		})
	}
}

func kubeKill9Trial(t *testing.T, rng *rand.Rand) {
	k := newKubeLane(t)
	ids := []string{"A1", "A2", "A3", "A4", "A5", "A6"}
	var impl []e2etest.Agent
	for _, id := range ids {
		impl = append(impl, e2etest.ImplAgent(id, fmt.Sprintf("local.delay: %dms", 300+rng.IntN(1500))))
	}
	k.WriteWave(0, append(impl, e2etest.ClosureAgents()...)...)
	for kill := range 4 {
		l := k.Command(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard")
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill at a moment the launcher chose nothing about: after a
		// random number of its run records exist.
		want := 1 + rng.IntN(len(ids)+3)
		e2etest.WaitFor(t, fmt.Sprintf("kill %d: %d run records", kill, want), time.Minute, func() bool {
			n, _ := filepath.Glob(filepath.Join(k.Layout().StateDir, "waves", "0", "runs", "*", "runtime.json"))
			return len(n) >= want || l.ProcessState != nil
		})
		_ = l.Process.Signal(syscall.SIGKILL)
		_ = l.Wait()
	}
	res := e2etest.Launch(t, k.Repo)
	if res.Code != 0 {
		t.Fatalf("final launch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(k.Root, "src", strings.ToLower(id)+".txt")); err != nil {
			t.Errorf("result of %s lost: %v", id, err)
		}
	}
	jobs, err := k.c.AdminClient().BatchV1().Jobs(k.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := filepath.Glob(filepath.Join(k.Layout().StateDir, "waves", "0", "runs", "*"))
	perRun := map[string]int{}
	for _, j := range jobs.Items {
		perRun[j.Annotations["wave-orchestrator.dev/run-id"]]++
	}
	for id, n := range perRun {
		if n != 1 {
			t.Errorf("run %s has %d jobs", id, n)
		}
	}
	if len(jobs.Items) > len(runs) {
		t.Errorf("%d jobs for %d run directories", len(jobs.Items), len(runs))
	}
	// A run left without a final record never got a Job: anything the
	// cluster ran was mirrored to the end.
	for _, d := range runs {
		var rec struct {
			RunID               string `json:"runId"`
			TerminalDisposition string `json:"terminalDisposition"`
		}
		b, err := os.ReadFile(filepath.Join(d, "runtime.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // killed before the run was recorded: nothing was created
		}
		if err != nil || json.Unmarshal(b, &rec) != nil {
			t.Fatalf("run %s: %v %s", d, err, b)
		}
		switch rec.TerminalDisposition {
		case "completed", "failed", "terminated":
		default:
			if perRun[rec.RunID] != 0 {
				t.Errorf("run %s is %s with a Job in the cluster", rec.RunID, rec.TerminalDisposition)
			}
		}
	}
	// No agent ran twice at once: each run of an agent started after the
	// one before it had ended.
	overlapCheck(t, runs)
}

// overlapCheck fails when two runs of one agent were alive at once.
func overlapCheck(t *testing.T, runDirs []string) {
	t.Helper()
	type span struct {
		run, disp  string
		start, end time.Time
	}
	byAgent := map[string][]span{}
	for _, d := range runDirs {
		var rec struct {
			RunID               string     `json:"runId"`
			AgentID             string     `json:"agentId"`
			TerminalDisposition string     `json:"terminalDisposition"`
			StartedAt           time.Time  `json:"startedAt"`
			LastHeartbeatAt     time.Time  `json:"lastHeartbeatAt"`
			FinishedAt          *time.Time `json:"finishedAt"`
		}
		b, err := os.ReadFile(filepath.Join(d, "runtime.json"))
		if err != nil || json.Unmarshal(b, &rec) != nil {
			continue
		}
		// A run never finished (lost) was alive until its last
		// heartbeat; one that never started, not at all.
		end := rec.LastHeartbeatAt
		if rec.FinishedAt != nil {
			end = *rec.FinishedAt
		}
		byAgent[rec.AgentID] = append(byAgent[rec.AgentID], span{rec.RunID, rec.TerminalDisposition, rec.StartedAt, end})
	}
	for id, ss := range byAgent {
		for i := range ss {
			for j := i + 1; j < len(ss); j++ {
				a, b := ss[i], ss[j]
				if a.start.Before(b.end) && b.start.Before(a.end) {
					t.Errorf("agent %s had two runs at once: %s (%s, %s–%s) and %s (%s, %s–%s)", id,
						a.run, a.disp, a.start.Format(time.StampMilli), a.end.Format(time.StampMilli),
						b.run, b.disp, b.start.Format(time.StampMilli), b.end.Format(time.StampMilli))
				}
			}
		}
	}
}
