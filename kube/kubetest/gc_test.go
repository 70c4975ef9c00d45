package kubetest_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

// ownedObjects makes the Secret, ConfigMap and Lease a run owns, named
// after its Job and owned by it.
func (e *env) ownedObjects(job *batchv1.Job) {
	e.t.Helper()
	owner := []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}}
	meta := metav1.ObjectMeta{Name: job.Name, OwnerReferences: owner}
	cs := e.c.AdminClient()
	if _, err := cs.CoreV1().Secrets(e.ns).Create(e.ctx, &corev1.Secret{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(e.ns).Create(e.ctx, &corev1.ConfigMap{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := cs.CoordinationV1().Leases(e.ns).Create(e.ctx, &coordinationv1.Lease{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// ownedLeft reports which of the run's Secret, ConfigMap and Lease exist
// and whether any still names an owner.
func (e *env) ownedLeft(name string) (left []string, owned bool) {
	e.t.Helper()
	cs := e.c.AdminClient()
	check := func(kind string, o metav1.Object, err error) {
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			e.t.Fatal(err)
		default:
			left = append(left, kind)
			owned = owned || len(o.GetOwnerReferences()) > 0
		}
	}
	s, err := cs.CoreV1().Secrets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	check("secret", s, err)
	cm, err := cs.CoreV1().ConfigMaps(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	check("configmap", cm, err)
	l, err := cs.CoordinationV1().Leases(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	check("lease", l, err)
	return left, owned
}

func TestJobDeletionCollectsWhatItOwns(t *testing.T) {
	t.Parallel()
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		t.Run(string(policy), func(t *testing.T) {
			e := newEnv(t, kubetest.NodeOptions{})
			job := e.createJob(shJob("run", `exec sleep 1000`))
			e.ownedObjects(job)
			pod := e.waitJobPod("run", kubetest.PodPhase(corev1.PodRunning))

			err := e.c.AdminClient().BatchV1().Jobs(e.ns).Delete(e.ctx, "run", metav1.DeleteOptions{PropagationPolicy: &policy})
			if err != nil {
				t.Fatal(err)
			}
			e.waitJob("run", kubetest.JobGone)
			// The pod goes last: once it is gone, the rest was collected.
			e.waitPod(pod.Name, kubetest.PodGone)
			if left, _ := e.ownedLeft("run"); len(left) > 0 {
				t.Errorf("left after the Job's deletion: %v", left)
			}
		})
	}
}

func TestJobDeletedWithoutPolicyOrphansItsPod(t *testing.T) {
	t.Parallel()
	// batch/v1's default is to orphan, as on a real cluster: a backend
	// that forgets propagationPolicy leaves its pods running.
	e := newEnv(t, kubetest.NodeOptions{})
	job := e.createJob(shJob("run", `exec sleep 1000`))
	e.ownedObjects(job)
	pod := e.waitJobPod("run", kubetest.PodPhase(corev1.PodRunning))
	if err := e.c.AdminClient().BatchV1().Jobs(e.ns).Delete(e.ctx, "run", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitJob("run", kubetest.JobGone)
	got, err := e.c.AdminClient().CoreV1().Pods(e.ns).Get(e.ctx, pod.Name, metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.PodRunning || len(got.OwnerReferences) != 0 {
		t.Fatalf("orphaned pod: %v, %+v; want Running with no owner", err, got)
	}
	if left, owned := e.ownedLeft("run"); len(left) != 3 || owned {
		t.Errorf("orphans left %v (owned %v), want all three, unowned", left, owned)
	}
}

func TestObjectOwnedByADeletedJobIsCollected(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	j := shJob("gone", `exit 0`)
	j.Spec.Suspend = ptr(true) // no pod needed
	job := e.createJob(j)
	bg := metav1.DeletePropagationBackground
	if err := e.c.AdminClient().BatchV1().Jobs(e.ns).Delete(e.ctx, "gone", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	e.waitJob("gone", kubetest.JobGone)

	secrets := e.c.AdminClient().CoreV1().Secrets(e.ns)
	w, err := secrets.Watch(e.ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "gone").String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.ownedObjects(job) // a late write by a launcher that did not see the deletion
	for ev := range w.ResultChan() {
		if ev.Type == watch.Deleted {
			return
		}
	}
	t.Fatal("the Secret owned by a deleted Job was never collected")
}
