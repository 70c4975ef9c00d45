package runtime

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestClassifyKube(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rec := func(disp string) *Record {
		return &Record{RunID: "r", SessionBackend: BackendKubernetes, TerminalDisposition: disp,
			StartedAt: t0, LastHeartbeatAt: t0, HeartbeatIntervalMs: 1000, RunnerPid: 7}
	}
	code := 137
	past := t0.Add(-time.Second)
	for _, tc := range []struct {
		name      string
		f         Facts
		state     State
		done      bool
		terminate bool
		reason    string
	}{
		{name: "files only, fresh", f: Facts{Now: t0.Add(time.Second), Record: rec(Running)}, state: StateRunning},
		// The launcher mirrors kubernetes runs: with it down, a stale
		// record says so and is never taken for a dead runner.
		{name: "files only, stale", f: Facts{Now: t0.Add(time.Minute), Record: rec(Running)}, state: StateRunning},
		{name: "files only, deadline", f: Facts{Now: t0, Record: rec(Running), Deadline: &past}, state: StateRunning, terminate: true},
		{name: "alive", f: Facts{Now: t0, Record: rec(Running), Kube: &KubeFacts{Alive: true}}, state: StateRunning},
		{name: "lease expired", f: Facts{Now: t0, Record: rec(Running), Kube: &KubeFacts{Detail: "lease not renewed"}},
			state: StateLost, done: true, terminate: true, reason: "lease not renewed"},
		// An expired-looking Lease the cluster cannot confirm is no
		// verdict: a launcher cut off from its cluster must not retry
		// every run.
		{name: "cluster unreachable", f: Facts{Now: t0, Record: rec(Running), Kube: &KubeFacts{Detail: "lease not renewed", Unreachable: "connection refused"}},
			state: StateRunning},
		{name: "pod deleted", f: Facts{Now: t0, Record: rec(Running), Kube: &KubeFacts{Gone: true, Detail: "its pod was deleted"}},
			state: StateLost, done: true, reason: "pod was deleted"},
		{name: "killed", f: Facts{Now: t0, Record: rec(Running), Kube: &KubeFacts{ExitCode: &code, Signal: "SIGKILL", Detail: "container ended"}},
			state: StateLost, done: true, reason: "container ended"},
		{name: "launching, pulling", f: Facts{Now: t0.Add(time.Hour), Record: rec(Launching), LaunchGrace: time.Second, Kube: &KubeFacts{Waiting: "ContainerCreating"}}, state: StateLaunching},
		{name: "launching, bad image within grace", f: Facts{Now: t0, Record: rec(Launching), LaunchGrace: time.Minute, Kube: &KubeFacts{StartFailed: "ErrImagePull: x"}}, state: StateLaunching},
		{name: "launching, bad image", f: Facts{Now: t0.Add(2 * time.Minute), Record: rec(Launching), LaunchGrace: time.Minute, Kube: &KubeFacts{StartFailed: "ErrImagePull: x"}},
			state: StateFailed, done: true, terminate: true, reason: "ErrImagePull"},
		{name: "launching, job just created", f: Facts{Now: t0, Record: rec(Launching), LaunchGrace: time.Minute, Kube: &KubeFacts{Gone: true}}, state: StateLaunching},
		{name: "launching, job never came", f: Facts{Now: t0.Add(2 * time.Minute), Record: rec(Launching), LaunchGrace: time.Minute, Kube: &KubeFacts{Gone: true}},
			state: StateLost, done: true, reason: "gone before its runner reported"},
		// The backend writes a lost verdict into the record: read back,
		// it is still lost.
		{name: "record judged lost", f: Facts{Now: t0, Record: func() *Record {
			r := rec(Failed)
			r.Lost, r.ExitReason = true, "runner lost without a terminal record: lease not renewed"
			return r
		}()}, state: StateLost, done: true, reason: "lease not renewed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Classify(tc.f)
			if v.State != tc.state || v.Done != tc.done || v.Terminate != tc.terminate {
				t.Fatalf("verdict %+v, want %s done=%v terminate=%v", v, tc.state, tc.done, tc.terminate)
			}
			if !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("reason %q, want %q", v.Reason, tc.reason)
			}
			if tc.name == "files only, stale" && (len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "launcher")) {
				t.Errorf("warnings %q", v.Warnings)
			}
		})
	}
}

func TestKubeRecordNeverChecksLocalPids(t *testing.T) {
	t.Parallel()
	// The pod's runner pid may be any process of this machine: a
	// kubernetes record must not be called alive or dead from /proc.
	// This test's own process stands in for such a pid: alive, with
	// its real start time, so a /proc check would say alive.
	start, _, err := ProcStartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	f := Facts{Record: &Record{SessionBackend: BackendKubernetes, TerminalDisposition: Running, RunnerPid: os.Getpid(), RunnerStartTime: start}}
	if live(&f) || f.RunnerAlive {
		t.Fatal("kubernetes record checked against local /proc")
	}
}
