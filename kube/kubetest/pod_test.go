package kubetest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

func TestSecretVolumeAndEnvReachTheProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	j := shJob("vol", `set -e
cat "$2/launch.json" > "$OUT/launch.json"
echo "$SECRET_TOKEN|$S_token" > "$OUT/token"
echo "$1|$EXPANDED|$WAVE_POD_NAME" > "$OUT/vars"
stat -c %a "$PICKED/sub/e.txt" > "$OUT/mode"
echo x > "$WAVE_POD_DIR/scratch"
echo "$WAVE_POD_DIR" > "$OUT/poddir"`)
	out := shareDir(t, j)
	spec := &j.Spec.Template.Spec
	spec.Volumes = append(spec.Volumes,
		corev1.Volume{Name: "wave-in", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol"}}},
		corev1.Volume{Name: "picked", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "vol", Items: []corev1.KeyToPath{{Key: "env", Path: "sub/e.txt", Mode: ptr(int32(0o400))}},
		}}},
		corev1.Volume{Name: "wave-pod", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	)
	c := container(j)
	c.Args = []string{"sh", "$(GREETING)", "/wave/in"}
	c.VolumeMounts = append(c.VolumeMounts,
		corev1.VolumeMount{Name: "wave-in", MountPath: "/wave/in", ReadOnly: true},
		corev1.VolumeMount{Name: "picked", MountPath: "/picked"},
		corev1.VolumeMount{Name: "wave-pod", MountPath: "/wave/pod"},
	)
	c.Env = append(c.Env,
		corev1.EnvVar{Name: "GREETING", Value: "hello"},
		corev1.EnvVar{Name: "EXPANDED", Value: "$(GREETING) world"},
		corev1.EnvVar{Name: "PICKED", Value: "/picked"},
		corev1.EnvVar{Name: "WAVE_POD_DIR", Value: "/wave/pod"},
		corev1.EnvVar{Name: "WAVE_POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		corev1.EnvVar{Name: "SECRET_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "vol"}, Key: "token",
		}}},
	)
	c.EnvFrom = []corev1.EnvFromSource{{Prefix: "S_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "vol"}}}}
	e.createJob(j)

	// The Secret comes after the Job, as the backend makes it (it needs
	// the Job's uid to be owned by it): the pod waits like a kubelet's.
	pending := e.waitJobPod("vol", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil
	})
	waiting := pending.Status.ContainerStatuses[0].State.Waiting
	if pending.Status.Phase != corev1.PodPending || waiting.Reason != "ContainerCreating" || !strings.Contains(waiting.Message, `secrets "vol" not found`) {
		t.Errorf("before the Secret: phase %s, waiting %+v; want Pending, ContainerCreating naming the secret", pending.Status.Phase, waiting)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "vol"},
		Data:       map[string][]byte{"launch.json": []byte(`{"run":1}`), "env": []byte("A=1\n"), "token": []byte("s3cret")},
	}
	if _, err := e.c.AdminClient().CoreV1().Secrets(e.ns).Create(e.ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitJob("vol", kubetest.JobCondition(batchv1.JobComplete))

	pod := e.waitJobPod("vol", kubetest.PodTerminated)
	want := map[string]string{
		"launch.json": `{"run":1}`,
		"token":       "s3cret|s3cret\n",
		"vars":        "hello|hello world|" + pod.Name + "\n",
		"mode":        "400\n",
	}
	for name, w := range want {
		if got, _ := os.ReadFile(filepath.Join(out, name)); string(got) != w {
			t.Errorf("%s = %q, want %q", name, got, w)
		}
	}
	podDir, _ := os.ReadFile(filepath.Join(out, "poddir"))
	local := strings.TrimSpace(string(podDir))
	if local == "/wave/pod" || !strings.HasSuffix(local, "/wave/pod") {
		t.Errorf("WAVE_POD_DIR = %q, want a per-pod directory mapped from /wave/pod", local)
	}
	if _, err := os.Stat(filepath.Join(local, "scratch")); err != nil {
		t.Errorf("emptyDir: %v", err)
	}
}

func TestPodIdentityIsItsServiceAccount(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBETEST_LEAK", "the node's own environment")
	e := newEnv(t, kubetest.NodeOptions{Binaries: map[string]string{"/usr/local/bin/whoami": self}})
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "runner"}}
	if _, err := e.c.AdminClient().CoreV1().ServiceAccounts(e.ns).Create(e.ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	j := shJob("who", "")
	j.Spec.Template.Spec.ServiceAccountName = "runner"
	c := container(j)
	c.Command = []string{"/usr/local/bin/whoami"}
	c.Env = append(c.Env, corev1.EnvVar{Name: "KUBETEST_HELPER", Value: "whoami"})
	e.createJob(j)
	pod := e.waitJobPod("who", kubetest.PodTerminated)
	term := kubetest.Terminated(pod)
	if term.ExitCode != 0 {
		t.Fatalf("helper exit %d; output:\n%s", term.ExitCode, e.node.Output(pod.Name))
	}
	var r identityReport
	if err := json.Unmarshal([]byte(term.Message), &r); err != nil {
		t.Fatalf("termination message %q: %v", term.Message, err)
	}
	user := "system:serviceaccount:" + e.ns + ":runner"
	if r.User != user || r.Namespace != e.ns {
		t.Errorf("identity = %q in namespace %q, want %q in %q", r.User, r.Namespace, user, e.ns)
	}
	if !strings.Contains(r.SecretsError, "forbidden") || !strings.Contains(r.SecretsError, user) {
		t.Errorf("listing secrets: %q, want forbidden for %s", r.SecretsError, user)
	}
	if got := strings.Join(r.Env, " "); got != "HOME KUBECONFIG KUBETEST_HELPER PATH TERMINATION_PATH" {
		t.Errorf("process environment = %s, want only the container's env plus HOME, KUBECONFIG, PATH", got)
	}
}

// barePod is a pod bound to the node directly, running script.
func (e *env) barePod(name, script string, grace int64) (*corev1.Pod, string) {
	e.t.Helper()
	j := shJob(name, script)
	out := shareDir(e.t, j)
	spec := j.Spec.Template.Spec
	spec.NodeName = e.node.Name()
	spec.TerminationGracePeriodSeconds = &grace
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	created, err := e.c.AdminClient().CoreV1().Pods(e.ns).Create(e.ctx, pod, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created, out
}

// deleteAndWatch deletes the pod and waits until it is gone, returning
// the last terminated state the node reported for it (watched from
// before the deletion, so a quick exit is not missed).
func (e *env) deleteAndWatch(name string) *corev1.ContainerStateTerminated {
	e.t.Helper()
	pods := e.c.AdminClient().CoreV1().Pods(e.ns)
	before, err := pods.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	w, err := pods.Watch(e.ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion: before.ResourceVersion,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	defer w.Stop()
	if err := pods.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	var last *corev1.ContainerStateTerminated
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			e.t.Fatalf("watch of pod %s: %+v", name, ev.Object)
		}
		if t := kubetest.Terminated(p); t != nil {
			last = t
		}
		if ev.Type == watch.Deleted {
			return last
		}
	}
	e.t.Fatalf("pod %s still there when the test's deadline came; output: %s", name, e.node.Output(name))
	return nil
}

func TestDeletionSendsTermThenThePodGoes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	_, out := e.barePod("polite", `trap 'echo term > "$OUT/term"; exit 0' TERM
echo ready > "$OUT/ready"
sleep 1000 & wait`, 30)
	e.waitFile(filepath.Join(out, "ready"))
	term := e.deleteAndWatch("polite")
	if got, _ := os.ReadFile(filepath.Join(out, "term")); string(got) != "term\n" {
		t.Errorf("the TERM trap wrote %q, want \"term\\n\"", got)
	}
	if term == nil || term.ExitCode != 0 {
		t.Errorf("terminated state before removal = %+v, want exit 0", term)
	}
}

func TestGracePeriodEscalatesToKill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	_, out := e.barePod("stubborn", `trap '' TERM
echo ready > "$OUT/ready"
exec sleep 1000`, 1)
	e.waitFile(filepath.Join(out, "ready"))
	if term := e.deleteAndWatch("stubborn"); term == nil || term.ExitCode != 137 {
		t.Errorf("terminated state = %+v, want exit 137 (KILL after the grace period)", term)
	}
}

func TestTTYContainerRunsOnATerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	j := shJob("tty", `[ -t 0 ] && echo on-a-tty; read line; echo "got $line"`)
	container(j).TTY, container(j).Stdin = true, true
	e.createJob(j)
	pod := e.waitJobPod("tty", kubetest.PodPhase(corev1.PodRunning))
	if err := e.node.Write(pod.Name, []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	e.waitJob("tty", kubetest.JobCondition(batchv1.JobComplete))
	if out := e.node.Output(pod.Name); !strings.Contains(out, "on-a-tty") || !strings.Contains(out, "got hello") {
		t.Errorf("terminal output = %q, want on-a-tty and got hello", out)
	}
}

func TestCommandResolution(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{Binaries: map[string]string{"/usr/local/bin/wave-orchestrator": "/bin/sh"}})
	mapped := shJob("mapped", "")
	container(mapped).Command = []string{"/usr/local/bin/wave-orchestrator", "-c", "exit 7"}
	e.createJob(mapped)
	missing := shJob("missing", "")
	container(missing).Command = []string{"/usr/local/bin/not-installed"}
	e.createJob(missing)

	if term := kubetest.Terminated(e.waitJobPod("mapped", kubetest.PodTerminated)); term.ExitCode != 7 {
		t.Errorf("mapped binary: exit %d, want 7", term.ExitCode)
	}
	pod := e.waitJobPod("missing", kubetest.PodTerminated)
	term := kubetest.Terminated(pod)
	if term.ExitCode != 128 || term.Reason != "StartError" || !strings.Contains(term.Message, "not-installed") || pod.Status.Phase != corev1.PodFailed {
		t.Errorf("missing binary: %s %+v, want Failed, exit 128, StartError naming it", pod.Status.Phase, term)
	}
}
