package kube

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// runFacts is what the cluster holds about one run, as last seen: a pod
// or Lease deleted since is kept as its last state, since a pod's final
// status often arrives just before it goes.
type runFacts struct {
	Job   *batchv1.Job
	Pod   *corev1.Pod
	Lease *coordv1.Lease
	// PodGone and JobGone: seen deleted, or absent from a synced cache.
	PodGone, JobGone bool
	// RenewSeenAt is when this process saw the Lease's renewTime change
	// (or first saw the Lease): liveness is timed by our clock.
	RenewSeenAt time.Time
	// Stopped: a stop was requested for the run.
	Stopped bool
	// Judged is the launcher's verdict on a run that ended without the
	// runner's record (see tracked.judged).
	Judged *runtime.Verdict
	// Final is the runner's final report from the run directory, when
	// it wrote one: the outcome that outlives the Job.
	Final *finalReport
	// LeaseMissing: a run still launching past its grace has a Job but
	// no Lease and no running container, so its Secret, made before the
	// Lease, is missing too (see Backend.leaseMissing).
	LeaseMissing bool
}

// agentStatus is the agent container's status, if the pod has one.
func agentStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	if pod == nil {
		return nil
	}
	for i := range pod.Status.ContainerStatuses {
		if cs := &pod.Status.ContainerStatuses[i]; cs.Name == Container {
			return cs
		}
	}
	return nil
}

// agentRunning is the agent container's running state, if it runs.
func agentRunning(pod *corev1.Pod) *corev1.ContainerStateRunning {
	if cs := agentStatus(pod); cs != nil {
		return cs.State.Running
	}
	return nil
}

// leaseRecord is the runner's record from the Lease annotation.
func leaseRecord(l *coordv1.Lease, runID string) (*runtime.Record, bool) {
	if l == nil || l.Annotations[AnnotationRecord] == "" {
		return nil, false
	}
	var r runtime.Record
	if json.Unmarshal([]byte(l.Annotations[AnnotationRecord]), &r) != nil || r.RunID != runID {
		return nil, false
	}
	return &r, true
}

// merge is the run's local record given the cluster's facts, and the
// status to write with it when the run ended. A final record is never
// changed. The paths stay the launcher's: the runner's own are the pod's.
func merge(cur runtime.Record, f runFacts) (runtime.Record, *runtime.Status) {
	if isFinal(cur.TerminalDisposition) {
		return cur, nil
	}
	rec := cur
	local := func(r runtime.Record) runtime.Record {
		r.LogPath, r.StatusPath, r.SessionBackend = cur.LogPath, cur.StatusPath, runtime.BackendKubernetes
		r.SocketName, r.SessionName = "", ""
		ref := runtime.KubeRef{}
		if cur.Kubernetes != nil {
			ref = *cur.Kubernetes
		}
		if f.Pod != nil {
			ref.Pod, ref.Node = f.Pod.Name, f.Pod.Spec.NodeName
		}
		r.Kubernetes = &ref
		return r
	}
	if fr := f.Final; fr != nil {
		st := fr.Status
		return local(fr.Record), &st
	}
	if lr, ok := leaseRecord(f.Lease, cur.RunID); ok && !isFinal(lr.TerminalDisposition) {
		rec = *lr
	}
	rec = local(rec)
	cs := agentStatus(f.Pod)
	if cs != nil && cs.State.Terminated != nil {
		t := cs.State.Terminated
		if fr, ok := parseTermination(t.Message, cur.RunID); ok {
			st := fr.Status
			return local(fr.Record), &st
		}
		if t.ExitCode <= 128 && t.Reason != "OOMKilled" {
			// The runner exited on its own, with the agent's code, but
			// could not leave its record.
			rec, st := exited(rec, int(t.ExitCode), t.FinishedAt.Time, "the pod's status")
			if m := strings.TrimSpace(t.Message); m != "" {
				rec.ExitReason += "; it said: " + m
			}
			return rec, st
		}
		if f.Judged != nil {
			return judgedRecord(rec, *f.Judged, t.FinishedAt.Time), nil
		}
		return rec, nil // killed: a verdict (lost), not a record
	}
	if !f.PodGone && !(f.Pod == nil && f.JobGone) {
		return rec, nil
	}
	// The pod is gone without a final status of its own.
	if lr, ok := leaseRecord(f.Lease, cur.RunID); ok && isFinal(lr.TerminalDisposition) {
		r := local(*lr)
		code := 0
		if r.ExitCode != nil {
			code = *r.ExitCode
		}
		st := runtime.Status{Code: code, Signal: r.Signal, PromptHash: r.PromptHash, Attempt: r.Attempt, CompletedAt: finishedAt(r)}
		return r, &st
	}
	if c := jobFailed(f.Job); c != nil && c.Reason == batchv1.JobReasonDeadlineExceeded {
		at := c.LastTransitionTime.Time
		rec.TerminalDisposition, rec.ExitReason, rec.FinishedAt = runtime.Terminated, "job deadline exceeded: "+c.Message, &at
		return rec, nil
	}
	if f.Judged != nil {
		return judgedRecord(rec, *f.Judged, time.Now()), nil
	}
	if f.Stopped {
		now := time.Now()
		rec.TerminalDisposition, rec.ExitReason, rec.FinishedAt = runtime.Terminated, "stopped on request; the pod was deleted before it reported", &now
		return rec, nil
	}
	return rec, nil
}

// judgedRecord is the final record of a run the launcher judged without
// the runner's word: failed (lost, when it was), with the verdict's
// reason, so runtime.json and every report built from it say why.
func judgedRecord(rec runtime.Record, v runtime.Verdict, at time.Time) runtime.Record {
	rec.TerminalDisposition, rec.Lost = runtime.Failed, v.State == runtime.StateLost
	rec.ExitCode, rec.Signal, rec.ExitReason, rec.FinishedAt = v.ExitCode, v.Signal, v.Reason, &at
	return rec
}

func exited(rec runtime.Record, code int, at time.Time, from string) (runtime.Record, *runtime.Status) {
	rec.TerminalDisposition = runtime.Completed
	if code != 0 {
		rec.TerminalDisposition = runtime.Failed
	}
	rec.ExitCode = &code
	rec.ExitReason = fmt.Sprintf("runner left no record; exit code %d from %s", code, from)
	rec.FinishedAt = &at
	return rec, &runtime.Status{Code: code, PromptHash: rec.PromptHash, Attempt: rec.Attempt, CompletedAt: at}
}

func finishedAt(r runtime.Record) time.Time {
	if r.FinishedAt != nil {
		return *r.FinishedAt
	}
	return r.LastHeartbeatAt
}

func jobFailed(j *batchv1.Job) *batchv1.JobCondition {
	if j == nil {
		return nil
	}
	for i := range j.Status.Conditions {
		c := &j.Status.Conditions[i]
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func isFinal(d string) bool {
	return d == runtime.Completed || d == runtime.Failed || d == runtime.Terminated
}

// startFailures are container waiting reasons that no wait cures.
var startFailures = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// facts is the liveness verdict's input for a run whose record is not
// final (see runtime.KubeFacts).
func facts(rec *runtime.Record, f runFacts, now time.Time) *runtime.KubeFacts {
	k := &runtime.KubeFacts{Gone: f.JobGone && (f.Pod == nil || f.PodGone)}
	cs := agentStatus(f.Pod)
	if cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
		w := cs.State.Waiting
		k.Waiting = w.Reason
		if w.Message != "" {
			k.Waiting += ": " + w.Message
		}
		if startFailures[w.Reason] {
			k.StartFailed = k.Waiting
		}
	}
	dur := leaseDuration(f.Lease)
	renewed := f.Lease != nil && f.Lease.Spec.RenewTime != nil
	terminated := cs != nil && cs.State.Terminated != nil
	k.Alive = renewed && !terminated && !f.PodGone && now.Before(f.RenewSeenAt.Add(dur))
	if k.Alive {
		return k
	}
	switch {
	case terminated:
		t := cs.State.Terminated
		code := int(t.ExitCode)
		k.ExitCode = &code
		if code > 128 {
			k.Signal = signalName(code - 128)
		}
		k.Detail = fmt.Sprintf("container ended with exit code %d (%s) and left no record", code, t.Reason)
	case k.Gone:
		k.Detail = fmt.Sprintf("its Job and pod are gone and it left no final record in its run directory, so how it ended is unknown "+
			"(a finished Job is deleted %ds after it ends, with its pod and Lease)", finishedTTL)
	case f.PodGone:
		k.Detail = "its pod was deleted"
	case renewed:
		k.Detail = fmt.Sprintf("lease not renewed for %s (duration %s)", now.Sub(f.RenewSeenAt).Round(100*time.Millisecond), dur)
		if f.Pod != nil {
			k.Detail += fmt.Sprintf("; pod %s %s on node %q", f.Pod.Name, f.Pod.Status.Phase, f.Pod.Spec.NodeName)
		}
	default:
		k.Detail = "the runner never renewed its lease"
	}
	// Timed from the container's start or the Lease's first sighting,
	// whichever is later: a runner waits for a Lease an adopting
	// launcher makes late (Backend.leaseMissing).
	if cs != nil && cs.State.Running != nil && f.Lease != nil && !renewed &&
		now.Sub(laterOf(cs.State.Running.StartedAt.Time, f.RenewSeenAt)) > dur {
		k.StartFailed = "the runner never renewed its Lease: may its ServiceAccount patch leases? (wave-orchestrator doctor checks)"
	}
	if f.LeaseMissing {
		k.StartFailed = "the run's Secret and Lease are missing: the launcher that started it died before making them; no agent ran"
	}
	if rec.TerminalDisposition == runtime.Launching && k.StartFailed == "" && !k.Gone && !terminated {
		k.Detail = "" // still starting
	}
	return k
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func leaseDuration(l *coordv1.Lease) time.Duration {
	if l == nil || l.Spec.LeaseDurationSeconds == nil {
		return 6 * time.Second
	}
	return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
}

func signalName(n int) string {
	names := map[int]string{1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 15: "SIGTERM"}
	if s, ok := names[n]; ok {
		return s
	}
	return fmt.Sprintf("signal %d", n)
}
