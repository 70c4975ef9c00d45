package kubetest

import (
	"os/exec"
	"regexp"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpandFollowsKubernetesRules(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"A": "x", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for in, want := range map[string]string{
		"$(A)":         "x",
		"pre$(A)post":  "prexpost",
		"$(EMPTY)|":    "|",
		"$(MISSING)":   "$(MISSING)",
		"$$(A)":        "$(A)",
		"$$":           "$",
		"$A $1":        "$A $1",
		"$(A":          "$(A",
		"trailing $":   "trailing $",
		"$(A)$(A)":     "xx",
		"no refs here": "no refs here",
	} {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPathMapRewritesMountedPathsOnly(t *testing.T) {
	t.Parallel()
	var m pathMap
	m.add("/wave/in", "/root/p/wave/in")
	m.add("/wave", "/root/p/wave")
	m.add("/repo", "/repo") // an identity mount
	m.add("/dev/termination-log", "/root/p/dev/termination-log")
	for in, want := range map[string]string{
		"/wave/in":             "/root/p/wave/in",
		"/wave/in/launch.json": "/root/p/wave/in/launch.json",
		"/wave/pod":            "/root/p/wave/pod",
		"/waveform":            "/waveform",
		"/repo/x":              "/repo/x",
		"/dev/termination-log": "/root/p/dev/termination-log",
		"relative/wave":        "relative/wave",
		"--flag=/wave":         "--flag=/wave",
	} {
		if got := m.rewrite(in); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExitCodeOfASignalledProcessIs128PlusSignal(t *testing.T) {
	t.Parallel()
	for script, want := range map[string]int32{"exit 3": 3, "kill -TERM $$": 143, "kill -KILL $$": 137} {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Run()
		if got := exitCode(cmd.ProcessState); got != want {
			t.Errorf("%s: exit code %d, want %d", script, got, want)
		}
	}
}

func TestNextJobStatusPassesTheApiserversOrderRules(t *testing.T) {
	t.Parallel()
	now := time.Now()
	started := metav1.NewTime(now.Add(-time.Minute))
	job := &batchv1.Job{Spec: batchv1.JobSpec{ActiveDeadlineSeconds: ptrTo(int64(30))}}
	job.Status.StartTime = &started

	// Past the deadline with the pod still running: FailureTarget only,
	// the pod must go, and Failed waits until it has.
	st, kill := nextJobStatus(job, podCounts{active: 1}, false, now)
	if !kill || findJobCondition(&st, batchv1.JobFailureTarget) == nil || jobFinished(&st) || *st.Terminating != 1 || st.Active != 0 {
		t.Fatalf("deadline with a running pod: %+v kill=%v", st, kill)
	}
	job.Status = st
	st, kill = nextJobStatus(job, podCounts{}, true, now)
	failed := findJobCondition(&st, batchv1.JobFailed)
	if kill || failed == nil || failed.Reason != batchv1.JobReasonDeadlineExceeded || st.Failed != 1 || *st.Terminating != 0 {
		t.Fatalf("deadline once the pod is gone: %+v kill=%v", st, kill)
	}
}

func TestNamespaceNameIsADNSLabel(t *testing.T) {
	t.Parallel()
	label := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	for _, prefix := range []string{"TestX/sub_case", "---", "", "A very long test name that goes on and on beyond any limit at all"} {
		if n := namespaceName(prefix); !label.MatchString(n) || len(n) > 63 {
			t.Errorf("namespaceName(%q) = %q, not a DNS label", prefix, n)
		}
	}
}
