package runs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/kube"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// unreachableKubeconfig is a kubeconfig whose cluster nothing listens
// on: a client can be made from it, and an Open that got as far as the
// network would fail there, not on the lane's configuration.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: team}}]
current-context: x
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func kubeLane(t *testing.T, edit func(*config.Kubernetes)) *config.Lane {
	k := config.Kubernetes{Kubeconfig: unreachableKubeconfig(t), Image: "example/agent:1",
		Workspace: config.KubeWorkspace{HostPath: "/srv/repo"}}
	if edit != nil {
		edit(&k)
	}
	return &config.Lane{Name: "side", RepoRoot: t.TempDir(), Runtime: config.Runtime{Backend: config.BackendKubernetes, Kubernetes: k}}
}

// TestOpenChoosesTheLanesBackend: a tmux lane's runs are sessions
// running this binary; a kubernetes lane whose configuration cannot run
// a pod fails before anything reaches a cluster, naming the lane and the
// key to fix.
func TestOpenChoosesTheLanesBackend(t *testing.T) {
	t.Setenv("RUNS_TEST_SET", "v")
	os.Unsetenv("RUNS_TEST_UNSET")
	cases := []struct {
		name     string
		lane     *config.Lane
		opts     []Option
		wantErr  []string // substrings of the error; none: Open succeeds
		wantKube bool
		wantBin  string
	}{
		{name: "tmux lane", lane: &config.Lane{Name: "main", RepoRoot: t.TempDir()}, wantBin: "/opt/self"},
		{name: "kubernetes lane without an image", lane: kubeLane(t, func(k *config.Kubernetes) { k.Image = "" }),
			wantErr: []string{"lane side", "runtime.kubernetes.image"}},
		{name: "kubernetes lane passing an unset variable", lane: kubeLane(t, func(k *config.Kubernetes) { k.PassEnv = []string{"RUNS_TEST_SET", "RUNS_TEST_UNSET"} }),
			wantErr: []string{"lane side", "runtime.kubernetes.passEnv", "RUNS_TEST_UNSET is not set"}},
		{name: "kubernetes lane with a bad kubeconfig", lane: kubeLane(t, func(k *config.Kubernetes) { k.Kubeconfig = filepath.Join(t.TempDir(), "none") }),
			wantErr: []string{"lane side", "kubernetes client config"}},
		{name: "kubernetes lane held on tmux", lane: kubeLane(t, func(k *config.Kubernetes) { k.Image = "" }),
			opts: []Option{On(config.BackendTmux)}, wantBin: "/opt/self"},
		{name: "an unknown backend", lane: &config.Lane{Name: "main"}, opts: []Option{On("vm")},
			wantErr: []string{"lane main", `runtime.backend "vm"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			r, err := Open(ctx, c.lane, lanes.New(c.lane.RepoRoot, "", "", c.lane.Name), "/opt/self", nil, c.opts...)
			if len(c.wantErr) > 0 {
				if err == nil {
					r.Close()
					t.Fatalf("Open: no error, want one naming %q", c.wantErr)
				}
				t.Logf("Open: %v", err)
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Open: %v; want it to name %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Kubernetes() != c.wantKube || r.AgentBinary() != c.wantBin {
				t.Errorf("Kubernetes() = %v, AgentBinary() = %q; want %v, %q", r.Kubernetes(), r.AgentBinary(), c.wantKube, c.wantBin)
			}
		})
	}
}

// TestAgentsNameTheBinaryTheyCanRun: prompts and agent commands name
// this binary on tmux and the image's in a pod.
func TestAgentsNameTheBinaryTheyCanRun(t *testing.T) {
	tmux := &config.Lane{Name: "main"}
	pod := kubeLane(t, nil)
	podWithBinary := kubeLane(t, func(k *config.Kubernetes) { k.Binary = "/bin/wo" })
	for _, c := range []struct {
		lane *config.Lane
		want string
	}{{tmux, "/opt/self"}, {pod, kube.DefaultBinary}, {podWithBinary, "/bin/wo"}} {
		if got := AgentBinary(c.lane, "/opt/self"); got != c.want {
			t.Errorf("AgentBinary(%s backend %q) = %q, want %q", c.lane.Name, c.lane.Runtime.Backend, got, c.want)
		}
	}
}

// TestKubeOptionsFallBackToTheContextsNamespace: no namespace configured
// means the kubeconfig context's, then "default"; passEnv values are
// read from this environment.
func TestKubeOptionsFallBackToTheContextsNamespace(t *testing.T) {
	t.Setenv("RUNS_TEST_KEY", "secret")
	lane := kubeLane(t, func(k *config.Kubernetes) { k.PassEnv = []string{"RUNS_TEST_KEY"} })
	c, err := kube.NewClient(lane.Runtime.Kubernetes.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	o, err := KubeOptions(lane, c)
	if err != nil || o.Namespace != "team" || o.PassEnv["RUNS_TEST_KEY"] != "secret" || o.Lane != "side" {
		t.Fatalf("KubeOptions = %+v, %v", o, err)
	}
	if o, _ := KubeOptions(lane, nil); o.Namespace != "default" {
		t.Errorf("namespace without a client = %q, want default", o.Namespace)
	}
}

// TestAKubernetesLanesRunsArePods: on a reachable cluster a kubernetes
// lane opens on the kubernetes backend; agents name the image's binary,
// and Discard has nothing to clear (a run's objects are its own).
func TestAKubernetesLanesRunsArePods(t *testing.T) {
	c := cluster.Get(t)
	ns := c.Namespace(t, "runs")
	lane := kubeLane(t, func(k *config.Kubernetes) { k.Kubeconfig, k.Namespace = c.AdminKubeconfig(), ns })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r, err := Open(ctx, lane, lanes.New(lane.RepoRoot, "", "", lane.Name), "/opt/self", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Kubernetes() || r.AgentBinary() != kube.DefaultBinary {
		t.Errorf("Kubernetes() = %v, AgentBinary() = %q; want true, %q", r.Kubernetes(), r.AgentBinary(), kube.DefaultBinary)
	}
	if err := r.Discard(ctx, &runtime.Payload{RunID: "w1-A1-a1", SessionName: "w1-A1"}); err != nil {
		t.Errorf("Discard on kubernetes: %v", err)
	}
}
