package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

// kubeCluster is a real kube-apiserver with RBAC, started by the first
// test that needs it.
var kubeCluster kubetest.Shared

// writeKubeConfig makes the repo's lane main a kubernetes lane against
// the cluster of kubeconfig, in namespace ns.
func (r *testRepo) writeKubeConfig(kubeconfig, ns string) {
	r.t.Helper()
	kube := "runtime:\n  backend: kubernetes\n  kubernetes:\n" +
		"    kubeconfig: " + strconv.Quote(kubeconfig) + "\n" +
		"    namespace: " + ns + "\n" +
		"    image: registry.example.com/agents:1\n" +
		"    serviceAccount: wave\n" +
		"    workspace: {hostPath: " + strconv.Quote(r.root) + "}\n"
	r.write("wave.config.yaml", strings.Replace(testConfig, "runtime:\n", kube, 1))
}

func TestDoctorOnAKubernetesLaneNamesTheVerbTheUserLacks(t *testing.T) {
	kc := kubeCluster.Get(t)
	ns := kc.Namespace(t, "doctor-e2e")
	r := newRepo(t)
	r.writeKubeConfig(kc.UserKubeconfig("alice"), ns)
	// claude is not on this PATH: on a kubernetes lane it runs in the
	// image, so doctor does not ask for it here.
	r.writeWave(0, append([]agentSpec{implAgent("A1", "id: claude")}, closureAgents()...)...)
	path := "PATH=" + pathOf(t, []string{"git", "tmux"}, nil)
	res := r.runWith(ctxFor(t), []string{path}, "doctor")
	if res.code != 1 {
		t.Fatalf("doctor: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	out := lines(res.stdout)
	want := map[string]string{
		"cluster":   "ok    kubernetes cluster: " + kc.URL() + ` (kubeconfig context "kubetest") answers, Kubernetes `,
		"create":    `error kubernetes permission: user "alice" cannot create jobs.batch in namespace ` + ns + ` (needed to start runs); bind user "alice" to the launcher's Role in docs/kubernetes/rbac.yaml`,
		"attach":    `error kubernetes permission: user "alice" cannot create pods/attach in namespace ` + ns,
		"namespace": "skip  kubernetes namespace: namespace " + ns + " cannot be checked",
		"runner":    "skip  kubernetes runner: service account " + ns + "/wave needs patch leases.coordination.k8s.io in namespace " + ns,
		"image":     "ok    kubernetes image: registry.example.com/agents:1",
		"executors": "ok    executors: claude run in the image registry.example.com/agents:1",
	}
	for what, prefix := range want {
		found := false
		for _, l := range out {
			found = found || strings.HasPrefix(l, prefix)
		}
		if !found {
			t.Errorf("doctor printed no %s line starting %q:\n%s", what, prefix, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "executor claude") {
		t.Errorf("doctor looked for claude on this machine for a kubernetes lane:\n%s", res.stdout)
	}
}

func TestLaunchOnAKubernetesLaneWithoutRBACFailsBeforeAnyJob(t *testing.T) {
	kc := kubeCluster.Get(t)
	ns := kc.Namespace(t, "launch-e2e")
	r := newRepo(t)
	r.writeKubeConfig(kc.UserKubeconfig("alice"), ns)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "id: claude")}, closureAgents()...)...)
	path := "PATH=" + pathOf(t, []string{"git", "tmux"}, nil)
	res := r.runWith(ctxFor(t), []string{path}, "launch", "--lane", "main", "--no-dashboard")
	if res.code != 1 {
		t.Fatalf("launch: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"wave-orchestrator: cannot launch lane main, nothing was started:\n",
		`  - kubernetes permission: user "alice" cannot create jobs.batch in namespace ` + ns + " (needed to start runs); bind",
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("launch stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if strings.Contains(res.stderr, "executor claude") {
		t.Errorf("launch looked for claude on this machine for a kubernetes lane:\n%s", res.stderr)
	}
	nothingStarted(t, r)
}

func TestDoctorOnAnUnreachableClusterFailsNamingTheServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + l.Addr().String()
	l.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	body := "apiVersion: v1\nkind: Config\ncurrent-context: gone\n" +
		"clusters: [{name: c, cluster: {server: " + strconv.Quote(server) + "}}]\n" +
		"users: [{name: u, user: {token: t}}]\n" +
		"contexts: [{name: gone, context: {cluster: c, user: u}}]\n"
	if err := os.WriteFile(kubeconfig, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	r.writeKubeConfig(kubeconfig, "agents")
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	res := r.run(ctxFor(t), "doctor")
	want := "error kubernetes cluster: cannot reach " + server + ` (kubeconfig context "gone"): `
	if res.code != 1 || !strings.Contains(res.stdout, want) {
		t.Fatalf("doctor: exit %d, want 1 and a line with %q:\n%s%s", res.code, want, res.stdout, res.stderr)
	}
	if strings.Contains(res.stdout, "kubernetes permission") {
		t.Errorf("doctor went on checking permissions against an unreachable server:\n%s", res.stdout)
	}
}
