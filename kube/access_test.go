package kube

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

func testClient(t *testing.T, cfg *rest.Config) *Client {
	t.Helper()
	c, err := NewClientFromConfig(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func checkCluster(t *testing.T, c *Client, o Options) []Check {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return CheckCluster(ctx, c, o, time.Minute)
}

// named keeps the checks called name.
func named(cs []Check, name string) []Check {
	var out []Check
	for _, c := range cs {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

func dump(cs []Check) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("\n  " + string(c.Status) + " " + c.String())
	}
	return b.String()
}

// manifest is docs/kubernetes/rbac.yaml decoded, one typed object per
// document.
func manifest(t testing.TB) []any {
	t.Helper()
	f, err := os.Open(filepath.Join("..", RBACManifest))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var objs []any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("%s: %v", RBACManifest, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", RBACManifest, err, doc)
		}
		objs = append(objs, obj)
	}
}

// applyManifest creates the manifest's objects in ns (for its example
// namespace agents) with user as the launcher's subject; edit, when set,
// changes the launcher's Role first.
func applyManifest(t testing.TB, kc *kubetest.Cluster, ns, user string, edit func(*rbacv1.Role)) {
	t.Helper()
	applyManifestFor(t, kc, ns, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}, edit)
}

// applyManifestFor is applyManifest with subject as the launcher's: the
// manifest's one change, which its comments ask for.
func applyManifestFor(t testing.TB, kc *kubetest.Cluster, ns string, subject rbacv1.Subject, edit func(*rbacv1.Role)) {
	t.Helper()
	for _, obj := range manifest(t) {
		meta, ok := obj.(metav1.Object)
		if !ok {
			t.Fatalf("%s: %T has no metadata", RBACManifest, obj)
		}
		if want := "agents"; meta.GetNamespace() != want && meta.GetName() != want {
			t.Fatalf("%s: %T %s is not in the example namespace %s", RBACManifest, obj, meta.GetName(), want)
		}
	}
	kc.ApplyManifest(t, filepath.Join("..", RBACManifest), ns, subject, func(r *rbacv1.Role) {
		if edit != nil && r.Name == "wave-launcher" {
			edit(r)
		}
	})
}

// TestRBACManifestGrantsEveryCheckedPermission keeps the manifest true
// to the code: a user bound by it, and the ServiceAccount it makes, pass
// every check (the namespace itself is not readable through a Role).
func TestRBACManifestGrantsEveryCheckedPermission(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	ns := kc.Namespace(t, "rbac-manifest")
	applyManifest(t, kc, ns, "alice", nil)
	cs := checkCluster(t, testClient(t, kc.UserConfig("alice")), Options{Namespace: ns, Image: "agents:1", ServiceAccount: "wave"})
	if f := Failed(cs); len(f) > 0 {
		t.Fatalf("with %s applied, checks failed:%s", RBACManifest, dump(cs))
	}
	for _, name := range []string{"cluster", "image", "permission", "service account", "runner"} {
		got := named(cs, name)
		if len(got) == 0 || slices.ContainsFunc(got, func(c Check) bool { return c.Status != CheckOK }) {
			t.Errorf("check %s not ok:%s", name, dump(cs))
		}
	}
	if ns := named(cs, "namespace"); len(ns) != 1 || ns[0].Status != CheckSkipped {
		t.Errorf("namespace check of a Role-bound user: want skipped (cannot be checked), got:%s", dump(cs))
	}
}

func TestCheckClusterAdminPassesEveryCheck(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	ns := kc.Namespace(t, "admin-checks")
	applyManifest(t, kc, ns, "alice", nil) // for the runner's Role
	cs := checkCluster(t, testClient(t, kc.AdminConfig()), Options{Namespace: ns, Image: "agents:1", ServiceAccount: "wave"})
	for _, c := range cs {
		if c.Status != CheckOK {
			t.Fatalf("admin: check %s is %s:%s", c.Name, c.Status, dump(cs))
		}
	}
	if len(named(cs, "namespace")) != 1 || len(named(cs, "runner")) != 1 {
		t.Fatalf("admin: namespace or runner not checked:%s", dump(cs))
	}
}

func TestCheckClusterNamesTheMissingVerb(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	ns := kc.Namespace(t, "missing-verb")
	applyManifest(t, kc, ns, "bob", func(r *rbacv1.Role) {
		for i := range r.Rules {
			if slices.Contains(r.Rules[i].Resources, "jobs") {
				r.Rules[i].Verbs = slices.DeleteFunc(r.Rules[i].Verbs, func(v string) bool { return v == "create" })
			}
		}
	})
	cs := checkCluster(t, testClient(t, kc.UserConfig("bob")), Options{Namespace: ns, Image: "agents:1", ServiceAccount: "wave"})
	f := Failed(cs)
	if len(f) != 1 {
		t.Fatalf("want exactly the missing create on jobs failed, got:%s", dump(cs))
	}
	want := `user "bob" cannot create jobs.batch in namespace ` + ns
	if p := f[0].Permission; f[0].Name != "permission" || p == nil || p.Verb != "create" || p.Resource != "jobs" ||
		!strings.Contains(f[0].Msg, want) || !strings.Contains(f[0].Fix, RBACManifest) {
		t.Fatalf("failed check = %+v\nwant a permission check saying %q with the fix in %s", f[0], want, RBACManifest)
	}
}

func TestCheckClusterUserWithoutRightsGetsEveryPermissionNamedAndSkips(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	ns := kc.Namespace(t, "no-rights")
	cs := checkCluster(t, testClient(t, kc.UserConfig("carol")), Options{Namespace: ns, Image: "agents:1"})
	perms := named(cs, "permission")
	if len(perms) != len(LauncherPermissions()) {
		t.Fatalf("want one failed check per launcher permission (%d), got:%s", len(LauncherPermissions()), dump(cs))
	}
	for i, p := range LauncherPermissions() {
		if perms[i].Status != CheckFailed || !strings.Contains(perms[i].Msg, "cannot "+p.String()+" in namespace "+ns) {
			t.Errorf("permission %s: got %s %s", p, perms[i].Status, perms[i].Msg)
		}
	}
	// What carol may not read is said to be unchecked, not failed.
	for _, name := range []string{"namespace", "service account", "runner"} {
		got := named(cs, name)
		if len(got) != 1 || got[0].Status != CheckSkipped {
			t.Errorf("check %s: want skipped:%s", name, dump(cs))
		}
	}
	if r := named(cs, "runner"); len(r) == 1 && !strings.Contains(r[0].Msg, "patch leases.coordination.k8s.io") {
		t.Errorf("skipped runner check does not say what the service account needs: %s", r[0].Msg)
	}
}

func TestCheckClusterNamesAMissingServiceAccount(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	ns := kc.Namespace(t, "missing-sa")
	cs := checkCluster(t, testClient(t, kc.AdminConfig()), Options{Namespace: ns, Image: "agents:1", ServiceAccount: "robot"})
	f := Failed(cs)
	want := ns + "/robot does not exist"
	if len(f) < 1 || f[0].Name != "service account" || !strings.Contains(f[0].Msg, want) || !strings.Contains(f[0].Fix, "runtime.kubernetes.serviceAccount") {
		t.Fatalf("want the service account check to fail saying %q, got:%s", want, dump(cs))
	}
}

func TestCheckClusterNamesAMissingNamespace(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	cs := checkCluster(t, testClient(t, kc.AdminConfig()), Options{Namespace: "nowhere-to-be-found", Image: "agents:1"})
	f := Failed(cs)
	if len(f) != 1 || f[0].Name != "namespace" || !strings.Contains(f[0].Msg, "namespace nowhere-to-be-found does not exist") {
		t.Fatalf("want only the namespace check failed, naming it, got:%s", dump(cs))
	}
	if len(named(cs, "service account")) > 0 {
		t.Errorf("the service account was looked for in a namespace that does not exist:%s", dump(cs))
	}
}

func TestCheckClusterNamesAnUnsetImage(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	ns := kc.Namespace(t, "no-image")
	cs := checkCluster(t, testClient(t, kc.AdminConfig()), Options{Namespace: ns})
	f := Failed(cs)
	if len(f) == 0 || f[0].Name != "image" || !strings.Contains(f[0].Msg, "runtime.kubernetes.image is not set") {
		t.Fatalf("want the image check failed:%s", dump(cs))
	}
}

// writeKubeconfig writes a kubeconfig whose context far-away points at
// server.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["far-away"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "far-away"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckClusterUnreachableServerFailsNamingServerAndContext(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + l.Addr().String()
	l.Close() // a closed port: connections are refused at once
	c, err := NewClient(writeKubeconfig(t, server), "")
	if err != nil {
		t.Fatal(err)
	}
	cs := checkCluster(t, c, Options{Namespace: "agents", Image: "agents:1"})
	f := Failed(cs)
	if len(f) != 1 || f[0].Name != "cluster" || !strings.Contains(f[0].Msg, server) || !strings.Contains(f[0].Msg, `context "far-away"`) ||
		!strings.Contains(f[0].Msg, "refused") {
		t.Fatalf("want one failed cluster check naming %s and context far-away:%s", server, dump(cs))
	}
	if len(cs) != 2 {
		t.Errorf("checks went on against an unreachable server:%s", dump(cs))
	}
}

// A server that accepts connections and never answers is given up on
// when the timeout is over, not when the client's own timeouts are.
func TestCheckClusterSilentServerFailsWhenTheTimeoutIsOver(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			held <- conn
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	})
	server := "https://" + l.Addr().String()
	c, err := NewClient(writeKubeconfig(t, server), "")
	if err != nil {
		t.Fatal(err)
	}
	cs := CheckCluster(context.Background(), c, Options{Namespace: "agents", Image: "agents:1"}, 300*time.Millisecond)
	f := Failed(cs)
	if len(f) != 1 || f[0].Name != "cluster" || !strings.Contains(f[0].Msg, server+` (kubeconfig context "far-away") did not answer within 300ms`) {
		t.Fatalf("want the cluster check failed for no answer:%s", dump(cs))
	}
}
