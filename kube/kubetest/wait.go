package kubetest

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// WaitPod watches pod ns/name until cond holds and returns the pod it
// held for. cond sees nil while the pod does not exist (or once it is
// deleted), so PodGone can wait for a deletion to finish.
func (c *Cluster) WaitPod(ctx context.Context, ns, name string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	pod, err := waitFor1(ctx, c.podsLW(ns, sel, ""), &corev1.Pod{}, cond)
	if err != nil {
		return pod, fmt.Errorf("kubetest: pod %s/%s: %w", ns, name, err)
	}
	return pod, nil
}

// WaitJobPod waits for a pod of Job ns/job for which cond holds (cond
// never sees nil here) and returns it.
func (c *Cluster) WaitJobPod(ctx context.Context, ns, job string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelJobName: job}).String()
	pod, err := waitFor1(ctx, c.podsLW(ns, "", sel), &corev1.Pod{}, func(p *corev1.Pod) bool { return p != nil && cond(p) })
	if err != nil {
		return pod, fmt.Errorf("kubetest: pod of job %s/%s: %w", ns, job, err)
	}
	return pod, nil
}

// WaitJob watches Job ns/name until cond holds (nil: absent) and returns
// the Job it held for.
func (c *Cluster) WaitJob(ctx context.Context, ns, name string, cond func(*batchv1.Job) bool) (*batchv1.Job, error) {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	jobs := c.client.BatchV1().Jobs(ns)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return jobs.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return jobs.Watch(ctx, o)
		},
	}
	job, err := waitFor1(ctx, lw, &batchv1.Job{}, cond)
	if err != nil {
		return job, fmt.Errorf("kubetest: job %s/%s: %w", ns, name, err)
	}
	return job, nil
}

func (c *Cluster) podsLW(ns, fieldSel, labelSel string) cache.ListerWatcher {
	pods := c.client.CoreV1().Pods(ns)
	set := func(o *metav1.ListOptions) { o.FieldSelector, o.LabelSelector = fieldSel, labelSel }
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			set(&o)
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			set(&o)
			return pods.Watch(ctx, o)
		},
	}
}

// waitFor1 runs an informer-backed watch until cond holds for an object
// (or for nil: none, when the selection is empty or an object is
// deleted). It returns the last object seen when ctx ends first.
func waitFor1[T runtime.Object](ctx context.Context, lw cache.ListerWatcher, proto T, cond func(T) bool) (T, error) {
	var last, zero T
	check := func(store cache.Store) (bool, error) {
		if len(store.List()) == 0 {
			return cond(zero), nil
		}
		return false, nil
	}
	ev, err := watchtools.UntilWithSync(ctx, lw, proto, check, func(ev watch.Event) (bool, error) {
		obj, _ := ev.Object.(T)
		if ev.Type == watch.Deleted {
			return cond(zero), nil
		}
		last = obj
		return cond(obj), nil
	})
	if err != nil {
		return last, err
	}
	if ev == nil || ev.Type == watch.Deleted {
		return zero, nil
	}
	obj, _ := ev.Object.(T)
	return obj, nil
}

// PodPhase holds once the pod is in phase.
func PodPhase(phase corev1.PodPhase) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { return p != nil && p.Status.Phase == phase }
}

// PodGone holds once the pod no longer exists.
func PodGone(p *corev1.Pod) bool { return p == nil }

// PodTerminated holds once the pod's first container has terminated.
func PodTerminated(p *corev1.Pod) bool { return Terminated(p) != nil }

// Terminated is the pod's first container's terminated state, or nil.
func Terminated(p *corev1.Pod) *corev1.ContainerStateTerminated {
	if p == nil || len(p.Status.ContainerStatuses) == 0 {
		return nil
	}
	return p.Status.ContainerStatuses[0].State.Terminated
}

// JobCondition holds once the Job has condition typ with status True.
func JobCondition(typ batchv1.JobConditionType) func(*batchv1.Job) bool {
	return func(j *batchv1.Job) bool { return j != nil && findJobCondition(&j.Status, typ) != nil }
}

// JobGone holds once the Job no longer exists.
func JobGone(j *batchv1.Job) bool { return j == nil }
