package kube

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

func TestABacklogWorkersPodHasItsOwnDisksAndBringsItsPromptInItsSecret(t *testing.T) {
	t.Parallel()
	runDir := t.TempDir()
	for name, body := range map[string]string{"prompt.md": "work on #3", "claude-settings.json": "{}", "launch.json": "{}", "agent.log": "old"} {
		if err := os.WriteFile(filepath.Join(runDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deadline := t0.Add(time.Hour)
	p := &runtime.Payload{RunID: "i3-a1", Lane: "main", AgentID: "i3", Attempt: 1, Argv: []string{"claude"},
		Cwd: "/work/i3", RunDir: runDir, HeartbeatIntervalMs: 2000, DeadlineAt: &deadline,
		Checkout: &runtime.Checkout{Origin: "https://git.example.com/r.git", Base: "wave/b1", Branch: "wave/b1-i3", Dir: "/work/i3",
			SnapshotRef: "refs/wave/salvage/3/a1", ResultRef: "refs/wave/runs/i3-a1"}}
	o := Options{Namespace: "agents", Image: "img:1", ServiceAccount: "wave", RepoRoot: "/repo", Lane: "main",
		GitCredentialsSecret: "wave-git"}
	if err := checkCheckout(p); err != nil {
		t.Fatal(err)
	}
	name := ObjectName(o.instance(), p.RunID)
	job := jobFor(p, o, name, t0)
	spec := job.Spec.Template.Spec
	for _, v := range spec.Volumes {
		if v.HostPath != nil || v.PersistentVolumeClaim != nil {
			t.Errorf("volume %q is a shared disk", v.Name)
		}
	}
	mounted := map[string]string{}
	for _, m := range spec.Containers[0].VolumeMounts {
		mounted[m.MountPath] = m.Name
	}
	if mounted[runDir] != "wave-run" || mounted["/work/i3"] != "wave-checkout" || mounted[gitCredentialsDir] != "git-credentials" {
		t.Fatalf("mounts %v: want emptyDirs at the run dir and the clone, the credentials Secret", mounted)
	}
	env := map[string]string{}
	for _, e := range spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env[envGitCredentials] != gitCredentialsDir || env[envInDir] != inDir {
		t.Errorf("env %v", env)
	}
	sec, err := secretFor(p, o, "", job)
	if err != nil {
		t.Fatal(err)
	}
	if string(sec.Data[runFilePrefix+"prompt.md"]) != "work on #3" || sec.Data[runFilePrefix+"claude-settings.json"] == nil {
		t.Errorf("the Secret lacks the run's files: %v", keys(sec.Data))
	}
	if sec.Data[runFilePrefix+"launch.json"] != nil || sec.Data[runFilePrefix+"agent.log"] != nil {
		t.Errorf("the Secret carries the runner's own files: %v", keys(sec.Data))
	}
}

func TestAWorkersCheckoutMustBeWhereItRuns(t *testing.T) {
	t.Parallel()
	p := &runtime.Payload{RunID: "i3-a1", Cwd: "/elsewhere", Checkout: &runtime.Checkout{Origin: "https://x/r.git",
		Base: "main", Branch: "wave/i3", Dir: "/work/i3", ResultRef: "refs/wave/runs/i3-a1"}}
	if err := checkCheckout(p); err == nil {
		t.Fatal("a checkout away from the agent's cwd was accepted")
	}
	p.Cwd, p.Checkout.Origin = "/work/i3", "--upload-pack=evil"
	if err := checkCheckout(p); err == nil {
		t.Fatal("an origin that is an option was accepted")
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
