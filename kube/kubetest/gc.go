package kubetest

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

func everything() labels.Selector { return labels.Everything() }

// dependentKind is one kind the garbage collector looks after: the kinds
// a Job's run owns (its pod, and the Secrets, ConfigMaps and Leases made
// for it). Pods come last, so once a collected pod is gone (it takes a
// graceful termination) the other dependents' deletions are done.
type dependentKind struct {
	name   string
	list   func(ns string) ([]metav1.Object, error)
	delete func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error
	patch  func(ctx context.Context, ns, name string, data []byte) error
}

func (n *Node) dependentKinds() []dependentKind {
	cs := n.client
	return []dependentKind{
		{
			name: "secret",
			list: func(ns string) ([]metav1.Object, error) { return asObjects(n.secrets.Secrets(ns).List(everything())) },
			delete: func(ctx context.Context, ns, name string, o metav1.DeleteOptions) error {
				return cs.CoreV1().Secrets(ns).Delete(ctx, name, o)
			},
			patch: func(ctx context.Context, ns, name string, d []byte) error {
				_, err := cs.CoreV1().Secrets(ns).Patch(ctx, name, types.MergePatchType, d, metav1.PatchOptions{})
				return err
			},
		},
		{
			name: "configmap",
			list: func(ns string) ([]metav1.Object, error) {
				return asObjects(n.configMap.ConfigMaps(ns).List(everything()))
			},
			delete: func(ctx context.Context, ns, name string, o metav1.DeleteOptions) error {
				return cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, o)
			},
			patch: func(ctx context.Context, ns, name string, d []byte) error {
				_, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, d, metav1.PatchOptions{})
				return err
			},
		},
		{
			name: "lease",
			list: func(ns string) ([]metav1.Object, error) { return asObjects(n.leases.Leases(ns).List(everything())) },
			delete: func(ctx context.Context, ns, name string, o metav1.DeleteOptions) error {
				return cs.CoordinationV1().Leases(ns).Delete(ctx, name, o)
			},
			patch: func(ctx context.Context, ns, name string, d []byte) error {
				_, err := cs.CoordinationV1().Leases(ns).Patch(ctx, name, types.MergePatchType, d, metav1.PatchOptions{})
				return err
			},
		},
		{
			name: "pod",
			list: func(ns string) ([]metav1.Object, error) { return asObjects(n.pods.Pods(ns).List(everything())) },
			delete: func(ctx context.Context, ns, name string, o metav1.DeleteOptions) error {
				return cs.CoreV1().Pods(ns).Delete(ctx, name, o)
			},
			patch: func(ctx context.Context, ns, name string, d []byte) error {
				_, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, d, metav1.PatchOptions{})
				return err
			},
		},
	}
}

func asObjects[T metav1.Object](items []T, err error) ([]metav1.Object, error) {
	out := make([]metav1.Object, 0, len(items))
	for _, it := range items {
		out = append(out, it)
	}
	return out, err
}

// dependentEvent is every change to an object a Job may own: it wakes
// the owner's sync (its pod's status, a foreground deletion waiting for
// dependents), checks that the owner still exists (a dependent made
// after, or racing with, its Job's deletion is collected, as the real
// collector does), and wakes pods waiting for a Secret or ConfigMap.
func (n *Node) dependentEvent(o any, deleted bool) {
	obj, err := meta.Accessor(unwrap(o))
	if err != nil {
		return
	}
	ns := obj.GetNamespace()
	for _, ref := range obj.GetOwnerReferences() {
		if !isJobRef(ref) {
			continue
		}
		if _, isPod := unwrap(o).(*corev1.Pod); isPod && ref.Controller != nil && *ref.Controller {
			n.mu.Lock()
			n.seen[ref.UID] = true
			n.mu.Unlock()
		}
		n.queue.Add(item{kind: syncJob, ns: ns, name: ref.Name})
		if !deleted && !n.jobLive(ns, ref.Name, ref.UID) {
			n.queue.Add(item{kind: checkOwner, ns: ns, name: ref.Name, uid: ref.UID})
		}
	}
	switch unwrap(o).(type) {
	case *corev1.Secret, *corev1.ConfigMap:
		if !deleted {
			n.wakeWaiting(ns)
		}
	}
}

func isJobRef(ref metav1.OwnerReference) bool {
	return ref.Kind == "Job" && (ref.APIVersion == "batch/v1" || ref.APIVersion == "batch/v1beta1")
}

// jobLive reports whether the informer knows Job ns/name with uid.
func (n *Node) jobLive(ns, name string, uid types.UID) bool {
	j, err := n.jobs.Jobs(ns).Get(name)
	return err == nil && j.UID == uid
}

func (n *Node) wakeWaiting(ns string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, w := range n.workers {
		if w.ns == ns {
			w.poke()
		}
	}
}

func (n *Node) jobDeleted(o any) {
	job, ok := unwrap(o).(*batchv1.Job)
	if !ok {
		return
	}
	n.queue.Add(item{kind: collect, ns: job.Namespace, name: job.Name, uid: job.UID})
}

// checkOwner asks the API (the informer may lag behind a fresh Job)
// whether Job ns/name is still the owner uid, and collects its
// dependents when it is not.
func (n *Node) checkOwner(ctx context.Context, ns, name string, uid types.UID) error {
	j, err := n.client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	case j.UID == uid:
		return nil
	}
	return n.collect(ctx, ns, uid)
}

// collect deletes the objects owned by the gone owner uid; one that has
// other owners only loses its reference to uid.
func (n *Node) collect(ctx context.Context, ns string, uid types.UID) error {
	return n.eachDependent(ns, uid, func(k dependentKind, o metav1.Object) error {
		if len(o.GetOwnerReferences()) > 1 {
			return n.dropOwner(ctx, k, o, uid)
		}
		return n.deleteDependent(ctx, k, o)
	})
}

// finalize carries out a Job deletion that waits for the collector:
// foreground (delete the dependents, then let the Job go once no
// blocking dependent is left) or orphan (drop the dependents' references
// to the Job, as batch/v1 does by default when a delete names no
// propagation policy).
func (n *Node) finalize(ctx context.Context, job *batchv1.Job) error {
	switch {
	case hasFinalizer(job, metav1.FinalizerOrphanDependents):
		err := n.eachDependent(job.Namespace, job.UID, func(k dependentKind, o metav1.Object) error {
			return n.dropOwner(ctx, k, o, job.UID)
		})
		if err != nil {
			return err
		}
		return n.removeFinalizer(ctx, job, metav1.FinalizerOrphanDependents)
	case hasFinalizer(job, metav1.FinalizerDeleteDependents):
		blocked := false
		err := n.eachDependent(job.Namespace, job.UID, func(k dependentKind, o metav1.Object) error {
			for _, ref := range o.GetOwnerReferences() {
				if ref.UID == job.UID && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
					blocked = true
				}
			}
			if o.GetDeletionTimestamp() != nil {
				return nil
			}
			return n.deleteDependent(ctx, k, o)
		})
		if err != nil || blocked {
			return err // the dependents' delete events bring us back
		}
		return n.removeFinalizer(ctx, job, metav1.FinalizerDeleteDependents)
	}
	return nil
}

func (n *Node) eachDependent(ns string, uid types.UID, fn func(dependentKind, metav1.Object) error) error {
	for _, k := range n.dependentKinds() {
		objs, err := k.list(ns)
		if err != nil {
			return err
		}
		for _, o := range objs {
			for _, ref := range o.GetOwnerReferences() {
				if ref.UID == uid {
					if err := fn(k, o); err != nil {
						return err
					}
					break
				}
			}
		}
	}
	return nil
}

func (n *Node) deleteDependent(ctx context.Context, k dependentKind, o metav1.Object) error {
	uid := o.GetUID()
	err := k.delete(ctx, o.GetNamespace(), o.GetName(), metav1.DeleteOptions{
		PropagationPolicy: ptrTo(metav1.DeletePropagationBackground),
		Preconditions:     &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("collect %s %s/%s: %w", k.name, o.GetNamespace(), o.GetName(), err)
	}
	n.log.Info("collected", "kind", k.name, "object", o.GetNamespace()+"/"+o.GetName())
	return nil
}

// dropOwner removes the reference to uid from o, guarded by o's
// resourceVersion (a conflict is retried from the queue).
func (n *Node) dropOwner(ctx context.Context, k dependentKind, o metav1.Object, uid types.UID) error {
	refs := []metav1.OwnerReference{}
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID != uid {
			refs = append(refs, ref)
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": o.GetResourceVersion(),
		"ownerReferences": refs,
	}})
	if err != nil {
		return err
	}
	err = k.patch(ctx, o.GetNamespace(), o.GetName(), patch)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("orphan %s %s/%s: %w", k.name, o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

func hasFinalizer(o metav1.Object, f string) bool {
	for _, x := range o.GetFinalizers() {
		if x == f {
			return true
		}
	}
	return false
}

func (n *Node) removeFinalizer(ctx context.Context, job *batchv1.Job, f string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := n.client.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if fresh.UID != job.UID || !hasFinalizer(fresh, f) {
			return nil
		}
		var keep []string
		for _, x := range fresh.Finalizers {
			if x != f {
				keep = append(keep, x)
			}
		}
		fresh.Finalizers = keep
		_, err = n.client.BatchV1().Jobs(job.Namespace).Update(ctx, fresh, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("job %s/%s: remove finalizer %s: %w", job.Namespace, job.Name, f, err)
	}
	return nil
}
