package kube

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// gitUser and gitPass are the origin's basic-auth credentials; the pods
// get them from the credentials Secret only.
const gitUser, gitPass = "worker", "pa55-never-logged"

// checkoutEnv is a test namespace whose backend has no workspace, an
// origin served over HTTP with basic auth, and the credentials Secret.
type checkoutEnv struct {
	*env
	origin, url string
	b           *Backend
}

func newCheckoutEnv(t *testing.T) *checkoutEnv {
	t.Helper()
	e := newEnv(t)
	origin := gittest.OriginWithBase(t, nil)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "git-creds", Namespace: e.ns}, Type: corev1.SecretTypeBasicAuth,
		Data: map[string][]byte{"username": []byte(gitUser), "password": []byte(gitPass)}}
	if _, err := e.c.AdminClient().CoreV1().Secrets(e.ns).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.opts.WorkspaceHostPath, e.opts.GitCredentialsSecret = "", "git-creds"
	ce := &checkoutEnv{env: e, origin: origin, url: gittest.ServeHTTP(t, origin, gitUser, gitPass)}
	ce.b = e.backend(t.Context())
	return ce
}

// workerPayload is issue n's worker, attempt k, running script in its
// clone; its run dir is not where the clone is.
func (e *checkoutEnv) workerPayload(n, k int, script string) *runtime.Payload {
	runID := "i" + itoa(n) + "-a" + itoa(k)
	p := e.payload(runID, script)
	dir := filepath.Join(e.t.TempDir(), "clone")
	p.Cwd = dir
	p.Checkout = &runtime.Checkout{Origin: e.url, Base: "main", Branch: "wave/i" + itoa(n), Dir: dir,
		SnapshotRef: "refs/wave/salvage/" + itoa(n) + "/a" + itoa(k), ResultRef: "refs/wave/runs/" + runID}
	if err := os.MkdirAll(p.RunDir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.RunDir, "prompt.md"), []byte("work on issue "+itoa(n)+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	p.PromptPath = filepath.Join(p.RunDir, "prompt.md")
	return p
}

func itoa(n int) string { return strconv.Itoa(n) }

func (e *checkoutEnv) start(p *runtime.Payload) {
	e.t.Helper()
	if err := e.b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		e.t.Fatal(err)
	}
}

// originHas is the sha of ref on origin ("" when absent).
func (e *checkoutEnv) originHas(ref string) string { return gittest.Ref(e.origin, ref) }

func TestAWorkersCommitsInItsPodReachOriginWithItsResultAndNoSharedDisk(t *testing.T) {
	t.Parallel()
	e := newCheckoutEnv(t)
	p := e.workerPayload(1, 1, `grep -q "issue 1" "$WAVE_PROMPT" && echo work > work.txt && git add work.txt && git commit -qm work && echo "[backlog-result] done"`)
	p.Env = map[string]string{"WAVE_PROMPT": p.PromptPath}
	e.start(p)
	obs := e.await(e.b, p.RunDir, "the worker finished", 90*time.Second, done)
	if obs.Record == nil || obs.Record.TerminalDisposition != runtime.Completed {
		t.Fatalf("worker run: %+v", obs.Record)
	}
	branch := e.originHas("refs/heads/wave/i1")
	if branch == "" || !gittest.HasPath(e.origin, branch, "work.txt") {
		t.Fatalf("origin's wave/i1 (%q) lacks the worker's commit", branch)
	}
	g := obs.Record.Git
	if g == nil || g.Pushed != branch || g.Head != branch || g.Ahead != 1 || g.Dirty != 0 {
		t.Fatalf("the local record's git facts %+v; want pushed = head = %s, 1 ahead, clean", g, branch)
	}
	final, _ := gittest.File(e.origin, "refs/wave/runs/i1-a1", FinalFile)
	var fr finalReport
	if err := json.Unmarshal([]byte(final), &fr); err != nil || fr.Record.TerminalDisposition != runtime.Completed || fr.Record.Git == nil || fr.Record.Git.Pushed != branch {
		t.Fatalf("result ref's final record: %v %+v", err, fr.Record)
	}
	if log, _ := gittest.File(e.origin, "refs/wave/runs/i1-a1", "agent.log"); !strings.Contains(log, "[backlog-result] done") {
		t.Fatalf("result ref's agent.log lacks the worker's marker:\n%s", log)
	}
	// The pod's clone and log are its own (the stand-in node puts its
	// volumes under the pod's directory), not on the launcher's disk.
	if _, err := os.Stat(p.Checkout.Dir); !os.IsNotExist(err) {
		t.Errorf("the worker's clone is on the launcher's disk at %s (%v)", p.Checkout.Dir, err)
	}
	if b := readOrEmpty(filepath.Join(p.RunDir, "agent.log")); len(b) > 0 {
		t.Errorf("the pod wrote the launcher's agent.log:\n%s", b)
	}
	job, err := e.c.AdminClient().BatchV1().Jobs(e.ns).Get(context.Background(), p.Kubernetes.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.HostPath != nil || v.PersistentVolumeClaim != nil {
			t.Errorf("a worker's pod mounts a shared volume %q", v.Name)
		}
	}
	// The password is in the credentials Secret only.
	spec, _ := json.Marshal(job)
	for what, b := range map[string][]byte{"job": spec, "launch.json": readOrEmpty(filepath.Join(p.RunDir, "launch.json")),
		"runtime.json": readOrEmpty(filepath.Join(p.RunDir, "runtime.json")), "node output": []byte(e.node.Output(obs.Record.Kubernetes.Pod))} {
		if strings.Contains(string(b), gitPass) {
			t.Errorf("the git password is in the %s", what)
		}
	}
}

func readOrEmpty(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

func TestUncommittedWorkOfADeletedPodIsOnOriginAndTheNextRunContinuesFromIt(t *testing.T) {
	t.Parallel()
	e := newCheckoutEnv(t)
	first := e.workerPayload(2, 1, `echo committed > done.txt && git add done.txt && git commit -qm done && echo half > half.txt && exec sleep 120`)
	e.start(first)
	obs := e.await(e.b, first.RunDir, "the worker's uncommitted file reported", 90*time.Second, func(o runtime.Observation) bool {
		return o.Record != nil && o.Record.Git != nil && o.Record.Git.Dirty == 1 && o.Record.Git.Ahead == 1
	})
	// A generous grace: the runner's pushes at exit must not race a
	// loaded test machine's KILL.
	grace := int64(60)
	if err := e.c.AdminClient().CoreV1().Pods(e.ns).Delete(context.Background(), obs.Record.Kubernetes.Pod, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	e.await(e.b, first.RunDir, "the deleted pod's run ended", 90*time.Second, done)
	snap := e.originHas(first.Checkout.SnapshotRef)
	if snap == "" || !gittest.HasPath(e.origin, snap, "half.txt") || !gittest.HasPath(e.origin, snap, "done.txt") {
		t.Fatalf("origin's %s (%q) lacks the deleted pod's work", first.Checkout.SnapshotRef, snap)
	}

	next := e.workerPayload(2, 2, `test "$(cat half.txt)" = half && test "$(git status --porcelain)" = "?? half.txt" && test "$(git log -1 --format=%s)" = done && echo continued`)
	next.Checkout.RestoreRef = first.Checkout.SnapshotRef
	e.start(next)
	obs = e.await(e.b, next.RunDir, "the relaunched worker finished", 90*time.Second, done)
	if obs.Record == nil || obs.Record.TerminalDisposition != runtime.Completed {
		log, _ := gittest.File(e.origin, next.Checkout.ResultRef, "agent.log")
		t.Fatalf("the relaunch did not find the work where it was left: %+v\n%s", obs.Record, log)
	}
	if b := e.originHas("refs/heads/wave/i2"); b == "" || !gittest.HasPath(e.origin, b, "done.txt") {
		t.Fatalf("origin's wave/i2 (%q) lacks the committed work", b)
	}
}

func TestAPayloadWithoutCheckoutOnALaneWithoutWorkspaceIsRefusedNamingTheKey(t *testing.T) {
	t.Parallel()
	e := newCheckoutEnv(t)
	p := e.payload("w0-A1-a1", "true")
	err := e.b.Start(context.Background(), []*runtime.Payload{p})
	if err == nil || !strings.Contains(err.Error(), "runtime.kubernetes.workspace") {
		t.Fatalf("Start: %v; want a refusal naming runtime.kubernetes.workspace", err)
	}
}

func TestAWorkersUncommittedWorkReachesOriginWhileItRunsSoALostNodeLosesOnlyTheLastMinutes(t *testing.T) {
	t.Parallel()
	e := newCheckoutEnv(t)
	p := e.workerPayload(4, 1, `echo draft > draft.txt && exec sleep 120`)
	p.Checkout.SnapshotEveryMs = 1000
	e.start(p)
	eventually(t, "a periodic snapshot with the draft on origin", func() bool {
		snap := e.originHas(p.Checkout.SnapshotRef)
		return snap != "" && gittest.HasPath(e.origin, snap, "draft.txt")
	})
	obs := e.await(e.b, p.RunDir, "the snapshot in the record", 30*time.Second, func(o runtime.Observation) bool {
		return o.Record != nil && o.Record.Git != nil && o.Record.Git.Snapshot != "" && o.Record.Git.SnapshotAt != nil
	})
	// The node goes: no grace, no exit snapshot. The work is on origin.
	zero := int64(0)
	if err := e.c.AdminClient().CoreV1().Pods(e.ns).Delete(context.Background(), obs.Record.Kubernetes.Pod, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if snap := e.originHas(p.Checkout.SnapshotRef); !gittest.HasPath(e.origin, snap, "draft.txt") {
		t.Fatalf("origin's snapshot %s lacks the draft", snap)
	}
}
