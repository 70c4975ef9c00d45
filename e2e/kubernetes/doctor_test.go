package kubernetes

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

// kubeCluster is a real kube-apiserver with RBAC, started by the first
// test that needs it.
var kubeCluster kubetest.Shared

func TestDoctorOnAKubernetesLaneNamesTheVerbTheUserLacks(t *testing.T) {
	t.Parallel()
	kc := kubeCluster.Get(t)
	ns := kc.Namespace(t, "doctor-e2e")
	r := e2etest.NewRepo(t)
	r.WriteKubeConfig(kc.UserKubeconfig("alice"), ns)
	// claude is not on this PATH: on a kubernetes lane it runs in the
	// image, so doctor does not ask for it here.
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: claude")}, e2etest.ClosureAgents()...)...)
	path := "PATH=" + e2etest.PathOf(t, []string{"git", "tmux"}, nil)
	res := r.RunWith(e2etest.Context(t), []string{path}, "doctor")
	if res.Code != 1 {
		t.Fatalf("doctor: exit %d, want 1\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	out := e2etest.Lines(res.Stdout)
	want := map[string]string{
		"cluster":   "ok    kubernetes cluster: " + kc.URL() + ` (kubeconfig context "kubetest") answers, Kubernetes `,
		"create":    `error kubernetes permission: user "alice" cannot create jobs.batch in namespace ` + ns + ` (needed to start runs); bind user "alice" to the launcher's Role in docs/kubernetes/rbac.yaml`,
		"attach":    `error kubernetes permission: user "alice" cannot get pods/attach in namespace ` + ns,
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
			t.Errorf("doctor printed no %s line starting %q:\n%s", what, prefix, res.Stdout)
		}
	}
	if strings.Contains(res.Stdout, "executor claude") {
		t.Errorf("doctor looked for claude on this machine for a kubernetes lane:\n%s", res.Stdout)
	}
}

func TestLaunchOnAKubernetesLaneWithoutRBACFailsBeforeAnyJob(t *testing.T) {
	t.Parallel()
	kc := kubeCluster.Get(t)
	ns := kc.Namespace(t, "launch-e2e")
	r := e2etest.NewRepo(t)
	r.WriteKubeConfig(kc.UserKubeconfig("alice"), ns)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: claude")}, e2etest.ClosureAgents()...)...)
	path := "PATH=" + e2etest.PathOf(t, []string{"git", "tmux"}, nil)
	res := r.RunWith(e2etest.Context(t), []string{path}, "launch", "--lane", "main", "--no-dashboard")
	if res.Code != 1 {
		t.Fatalf("launch: exit %d, want 1\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, want := range []string{
		"wave-orchestrator: cannot launch lane main, nothing was started:\n",
		`  - kubernetes permission: user "alice" cannot create jobs.batch in namespace ` + ns + " (needed to start runs); bind",
	} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("launch stderr lacks %q:\n%s", want, res.Stderr)
		}
	}
	if strings.Contains(res.Stderr, "executor claude") {
		t.Errorf("launch looked for claude on this machine for a kubernetes lane:\n%s", res.Stderr)
	}
	e2etest.NothingStarted(t, r)
}

func TestDoctorOnAnUnreachableClusterFailsNamingTheServer(t *testing.T) {
	t.Parallel()
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
	r := e2etest.NewRepo(t)
	r.WriteKubeConfig(kubeconfig, "agents")
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	res := r.Run(e2etest.Context(t), "doctor")
	want := "error kubernetes cluster: cannot reach " + server + ` (kubeconfig context "gone"): `
	if res.Code != 1 || !strings.Contains(res.Stdout, want) {
		t.Fatalf("doctor: exit %d, want 1 and a line with %q:\n%s%s", res.Code, want, res.Stdout, res.Stderr)
	}
	if strings.Contains(res.Stdout, "kubernetes permission") {
		t.Errorf("doctor went on checking permissions against an unreachable server:\n%s", res.Stdout)
	}
}

// A backlog-only repository on a kubernetes lane: doctor does not look
// for the workers' command on this machine (it runs in the image) and
// checks the cluster as for waves; with `delete secrets` missing from
// the launcher's Role, doctor fails naming it, and `backlog run` stops
// before it claims anything instead of leaving payload Secrets behind.
func TestABacklogOnAKubernetesLaneIsCheckedAgainstTheCluster(t *testing.T) {
	t.Parallel()
	kc := kubeCluster.Get(t)
	ns := kc.Namespace(t, "backlog-doctor")
	kc.ApplyManifest(t, filepath.Join("..", "..", "docs", "kubernetes", "rbac.yaml"), ns,
		rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "launcher", Namespace: ns}, func(role *rbacv1.Role) {
			for i, rule := range role.Rules {
				if slices.Contains(rule.Resources, "secrets") {
					role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "delete" })
				}
			}
		})
	kubeconfig, err := kc.ServiceAccountKubeconfig(context.Background(), ns, "launcher")
	if err != nil {
		t.Fatal(err)
	}
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Work", "Files: a/**")
	r.CommitIssues(t)
	if err := os.RemoveAll(filepath.Join(r.Root, "docs", "plans", "waves")); err != nil {
		t.Fatal(err)
	}
	cfg := readConfig(t, r.Root)
	kube := "runtime:\n  backend: kubernetes\n  kubernetes:\n" +
		"    kubeconfig: " + strconv.Quote(kubeconfig) + "\n    namespace: " + ns + "\n    image: registry.example.com/agents:1\n" +
		"    serviceAccount: wave\n    gitURL: https://git.example.com/project.git\n"
	cfg = strings.Replace(cfg, "  executor:\n    id: local", "  executor:\n    id: claude", 1)
	r.Write("wave.config.yaml", strings.Replace(cfg, "runtime:\n", kube, 1))
	// Neither claude nor the workers' environment is this machine's.
	path := "PATH=" + e2etest.PathOf(t, []string{"git", "tmux"}, nil)
	doc := r.RunWith(e2etest.Context(t), append(r.Env(), path), "doctor")
	deleteSecrets := `kubernetes permission: user "system:serviceaccount:` + ns + `:launcher" cannot delete secrets in namespace ` + ns
	for _, want := range []string{
		"ok    backlog workers: executor claude runs in the image registry.example.com/agents:1 (not checked on this machine)\n",
		"ok    waves: none",
		"ok    kubernetes cluster: ",
		"error " + deleteSecrets,
	} {
		if !strings.Contains(doc.Stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, doc.Stdout)
		}
	}
	// The workers' executor is not looked for here (the sandbox's own
	// bwrap may be: this PATH holds git and tmux alone).
	claudeLooked := slices.ContainsFunc(strings.Split(doc.Stdout, "\n"), func(l string) bool {
		return strings.Contains(l, "not on PATH") && strings.Contains(l, "claude")
	})
	if doc.Code != 1 || claudeLooked {
		t.Errorf("doctor: exit %d, want 1 for the permission alone\n%s", doc.Code, doc.Stdout)
	}
	run := r.RunWith(e2etest.Context(t), append(r.Env(), path), "backlog", "run", "--issues", "1", "--no-dashboard")
	if run.Code != 1 || !strings.Contains(run.Stderr, "wave-orchestrator: cannot backlog run lane main, nothing was started:\n") ||
		!strings.Contains(run.Stderr, "  - "+deleteSecrets) {
		t.Fatalf("backlog run: exit %d, want 1 naming the missing verb\n%s%s", run.Code, run.Stdout, run.Stderr)
	}
	r.NothingClaimed(t)
}

func readConfig(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
