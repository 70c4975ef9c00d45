package kube

import (
	"encoding/json"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func launching() runtime.Record {
	return runtime.Record{RunID: "w0-A1-a1", AgentID: "A1", Attempt: 1, SessionBackend: runtime.BackendKubernetes,
		TerminalDisposition: runtime.Launching, StartedAt: t0, LastHeartbeatAt: t0, HeartbeatIntervalMs: 1000,
		LogPath: "/repo/run/agent.log", StatusPath: "/repo/run/status.json", PromptHash: "h",
		Kubernetes: &runtime.KubeRef{Namespace: "agents", Job: "wave-x"}}
}

func leaseWith(rec *runtime.Record, renew time.Time) *coordv1.Lease {
	l := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "wave-x", Annotations: map[string]string{}},
		Spec: coordv1.LeaseSpec{LeaseDurationSeconds: new(int32(3))}}
	if rec != nil {
		b, _ := json.Marshal(rec)
		l.Annotations[AnnotationRecord] = string(b)
		l.Spec.RenewTime = &metav1.MicroTime{Time: renew}
	}
	return l
}

func podWith(state corev1.ContainerState) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "wave-x-abcde"}, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: Container, State: state}}}}
}

func runnerRecord(disp string, code *int) *runtime.Record {
	r := launching()
	r.TerminalDisposition, r.RunnerPid, r.ExecutorPid, r.ExitCode = disp, 7, 8, code
	r.LastHeartbeatAt = t0.Add(5 * time.Second)
	r.LogPath, r.StatusPath = "/wave/pod/agent.log", "/wave/pod/status.json" // the pod's own
	return &r
}

func message(t *testing.T, disp string, code int) string {
	t.Helper()
	r := runnerRecord(disp, &code)
	at := t0.Add(9 * time.Second)
	r.FinishedAt, r.ExitReason = &at, "exit code 3"
	b, err := terminationMessage(*r, runtime.Status{Code: code, PromptHash: "h", Attempt: 1, CompletedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMerge(t *testing.T) {
	t.Parallel()
	three := 3
	for _, tc := range []struct {
		name       string
		f          runFacts
		disp       string
		code       *int
		wantStatus bool
	}{
		{name: "nothing seen yet", f: runFacts{}, disp: runtime.Launching},
		{name: "runner renewed its lease", f: runFacts{Lease: leaseWith(runnerRecord(runtime.Running, nil), t0)}, disp: runtime.Running},
		{name: "termination message is the final record", disp: runtime.Failed, code: &three, wantStatus: true,
			f: runFacts{Pod: podWith(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Message: ""}})}},
		{name: "no message: the exit code from the pod status", disp: runtime.Failed, code: &three, wantStatus: true,
			f: runFacts{Pod: podWith(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}})}},
		{name: "killed without a message stays open (a lost verdict)", disp: runtime.Running,
			f: runFacts{Lease: leaseWith(runnerRecord(runtime.Running, nil), t0),
				Pod: podWith(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}})}},
		{name: "OOM killed stays open", disp: runtime.Launching,
			f: runFacts{Pod: podWith(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "OOMKilled"}})}},
		{name: "pod gone after the runner's final lease record", disp: runtime.Failed, code: &three, wantStatus: true,
			f: runFacts{PodGone: true, Pod: podWith(corev1.ContainerState{}), Lease: leaseWith(runnerRecord(runtime.Failed, &three), t0)}},
		{name: "job deadline exceeded", disp: runtime.Terminated, f: runFacts{JobGone: false, PodGone: true, Pod: podWith(corev1.ContainerState{}),
			Job: &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
				Reason: batchv1.JobReasonDeadlineExceeded, LastTransitionTime: metav1.Time{Time: t0.Add(time.Hour)}}}}}}},
		{name: "stopped and deleted before reporting", disp: runtime.Terminated, f: runFacts{Stopped: true, PodGone: true, Pod: podWith(corev1.ContainerState{})}},
		{name: "deleted by someone else: a lost verdict, no record", disp: runtime.Running,
			f: runFacts{PodGone: true, Pod: podWith(corev1.ContainerState{}), Lease: leaseWith(runnerRecord(runtime.Running, nil), t0)}},
		// The runner's report in the run directory outlives the Job:
		// nothing of the run left in the cluster, the outcome is known.
		{name: "final report in the run directory, Job gone", disp: runtime.Failed, code: &three, wantStatus: true,
			f: runFacts{JobGone: true, Final: &finalReport{Record: *runnerRecord(runtime.Failed, &three), Status: runtime.Status{Code: 3}}}},
		// A verdict the launcher reached becomes the record once the pod
		// is gone, not "stopped on request".
		{name: "judged and deleted", disp: runtime.Failed, f: runFacts{Stopped: true, PodGone: true, Pod: podWith(corev1.ContainerState{}),
			Judged: &runtime.Verdict{State: runtime.StateFailed, Done: true, Reason: "pod could not start: ErrImagePull: x"}}},
		{name: "judged lost, killed", disp: runtime.Failed, code: new(137), f: runFacts{Pod: podWith(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}),
			Judged: &runtime.Verdict{State: runtime.StateLost, Done: true, ExitCode: new(137), Reason: "runner lost"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "termination message is the final record" {
				tc.f.Pod.Status.ContainerStatuses[0].State.Terminated.Message = message(t, runtime.Failed, 3)
			}
			rec, st := merge(launching(), tc.f)
			if rec.TerminalDisposition != tc.disp {
				t.Fatalf("disposition %q, want %q (reason %q)", rec.TerminalDisposition, tc.disp, rec.ExitReason)
			}
			if j := tc.f.Judged; j != nil && (rec.ExitReason != j.Reason || rec.Lost != (j.State == runtime.StateLost)) {
				t.Errorf("judged record: reason %q lost %v, want the verdict's %q", rec.ExitReason, rec.Lost, j.Reason)
			}
			if (tc.code == nil) != (rec.ExitCode == nil) || tc.code != nil && *rec.ExitCode != *tc.code {
				t.Errorf("exit code %v, want %v", rec.ExitCode, tc.code)
			}
			if (st != nil) != tc.wantStatus {
				t.Errorf("status %+v, want one: %v", st, tc.wantStatus)
			}
			if st != nil && tc.code != nil && st.Code != *tc.code {
				t.Errorf("status code %d, want %d", st.Code, *tc.code)
			}
			// The local record keeps the launcher's paths, never the pod's.
			if rec.LogPath != "/repo/run/agent.log" || rec.StatusPath != "/repo/run/status.json" || rec.SessionBackend != runtime.BackendKubernetes {
				t.Errorf("record paths/backend = %q %q %q", rec.LogPath, rec.StatusPath, rec.SessionBackend)
			}
			if tc.f.Pod != nil && (rec.Kubernetes == nil || rec.Kubernetes.Pod != "wave-x-abcde" || rec.Kubernetes.Node != "n1") {
				t.Errorf("pod not recorded: %+v", rec.Kubernetes)
			}
		})
	}
}

func TestMergeNeverChangesAFinalRecord(t *testing.T) {
	t.Parallel()
	cur := launching()
	cur.TerminalDisposition = runtime.Completed
	zero := 0
	cur.ExitCode = &zero
	got, st := merge(cur, runFacts{Pod: podWith(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}})})
	if got.TerminalDisposition != runtime.Completed || st != nil {
		t.Fatalf("final record rewritten: %+v", got)
	}
}

func TestFacts(t *testing.T) {
	t.Parallel()
	running := launching()
	running.TerminalDisposition = runtime.Running
	renewed := leaseWith(runnerRecord(runtime.Running, nil), t0)
	for _, tc := range []struct {
		name      string
		f         runFacts
		now       time.Time
		alive     bool
		detail    string
		startFail bool
		code      *int
	}{
		{name: "renewed within the duration", f: runFacts{Lease: renewed, RenewSeenAt: t0, Pod: podWith(corev1.ContainerState{})}, now: t0.Add(2 * time.Second), alive: true},
		// Liveness is timed by when we saw the renewal, not by the
		// runner's clock: a node clock far behind does not make it lost.
		{name: "skewed node clock", f: runFacts{Lease: leaseWith(runnerRecord(runtime.Running, nil), t0.Add(-time.Hour)), RenewSeenAt: t0}, now: t0.Add(time.Second), alive: true},
		{name: "lease expired", f: runFacts{Lease: renewed, RenewSeenAt: t0, Pod: podWith(corev1.ContainerState{})}, now: t0.Add(4 * time.Second), detail: "lease not renewed for 4s (duration 3s); pod wave-x-abcde Running on node \"n1\""},
		{name: "killed container", f: runFacts{Lease: renewed, RenewSeenAt: t0, Pod: podWith(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}})},
			now: t0.Add(time.Second), detail: "container ended with exit code 137 (Error) and left no record", code: new(137)},
		{name: "runner never renews", f: runFacts{Lease: leaseWith(nil, t0), Pod: podWith(corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: t0.Add(-10 * time.Second)}}})},
			now: t0, startFail: true},
		{name: "bad image", f: runFacts{Pod: podWith(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}})}, now: t0, startFail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := facts(&running, tc.f, tc.now)
			if k.Alive != tc.alive {
				t.Fatalf("alive %v, want %v (%s)", k.Alive, tc.alive, k.Detail)
			}
			if tc.detail != "" && k.Detail != tc.detail {
				t.Errorf("detail %q, want %q", k.Detail, tc.detail)
			}
			if (k.StartFailed != "") != tc.startFail {
				t.Errorf("start failed %q, want %v", k.StartFailed, tc.startFail)
			}
			if tc.code != nil && (k.ExitCode == nil || *k.ExitCode != *tc.code || k.Signal != "SIGKILL") {
				t.Errorf("exit %v signal %q", k.ExitCode, k.Signal)
			}
		})
	}
}

func TestTerminationMessageFitsTheKubeletLimit(t *testing.T) {
	t.Parallel()
	r := runnerRecord(runtime.Failed, new(1))
	long := make([]byte, 10000)
	for i := range long {
		long[i] = 'x'
	}
	r.ExitReason = string(long)
	b, err := terminationMessage(*r, runtime.Status{Code: 1})
	if err != nil || len(b) > maxTerminationMessage {
		t.Fatalf("message of %d bytes, err %v", len(b), err)
	}
	if fr, ok := parseTermination(string(b), r.RunID); !ok || fr.Status.Code != 1 {
		t.Fatalf("message does not parse back: %v", ok)
	}
	if _, ok := parseTermination(string(b), "another-run"); ok {
		t.Error("a message of another run was taken")
	}
}
