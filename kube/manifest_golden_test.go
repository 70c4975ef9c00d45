package kube

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// updateGolden rewrites testdata/manifests from the code under test.
// The files hold the manifests' wire meaning as released: a change of
// what a run's Job, Secret or Lease say is a change of this test's
// files, reviewed as one.
var updateGolden = flag.Bool("update-golden", false, "rewrite kube/testdata/manifests")

// goldenCase is one run whose Job, Secret and Lease are compared.
type goldenCase struct {
	name string
	p    *runtime.Payload
	o    Options
}

func goldenCases() []goldenCase {
	deadline := t0.Add(30 * time.Minute)
	shared := func() *runtime.Payload {
		return &runtime.Payload{RunID: "w0-A1-a1", Lane: "main", AgentID: "A 1", WaveNumber: 2, Attempt: 1,
			Argv: []string{"/home/me/bin/wave-orchestrator", "local-agent", "--prompt", "p"},
			Env:  map[string]string{"API_TOKEN": "s3cret"}, Cwd: "/repo", RunDir: "/repo/.wave/run",
			HeartbeatIntervalMs: 2000, TerminateGraceMs: 5000, SchemaVersion: 1}
	}
	withDeadline := shared()
	withDeadline.DeadlineAt = &deadline
	checkout := &runtime.Payload{RunID: "i3-a1", Lane: "main", AgentID: "i3", Attempt: 1, Argv: []string{"claude"},
		Cwd: "/work/i3", RunDir: filepath.Join("testdata", "manifests", "rundir"), HeartbeatIntervalMs: 200, DeadlineAt: &deadline,
		Checkout: &runtime.Checkout{Origin: "https://git.example.com/r.git", Base: "wave/b1", Branch: "wave/b1-i3", Dir: "/work/i3",
			SnapshotRef: "refs/wave/salvage/3/a1", ResultRef: "refs/wave/runs/i3-a1"}}
	sameDir := *checkout
	co := *checkout.Checkout
	co.Dir = checkout.RunDir
	sameDir.Checkout, sameDir.RunID = &co, "i3-a2"
	base := Options{Namespace: "agents", Image: "img:1", RepoRoot: "/repo", Lane: "main"}
	claim := base
	claim.WorkspaceClaim, claim.ServiceAccount = "repo", "wave"
	host := base
	host.WorkspaceHostPath, host.ImagePullPolicy, host.FinishedTTL = "/srv/repo", "IfNotPresent", 5
	host.CPU, host.Memory = "500m", "1Gi"
	host.EnvFrom, host.NodeSelector = []string{"agent-keys", "more-keys"}, map[string]string{"pool": "agents"}
	host.PassEnv = map[string]string{"ANTHROPIC_API_KEY": "k"}
	cpuOnly := claim
	cpuOnly.CPU = "2"
	creds := base
	creds.GitCredentialsSecret = "wave-git"
	return []goldenCase{
		{"claim", shared(), claim},
		{"hostpath-resources-deadline", withDeadline, host},
		{"cpu-only", shared(), cpuOnly},
		{"checkout", checkout, base},
		{"checkout-credentials", checkout, creds},
		{"checkout-same-dir", &sameDir, creds},
	}
}

// TestManifestsMeanWhatTheyMeant builds each case's Job, Secret and
// Lease and compares their JSON, as sent, with the golden files: the
// same fields and values, with nulls and empty objects (which the old
// types sent for unset structs) read as absent.
func TestManifestsMeanWhatTheyMeant(t *testing.T) {
	t.Parallel()
	for _, gc := range goldenCases() {
		name := ObjectName(gc.o.instance(), gc.p.RunID)
		job := jobFor(gc.p, gc.o, name, t0)
		jb, err := encode(job)
		if err != nil {
			t.Fatal(err)
		}
		job.UID = "uid-1"
		sec, err := secretFor(gc.p, gc.o, "/home/me/bin/wave-orchestrator", job)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := encode(sec)
		if err != nil {
			t.Fatal(err)
		}
		lb, err := encode(leaseFor(gc.p, gc.o, job))
		if err != nil {
			t.Fatal(err)
		}
		for kind, got := range map[string][]byte{"job": jb, "secret": sb, "lease": lb} {
			path := filepath.Join("testdata", "manifests", gc.name+"."+kind+".json")
			if *updateGolden {
				var out bytes.Buffer
				if err := json.Indent(&out, got, "", "  "); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(out.Bytes(), '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := wireMeaning(t, got), wireMeaning(t, want); !reflect.DeepEqual(g, w) {
				t.Errorf("%s %s:\n got %s\nwant %s", gc.name, kind, mustJSON(t, g), mustJSON(t, w))
			}
		}
	}
}

// encode is o as the client sends it: JSON, with its apiVersion and kind.
func encode(o kruntime.Object) ([]byte, error) {
	s, err := newScheme()
	if err != nil {
		return nil, err
	}
	gvs := s.PrioritizedVersionsAllGroups()
	return kruntime.Encode(serializer.NewCodecFactory(s).LegacyCodec(gvs...), o)
}

// wireMeaning is b decoded, without the nulls and empty objects an API
// server reads as unset.
func wireMeaning(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return prune(v)
}

func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			e = prune(e)
			if m, ok := e.(map[string]any); e == nil || ok && len(m) == 0 {
				continue
			}
			out[k] = e
		}
		return out
	case []any:
		for i := range x {
			x[i] = prune(x[i])
		}
	}
	return v
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
