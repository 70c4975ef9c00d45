package kubetest

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// The labels the Job controller puts on its pods (both spellings, as
// Kubernetes does since 1.27).
const (
	LabelJobName       = "batch.kubernetes.io/job-name"
	LabelControllerUID = "batch.kubernetes.io/controller-uid"
	legacyJobName      = "job-name"
	legacyControllerID = "controller-uid"
)

type itemKind int

const (
	syncJob    itemKind = iota // ns/name: the Job controller and foreground/orphan deletion
	collect                    // ns + uid: delete what a vanished owner owned
	checkOwner                 // ns/name + uid: collect uid unless Job name still has it
	bindPod                    // ns/name: schedule a pod the real Job controller made onto this node
)

// item is one unit of the node's controller queue.
type item struct {
	kind     itemKind
	ns, name string
	uid      types.UID
}

func (n *Node) processNext() bool {
	it, quit := n.queue.Get()
	if quit {
		return false
	}
	defer n.queue.Done(it)
	var err error
	if n.c.RealControllers() && it.kind != bindPod {
		// kube-controller-manager runs the Jobs and collects garbage.
		n.queue.Forget(it)
		return true
	}
	switch it.kind {
	case bindPod:
		err = n.bind(n.ctx, it.ns, it.name)
	case syncJob:
		err = n.syncJob(n.ctx, it.ns, it.name)
	case collect:
		err = n.collect(n.ctx, it.ns, it.uid)
	case checkOwner:
		err = n.checkOwner(n.ctx, it.ns, it.name, it.uid)
	}
	if err != nil && n.ctx.Err() == nil {
		n.log.Warn("controller retry", "kind", it.kind, "object", it.ns+"/"+it.name, "err", err)
		n.queue.AddRateLimited(it)
		return true
	}
	n.queue.Forget(it)
	return true
}

func (n *Node) enqueueJob(o any) {
	if j, ok := unwrap(o).(*batchv1.Job); ok {
		n.queue.Add(jobKey(j))
	}
}

// syncJob makes a Job's single pod and keeps the Job's status in step
// with it.
func (n *Node) syncJob(ctx context.Context, ns, name string) error {
	job, err := n.jobs.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if job.DeletionTimestamp != nil {
		return n.finalize(ctx, job)
	}
	if jobFinished(&job.Status) {
		return nil
	}
	pods, err := n.ownedPods(job)
	if err != nil {
		return err
	}
	n.mu.Lock()
	created, seen := n.created[job.UID], n.seen[job.UID]
	n.mu.Unlock()
	if len(pods) == 0 && !created && job.Status.Active == 0 && job.Status.Failed == 0 && job.Status.Succeeded == 0 {
		if job.Spec.Suspend != nil && *job.Spec.Suspend {
			return nil
		}
		pod, err := n.createPod(ctx, job)
		if err != nil {
			return err
		}
		pods = []*corev1.Pod{pod}
	} else if len(pods) == 0 && created && !seen {
		return nil // made but not yet in the informer; its event brings us back
	}
	lost := len(pods) == 0
	return n.updateJobStatus(ctx, job, pods, lost)
}

// ownedPods are the pods whose controller reference is job.
func (n *Node) ownedPods(job *batchv1.Job) ([]*corev1.Pod, error) {
	all, err := n.pods.Pods(job.Namespace).List(everything())
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, p := range all {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == job.UID {
			out = append(out, p)
		}
	}
	return out, nil
}

// createPod makes the Job's one pod, bound to this node.
func (n *Node) createPod(ctx context.Context, job *batchv1.Job) (*corev1.Pod, error) {
	tmpl := job.Spec.Template.DeepCopy()
	labels := map[string]string{}
	for k, v := range tmpl.Labels {
		labels[k] = v
	}
	labels[LabelJobName], labels[legacyJobName] = job.Name, job.Name
	labels[LabelControllerUID], labels[legacyControllerID] = string(job.UID), string(job.UID)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: job.Name + "-",
			Namespace:    job.Namespace,
			Labels:       labels,
			Annotations:  tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true),
			}},
		},
		Spec: tmpl.Spec,
	}
	pod.Spec.NodeName = n.name
	created, err := n.client.CoreV1().Pods(job.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod for job %s/%s: %w", job.Namespace, job.Name, err)
	}
	n.mu.Lock()
	n.created[job.UID] = true
	n.mu.Unlock()
	n.log.Info("job pod created", "job", job.Namespace+"/"+job.Name, "pod", created.Name)
	return created, nil
}

// updateJobStatus writes the status the pods imply, deletes the running
// pod when the Job has just failed (its deadline passed) and arranges to
// look again when the deadline comes.
func (n *Node) updateJobStatus(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod, lost bool) error {
	counts := countPods(pods)
	var next batchv1.JobStatus
	var kill bool
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := n.client.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if fresh.UID != job.UID {
			return nil
		}
		next, kill = nextJobStatus(fresh, counts, lost, time.Now())
		if apiequality.Semantic.DeepEqual(next, fresh.Status) {
			return nil
		}
		fresh.Status = next
		_, err = n.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("job %s/%s status: %w", job.Namespace, job.Name, err)
	}
	if kill {
		for _, p := range pods {
			if p.DeletionTimestamp == nil && !podFinished(p) {
				if err := n.deletePod(ctx, p, nil); err != nil {
					return err
				}
			}
		}
	}
	if left, ok := untilDeadline(job, next.StartTime, time.Now()); ok && !jobFinished(&next) && left > 0 {
		n.queue.AddAfter(jobKey(job), left)
	}
	return nil
}

func (n *Node) deletePod(ctx context.Context, p *corev1.Pod, grace *int64) error {
	err := n.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: grace,
		Preconditions:      &metav1.Preconditions{UID: &p.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// podCounts is what the Job controller needs to know about a Job's pods.
type podCounts struct{ active, ready, terminating, succeeded, failed int32 }

func countPods(pods []*corev1.Pod) podCounts {
	var c podCounts
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			c.succeeded++
		case p.Status.Phase == corev1.PodFailed:
			c.failed++
		case p.DeletionTimestamp != nil:
			c.terminating++
		default:
			c.active++
			if podReady(p) {
				c.ready++
			}
		}
	}
	return c
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podFinished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

const (
	msgBackoff  = "Job has reached the specified backoff limit"
	msgDeadline = "Job was active longer than specified deadline"
	msgComplete = "Reached expected number of succeeded pods"
)

// nextJobStatus is the status the Job controller writes for job given its
// pods (lost: the pod is gone without a final status), in the order the
// apiserver's validation demands: FailureTarget before Failed (and only
// once no pod is terminating), SuccessCriteriaMet with Complete. kill
// says the running pod must be deleted: the Job has failed under it.
// Every failure is final (backoffLimit 0) and one success completes it.
func nextJobStatus(job *batchv1.Job, pods podCounts, lost bool, now time.Time) (st batchv1.JobStatus, kill bool) {
	st = *job.Status.DeepCopy()
	if jobFinished(&st) {
		return st, false
	}
	t := metav1.NewTime(now)
	if st.StartTime == nil {
		st.StartTime = &t
	}
	target := findJobCondition(&st, batchv1.JobFailureTarget)
	if target == nil {
		left, hasDeadline := untilDeadline(job, st.StartTime, now)
		switch {
		case pods.failed > 0 || lost:
			target = setJobCondition(&st, batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, msgBackoff, t)
		case pods.succeeded > 0:
			st.Active, st.Ready, st.Terminating = 0, ptrTo(int32(0)), ptrTo(int32(0))
			st.Succeeded = max(st.Succeeded, pods.succeeded)
			setJobCondition(&st, batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, msgComplete, t)
			setJobCondition(&st, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, msgComplete, t)
			st.CompletionTime = &t
			return st, false
		case hasDeadline && left <= 0:
			target = setJobCondition(&st, batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, msgDeadline, t)
		}
	}
	if target == nil {
		st.Active, st.Ready, st.Terminating = pods.active, ptrTo(pods.ready), ptrTo(pods.terminating)
		return st, false
	}
	terminating := pods.active + pods.terminating
	st.Active, st.Ready, st.Terminating = 0, ptrTo(int32(0)), ptrTo(terminating)
	st.Succeeded = max(st.Succeeded, pods.succeeded)
	failed := pods.failed
	if lost {
		failed = max(failed, 1)
	}
	st.Failed = max(st.Failed, failed)
	if terminating == 0 {
		if st.Failed == 0 && st.Succeeded == 0 {
			st.Failed = 1 // the pod the deadline ended never got a final status
		}
		setJobCondition(&st, batchv1.JobFailed, target.Reason, target.Message, t)
	}
	return st, pods.active > 0
}

// untilDeadline is how long job has left before activeDeadlineSeconds
// (ok false when it has no deadline or has not started).
func untilDeadline(job *batchv1.Job, start *metav1.Time, now time.Time) (time.Duration, bool) {
	if job.Spec.ActiveDeadlineSeconds == nil || start == nil {
		return 0, false
	}
	deadline := start.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second)
	return deadline.Sub(now), true
}

func jobFinished(st *batchv1.JobStatus) bool {
	for _, c := range st.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func findJobCondition(st *batchv1.JobStatus, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ && st.Conditions[i].Status == corev1.ConditionTrue {
			return &st.Conditions[i]
		}
	}
	return nil
}

func setJobCondition(st *batchv1.JobStatus, typ batchv1.JobConditionType, reason, msg string, t metav1.Time) *batchv1.JobCondition {
	st.Conditions = append(st.Conditions, batchv1.JobCondition{
		Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: msg,
		LastProbeTime: t, LastTransitionTime: t,
	})
	return &st.Conditions[len(st.Conditions)-1]
}

// bind schedules pod ns/name onto this node, as the scheduler would (the
// cluster runs none): with a real Job controller, pods come unbound.
func (n *Node) bind(ctx context.Context, ns, name string) error {
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Target: corev1.ObjectReference{Kind: "Node", Name: n.name}}
	err := n.client.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or bound already
	}
	if err == nil {
		n.log.Info("pod bound", "pod", ns+"/"+name)
	}
	return err
}
