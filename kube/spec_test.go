package kube

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

func TestJobSpec(t *testing.T) {
	t.Parallel()
	deadline := t0.Add(30 * time.Minute)
	p := &runtime.Payload{RunID: "w0-A1-a1", Lane: "main", AgentID: "A 1", WaveNumber: 0, Attempt: 1,
		Argv: []string{"/home/me/bin/wave-orchestrator", "local-agent", "--prompt", "secret prompt text"},
		Env:  map[string]string{"API_TOKEN": "s3cret", "PLAIN": "v"}, Cwd: "/repo", RunDir: "/repo/.wave/run",
		HeartbeatIntervalMs: 2000, TerminateGraceMs: 5000, DeadlineAt: &deadline, SocketName: "sock", SessionName: "w0-A1"}
	o := Options{Namespace: "agents", Image: "img:1", ServiceAccount: "wave", RepoRoot: "/repo", Lane: "main",
		WorkspaceClaim: "repo", PassEnv: map[string]string{"ANTHROPIC_API_KEY": "k", "PLAIN": "other"}}
	name := ObjectName(o.instance(), p.RunID)
	job := jobFor(p, o, name, t0)
	if *job.Spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit %d: retries are the launcher's", *job.Spec.BackoffLimit)
	}
	if ads := *job.Spec.ActiveDeadlineSeconds; ads < 30*60 || ads > 30*60+120 {
		t.Errorf("activeDeadlineSeconds %d, want the run's 30 min plus a margin", ads)
	}
	c := job.Spec.Template.Spec.Containers[0]
	all := strings.Join(append(c.Command, c.Args...), " ")
	if strings.Contains(all, "secret prompt") || strings.Contains(all, "s3cret") {
		t.Errorf("payload on the command line: %q", all)
	}
	if !c.TTY || !c.Stdin || c.WorkingDir != "/repo" || job.Spec.Template.Spec.ServiceAccountName != "wave" {
		t.Errorf("container %+v", c)
	}
	if got := job.Labels[LabelAgent]; got != "A_1" || job.Annotations[AnnotationAgentID] != "A 1" {
		t.Errorf("agent label %q annotation %q", got, job.Annotations[AnnotationAgentID])
	}
	mounted := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounted[m.Name] = m.MountPath
	}
	if mounted["workspace"] != "/repo" || mounted["wave-in"] != inDir {
		t.Errorf("mounts %v: the repository must be at the launcher's path", mounted)
	}

	job.UID = "uid-1"
	sec, err := secretFor(p, o, "/home/me/bin/wave-orchestrator", job)
	if err != nil {
		t.Fatal(err)
	}
	if len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != "uid-1" || sec.OwnerReferences[0].Kind != "Job" {
		t.Errorf("secret owners %+v: deleting the job must delete it", sec.OwnerReferences)
	}
	var pp runtime.Payload
	if err := json.Unmarshal(sec.Data[payloadKey], &pp); err != nil {
		t.Fatal(err)
	}
	if pp.Argv[0] != DefaultBinary {
		t.Errorf("argv[0] %q: the launcher's path does not exist in the image", pp.Argv[0])
	}
	if pp.Env["API_TOKEN"] != "s3cret" || pp.Env["ANTHROPIC_API_KEY"] != "k" || pp.Env["PLAIN"] != "v" {
		t.Errorf("env %v: real secret values and passEnv (never over the executor's own)", pp.Env)
	}
	if pp.Env["TERM"] != "dumb" {
		t.Errorf("TERM %q for our own binary as agent: it would wait for a terminal answer", pp.Env["TERM"])
	}
	if pp.SocketName != "" || pp.SessionName != "" || pp.RuntimePath != "" || pp.Kubernetes == nil || pp.Kubernetes.Name != name {
		t.Errorf("pod payload %+v", pp)
	}
	if pp.Kubernetes.LeaseDurationSeconds != 7 {
		t.Errorf("lease %ds, want a 2 s heartbeat plus a renewal's 5 s timeout", pp.Kubernetes.LeaseDurationSeconds)
	}
	if p.Argv[0] != "/home/me/bin/wave-orchestrator" || p.Env["ANTHROPIC_API_KEY"] != "" {
		t.Error("building the pod payload changed the launcher's")
	}
	l := leaseFor(p, o, job)
	if *l.Spec.LeaseDurationSeconds != 7 || l.OwnerReferences[0].UID != "uid-1" {
		t.Errorf("lease %+v", l.Spec)
	}
}

// TestLeaseIsNeverShorterThanARenewalMayTake: a Lease outlasts a
// heartbeat plus one renewal's whole timeout, however short the
// heartbeat, and still three heartbeats.
func TestLeaseIsNeverShorterThanARenewalMayTake(t *testing.T) {
	t.Parallel()
	for _, ms := range []int{0, 50, 200, 1000, 2000, 10000} {
		got := time.Duration(leaseSeconds(&runtime.Payload{HeartbeatIntervalMs: ms})) * time.Second
		every := time.Duration(ms) * time.Millisecond
		if ms == 0 {
			every = 2 * time.Second
		}
		if got < every+runtime.ReportTimeout || got < 3*every {
			t.Errorf("heartbeat %s: lease %s, want at least %s and %s", every, got, every+runtime.ReportTimeout, 3*every)
		}
	}
}
