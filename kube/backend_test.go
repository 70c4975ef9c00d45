package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

func TestRealExitCodeIsRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.payload("w0-A1-a1", "echo working; echo 'print me' >&2; exit 3")
	if err := e.b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	obs := e.await(e.b, p.RunDir, "run finished", time.Minute, done)
	v := obs.Verdict
	if v.State != runtime.StateFailed || v.ExitCode == nil || *v.ExitCode != 3 {
		t.Fatalf("verdict %+v, want failed with the agent's exit code 3", v)
	}
	st, err := runtime.ReadStatus(filepath.Join(p.RunDir, "status.json"))
	if err != nil || st.Code != 3 {
		t.Fatalf("status.json %+v %v", st, err)
	}
	rec := obs.Record
	if rec.SessionBackend != runtime.BackendKubernetes || rec.Kubernetes == nil || rec.Kubernetes.Pod == "" || rec.Kubernetes.Node != e.node.Name() {
		t.Errorf("record does not say where it ran: %+v", rec.Kubernetes)
	}
	if rec.LogPath != filepath.Join(p.RunDir, "agent.log") {
		t.Errorf("record log path %q is not the run dir's", rec.LogPath)
	}
	// The runner wrote the log into the shared run directory.
	if b, err := os.ReadFile(rec.LogPath); err != nil || !strings.Contains(string(b), "working") || !strings.Contains(string(b), "print me") {
		t.Errorf("agent.log %q %v", b, err)
	}
	job, err := e.c.AdminClient().BatchV1().Jobs(e.ns).Get(context.Background(), p.Kubernetes.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *job.Spec.BackoffLimit != 0 || job.Labels[LabelRun] != "w0-A1-a1" || job.Labels[LabelAgent] != "A1" {
		t.Errorf("job %s: backoffLimit %d labels %v", job.Name, *job.Spec.BackoffLimit, job.Labels)
	}
	// The run's Secret (its env values) is deleted once the run is over.
	eventually(t, "secret deleted", func() bool {
		_, err := e.c.AdminClient().CoreV1().Secrets(e.ns).Get(context.Background(), p.Kubernetes.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func TestCompletedRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The script compares with the secret spelt in two parts, so the
	// argv does not hold it.
	p := e.payload("w0-A1-a1", `test "$API_TOKEN" = "s3""cret" && echo done > "$WAVE_AGENT_ID.txt"`)
	p.Env = map[string]string{"API_TOKEN": "s3cret"}
	if err := e.b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	obs := e.await(e.b, p.RunDir, "run finished", time.Minute, done)
	if obs.Verdict.State != runtime.StateCompleted {
		t.Fatalf("verdict %+v", obs.Verdict)
	}
	// The agent ran in the repository (the workspace volume) and got
	// the real secret, which launch.json on disk does not hold.
	if _, err := os.Stat(filepath.Join(e.repo, "A1.txt")); err != nil {
		t.Errorf("agent's file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(p.RunDir, "launch.json")); strings.Contains(string(b), "s3cret") {
		t.Error("launch.json holds the secret")
	}
}

func TestRunnerGoneIsLostWhenItsLeaseExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.payload("w0-A1-a1", "sleep 60")
	if err := e.b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	obs := e.await(e.b, p.RunDir, "running", time.Minute, running)
	// The node dies: the pod stays Running in the API, and nothing but
	// the lease tells that the runner is gone.
	if err := e.node.Vanish(obs.Record.Kubernetes.Pod); err != nil {
		t.Fatal(err)
	}
	obs = e.await(e.b, p.RunDir, "lost", 30*time.Second, done)
	if obs.Verdict.State != runtime.StateLost || !strings.Contains(obs.Verdict.Reason, "lease not renewed") || !obs.Verdict.Terminate {
		t.Fatalf("verdict %+v, want lost by the lease, with its pod to be deleted", obs.Verdict)
	}
	// Stopping it does not wait for a node that will never answer.
	if err := e.b.Terminate(context.Background(), p.RunDir, 500*time.Millisecond, false); err != nil {
		t.Fatal(err)
	}
	// Its record says it was lost, and why, not running for good.
	rec, err := runtime.ReadRecord(filepath.Join(p.RunDir, "runtime.json"))
	if err != nil || rec.TerminalDisposition != runtime.Failed || !rec.Lost || !strings.Contains(rec.ExitReason, "lease not renewed") {
		t.Fatalf("record %+v (%v), want failed, lost by its lease", rec, err)
	}
	if obs, _ := e.b.Observe(context.Background(), p.RunDir, time.Now()); obs.Verdict.State != runtime.StateLost {
		t.Fatalf("verdict read back from the record %+v, want lost", obs.Verdict)
	}
}

func TestDeadlineTimesOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.payload("w0-A1-a1", "sleep 60")
	deadline := time.Now().Add(3 * time.Second)
	p.DeadlineAt = &deadline
	if err := e.b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	obs := e.await(e.b, p.RunDir, "timed out", time.Minute, done)
	if obs.Verdict.State != runtime.StateTimedOut {
		t.Fatalf("verdict %+v, want timed-out", obs.Verdict)
	}
}

func TestStopTerminatesWithGrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The agent takes TERM as a cue to write a file and exit 0; it says
	// when its trap is set, since a TERM before that ends the shell.
	p := e.payload("w0-A1-a1", `trap 'echo bye > stopped.txt; exit 0' TERM; : > trapped.txt; while :; do sleep 0.1; done`)
	if err := e.b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	e.await(e.b, p.RunDir, "running", time.Minute, running)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(e.repo, "trapped.txt")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent never set its TERM trap")
		}
	}
	if err := e.b.Terminate(context.Background(), p.RunDir, 2*time.Second, false); err != nil {
		t.Fatal(err)
	}
	rec, err := runtime.ReadRecord(filepath.Join(p.RunDir, "runtime.json"))
	if err != nil || rec.TerminalDisposition != runtime.Terminated {
		t.Fatalf("after stop the record is %+v (%v), want terminated", rec, err)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "stopped.txt")); err != nil {
		t.Errorf("the agent got no TERM: %v", err)
	}
	_, err = e.c.AdminClient().BatchV1().Jobs(e.ns).Get(context.Background(), p.Kubernetes.Name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("job still there after stop: %v", err)
	}
}

func TestRestartedLauncherAdoptsRunningJobs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first, stop := context.WithCancel(context.Background())
	b1 := e.backend(first)
	p := e.payload("w0-A1-a1", "while [ ! -e go ]; do sleep 0.05; done; exit 0")
	if err := b1.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	e.await(b1, p.RunDir, "running", time.Minute, running)
	stop() // the launcher dies; its watches end, the Job runs on

	b2 := e.backend(context.Background())
	b2.Watch(p.RunDir)
	if obs, _ := b2.Observe(context.Background(), p.RunDir, time.Now()); obs.Verdict.State != runtime.StateRunning {
		t.Fatalf("the new launcher sees %+v, want the run still running", obs.Verdict)
	}
	// Starting the same run again (a launcher killed between its record
	// and its Job) adopts the Job instead of making a second one.
	again := e.payload("w0-A1-a1", "exit 9")
	if err := b2.Start(context.Background(), []*runtime.Payload{again}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.repo, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	obs := e.await(b2, p.RunDir, "finished", time.Minute, done)
	if obs.Verdict.State != runtime.StateCompleted {
		t.Fatalf("verdict %+v, want the adopted run's completion", obs.Verdict)
	}
	jobs, err := e.c.AdminClient().BatchV1().Jobs(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(jobs.Items) != 1 {
		t.Fatalf("%d jobs (%v), want exactly one", len(jobs.Items), err)
	}
}

// eventually waits for cond, checked every 20 ms, for 30 s at most: for
// what no watch of the backend reports.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		<-tick.C
	}
}

func TestKilledContainerIsLostWithItsSignal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.payload("w0-A1-a1", "sleep 60")
	if err := e.b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	obs := e.await(e.b, p.RunDir, "running", time.Minute, running)
	// The kubelet reports the kill (OOM, or a kill -9 in the node): the
	// pod status is the second channel, as a tmux pane's exit status is.
	if err := e.node.Kill(obs.Record.Kubernetes.Pod); err != nil {
		t.Fatal(err)
	}
	obs = e.await(e.b, p.RunDir, "lost", 30*time.Second, done)
	v := obs.Verdict
	if v.State != runtime.StateLost || v.ExitCode == nil || *v.ExitCode != 137 || v.Signal != "SIGKILL" {
		t.Fatalf("verdict %+v, want lost by SIGKILL with exit code 137", v)
	}
}

func TestPodThatCannotStartFailsAfterTheLaunchGrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.opts.EnvFrom = []string{"no-such-secret"}
	e.opts.LaunchGrace = time.Second
	b := e.backend(t.Context())
	p := e.payload("w0-A1-a1", "exit 0")
	if err := b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	obs := e.await(b, p.RunDir, "failed start", time.Minute, done)
	v := obs.Verdict
	if v.State != runtime.StateFailed || !strings.Contains(v.Reason, "CreateContainerConfigError") || !strings.Contains(v.Reason, "no-such-secret") || !v.Terminate {
		t.Fatalf("verdict %+v, want failed naming the kubelet's reason, its job to be deleted", v)
	}
	// The launcher deletes it, as asked: the record keeps the kubelet's
	// reason, not "stopped on request".
	if err := b.Terminate(context.Background(), p.RunDir, time.Second, false); err != nil {
		t.Fatal(err)
	}
	rec, err := runtime.ReadRecord(filepath.Join(p.RunDir, "runtime.json"))
	if err != nil || rec.TerminalDisposition != runtime.Failed || !strings.Contains(rec.ExitReason, "CreateContainerConfigError") {
		t.Fatalf("record %+v (%v), want failed with the kubelet's reason", rec, err)
	}
}

func TestRunnerWithoutLeaseRightsFailsSayingWhy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The pods run as an account with no rights at all.
	e.c.BindServiceAccount(t, e.ns, "norights")
	e.opts.ServiceAccount = "norights"
	b := e.backend(t.Context())
	p := e.payload("w0-A1-a1", "touch ran.txt")
	if err := b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	obs := e.await(b, p.RunDir, "failed", time.Minute, done)
	if v := obs.Verdict; v.State != runtime.StateFailed || !strings.Contains(v.Reason, "forbidden") || !strings.Contains(v.Reason, "leases") {
		t.Fatalf("verdict %+v, want failed saying the lease could not be renewed", v)
	}
	// It failed before the agent started: nothing ran unseen.
	if _, err := os.Stat(filepath.Join(e.repo, "ran.txt")); err == nil {
		t.Error("the agent ran without a way to report")
	}
}

func TestJobWithoutItsSecretFailsAfterTheLaunchGrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.opts.LaunchGrace = time.Second
	b := e.backend(t.Context())
	// A launcher killed between creating the Job and its Secret: the
	// pod waits for a volume that will never come.
	p := e.payload("w0-A1-a1", "exit 0")
	if err := b.prepare(p); err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.jobs(e.ns).Create(context.Background(), jobFor(p, b.o, p.Kubernetes.Name, time.Now()), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	restarted := e.backend(t.Context())
	restarted.Watch(p.RunDir)
	obs := e.await(restarted, p.RunDir, "failed", time.Minute, done)
	if v := obs.Verdict; v.State != runtime.StateFailed || !strings.Contains(v.Reason, "Secret and Lease are missing") {
		t.Fatalf("verdict %+v, want failed: its Secret is missing", v)
	}
}

func TestStopBeforeThePodStartsRecordsItStopped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.opts.EnvFrom = []string{"no-such-secret"} // the pod never starts
	b := e.backend(t.Context())
	p := e.payload("w0-A1-a1", "exit 0")
	if err := b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	if err := b.Terminate(context.Background(), p.RunDir, time.Second, false); err != nil {
		t.Fatal(err)
	}
	rec, err := runtime.ReadRecord(filepath.Join(p.RunDir, "runtime.json"))
	if err != nil || rec.TerminalDisposition != runtime.Terminated {
		t.Fatalf("record after stop %+v (%v), want terminated", rec, err)
	}
}
