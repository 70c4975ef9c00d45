package kubetest_test

import (
	"context"
	"os"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

// env is a test's slice of the shared cluster: a namespace and a node.
type env struct {
	t    *testing.T
	c    *kubetest.Cluster
	ns   string
	node *kubetest.Node
	ctx  context.Context
}

func newEnv(t *testing.T, opts kubetest.NodeOptions) *env {
	t.Helper()
	c := cluster.Get(t)
	ns := c.Namespace(t, t.Name())
	opts.Namespace = ns
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return &env{t: t, c: c, ns: ns, node: c.StartNode(t, opts), ctx: ctx}
}

// shJob is a Job whose one container runs script with /bin/sh, its
// termination message path in $TERMINATION_PATH.
func shJob(name, script string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr(int32(0)),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name:    "main",
					Image:   "example.com/agent:1",
					Command: []string{"/bin/sh", "-c", script},
					Env:     []corev1.EnvVar{{Name: "TERMINATION_PATH", Value: corev1.TerminationMessagePathDefault}},
				}},
			}},
		},
	}
}

// container returns the Job's container for a test to adjust.
func container(j *batchv1.Job) *corev1.Container { return &j.Spec.Template.Spec.Containers[0] }

// shareDir mounts a fresh local directory at its own path (a hostPath
// identity mount), where the process leaves what the test checks, and
// names it $OUT.
func shareDir(t *testing.T, j *batchv1.Job) string {
	dir := t.TempDir()
	spec := &j.Spec.Template.Spec
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "out", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: dir},
	}})
	c := container(j)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "out", MountPath: dir})
	c.Env = append(c.Env, corev1.EnvVar{Name: "OUT", Value: dir})
	return dir
}

func (e *env) createJob(j *batchv1.Job) *batchv1.Job {
	e.t.Helper()
	created, err := e.c.AdminClient().BatchV1().Jobs(e.ns).Create(e.ctx, j, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create job %s: %v", j.Name, err)
	}
	return created
}

func (e *env) waitJob(name string, cond func(*batchv1.Job) bool) *batchv1.Job {
	e.t.Helper()
	j, err := e.c.WaitJob(e.ctx, e.ns, name, cond)
	if err != nil {
		e.t.Fatalf("%v; last seen: %+v", err, jobStatus(j))
	}
	return j
}

func (e *env) waitJobPod(job string, cond func(*corev1.Pod) bool) *corev1.Pod {
	e.t.Helper()
	p, err := e.c.WaitJobPod(e.ctx, e.ns, job, cond)
	if err != nil {
		e.t.Fatalf("%v; last seen: %+v", err, podStatus(p))
	}
	return p
}

func (e *env) waitPod(name string, cond func(*corev1.Pod) bool) *corev1.Pod {
	e.t.Helper()
	p, err := e.c.WaitPod(e.ctx, e.ns, name, cond)
	if err != nil {
		e.t.Fatalf("%v; last seen: %+v\noutput: %s", err, podStatus(p), e.node.Output(name))
	}
	return p
}

// waitFile waits for the process to create path (a ticker and a
// deadline: a file has no watch in the API).
func (e *env) waitFile(path string) string {
	e.t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(path); err == nil {
			return string(data)
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("%s never appeared; node pods: %v", path, e.node.Pods())
		case <-tick.C:
		}
	}
}

func jobStatus(j *batchv1.Job) any {
	if j == nil {
		return nil
	}
	return j.Status
}

func podStatus(p *corev1.Pod) any {
	if p == nil {
		return nil
	}
	return p.Status
}

func jobCondition(j *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == typ {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
