package kube

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The exec credential plugins' API versions the client speaks.
var execAPIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// execPlugin writes a credential plugin script: each run appends a line
// to runs, saves $KUBERNETES_EXEC_INFO, and prints token tok-<run> that
// expires at the run's line of $EXPIRES (space-separated; none when
// empty), or what $OUTPUT says instead.
func execPlugin(t *testing.T) (script, runs, info string) {
	t.Helper()
	dir := t.TempDir()
	script, runs, info = filepath.Join(dir, "plugin.sh"), filepath.Join(dir, "runs"), filepath.Join(dir, "info")
	body := `#!/bin/sh
echo run >> "` + runs + `"
n=$(wc -l < "` + runs + `" | tr -d ' ')
printf '%s' "$KUBERNETES_EXEC_INFO" > "` + info + `"
if [ -n "$OUTPUT" ]; then printf '%s\n' "$OUTPUT"; exit 0; fi
exp=""
e=$(echo $EXPIRES | cut -d' ' -f"$n")
[ -n "$e" ] && exp=", \"expirationTimestamp\": \"$e\""
echo "{\"apiVersion\": \"$API\", \"kind\": \"ExecCredential\", \"status\": {\"token\": \"tok-$n\"$exp}}"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, runs, info
}

func runsOf(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// tokenServer is an API server (TLS) that answers /version to the
// bearer tokens ok accepts and refuses the rest with 401; it keeps the
// Authorization headers it saw.
type tokenServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newTokenServer(t *testing.T, ok func(auth string) bool) *tokenServer {
	s := &tokenServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if !ok(r.Header.Get("Authorization")) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401,"message":"Unauthorized"}`))
			return
		}
		_, _ = w.Write([]byte(`{"gitVersion":"v1.34.4"}`))
	}))
	t.Cleanup(s.Close)
	return s
}

// caData is the server's certificate, base64 PEM as a kubeconfig holds it.
func (s *tokenServer) caData() string {
	p := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	return base64.StdEncoding.EncodeToString(p)
}

// execKubeconfig is a kubeconfig for srv whose user runs script with
// env (name: value) as its exec plugin.
func execKubeconfig(t *testing.T, srv *tokenServer, api, script string, env map[string]string) string {
	t.Helper()
	var e strings.Builder
	for k, v := range env {
		e.WriteString("      - {name: " + k + ", value: " + strconv.Quote(v) + "}\n")
	}
	body := "current-context: x\nclusters:\n- name: c\n  cluster: {server: " + srv.URL + ", certificate-authority-data: " + srv.caData() + "}\n" +
		"users:\n- name: u\n  user:\n    exec:\n      apiVersion: " + api + "\n      command: " + script + "\n      provideClusterInfo: true\n" +
		"      interactiveMode: Never\n      env:\n" + e.String() +
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
	dir := kubeconfigDir(t, map[string]string{"kc": body})
	return filepath.Join(dir, "kc")
}

// The plugin runs once for a credential it keeps until its expiry, then
// again; it gets the ExecCredential request (with the cluster, as the
// kubeconfig asks) in $KUBERNETES_EXEC_INFO.
func TestExecPluginTokenIsCachedUntilItExpires(t *testing.T) {
	for _, api := range execAPIVersions {
		t.Run(api, func(t *testing.T) {
			noClusterEnv(t)
			script, runs, info := execPlugin(t)
			srv := newTokenServer(t, func(string) bool { return true })
			// The first token has expired when it is handed out; the
			// second lasts an hour.
			now := time.Now().UTC()
			expires := now.Add(-time.Minute).Format(time.RFC3339) + " " + now.Add(time.Hour).Format(time.RFC3339)
			c, err := NewClient(execKubeconfig(t, srv, api, script, map[string]string{"API": api, "EXPIRES": expires}), "")
			if err != nil {
				t.Fatal(err)
			}
			for range 4 {
				if _, err := c.serverVersion(testCtx(t)); err != nil {
					t.Fatal(err)
				}
			}
			if n := runsOf(t, runs); n != 2 || strings.Join(srv.seen, ",") != "Bearer tok-1,Bearer tok-2,Bearer tok-2,Bearer tok-2" {
				t.Errorf("%d runs, requests %v; want tok-1 once (expired), then tok-2 kept", n, srv.seen)
			}
			var req struct {
				APIVersion, Kind string
				Spec             struct {
					Interactive bool
					Cluster     struct {
						Server                   string
						CertificateAuthorityData []byte `json:"certificate-authority-data"`
					}
				}
			}
			b, _ := os.ReadFile(info)
			ca, _ := base64.StdEncoding.DecodeString(srv.caData())
			if err := json.Unmarshal(b, &req); err != nil || req.APIVersion != api || req.Kind != "ExecCredential" ||
				req.Spec.Interactive || req.Spec.Cluster.Server != srv.URL || string(req.Spec.Cluster.CertificateAuthorityData) != string(ca) {
				t.Errorf("KUBERNETES_EXEC_INFO %s (%v)", b, err)
			}
		})
	}
}

// A token the server refuses with 401 runs the plugin again: the next
// request carries the new token.
func TestExecPluginRunsAgainWhenTheTokenIsRefused(t *testing.T) {
	noClusterEnv(t)
	script, runs, _ := execPlugin(t)
	srv := newTokenServer(t, func(auth string) bool { return auth == "Bearer tok-2" })
	c, err := NewClient(execKubeconfig(t, srv, execAPIVersions[0], script, map[string]string{"API": execAPIVersions[0]}), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.serverVersion(testCtx(t)); !apierrors.IsUnauthorized(err) {
		t.Fatalf("the refused token: %v, want 401", err)
	}
	v, err := c.serverVersion(testCtx(t))
	if err != nil || v.GitVersion != "v1.34.4" {
		t.Fatalf("version %+v %v", v, err)
	}
	if n := runsOf(t, runs); n != 2 || strings.Join(srv.seen, ",") != "Bearer tok-1,Bearer tok-2" {
		t.Errorf("%d runs, requests %v; want 2 runs, tok-1 refused then tok-2", n, srv.seen)
	}
}

// What a plugin prints is checked, and no error quotes it (it holds the
// credential).
func TestExecPluginOutputErrorsKeepTheCredentialOut(t *testing.T) {
	noClusterEnv(t)
	srv := newTokenServer(t, func(string) bool { return true })
	for _, out := range []string{
		`not json s3cret`,
		`{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"s3cret"}}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"Other","status":{"token":"s3cret"}}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}`,
	} {
		script, _, _ := execPlugin(t)
		c, err := NewClient(execKubeconfig(t, srv, execAPIVersions[0], script, map[string]string{"OUTPUT": out}), "")
		if err == nil {
			_, err = c.serverVersion(testCtx(t))
		}
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want an error without the credential", out, err)
		}
	}
	if _, err := NewClient(execKubeconfig(t, srv, "client.authentication.k8s.io/v1alpha1", "x", nil), ""); err == nil {
		t.Error("v1alpha1 accepted")
	}
}

// A credential plugin never prompts, even when the launcher runs on a
// terminal: it would write over the dashboard, or wait for a user who is
// not there. (client-go checks the terminal before this, so a test
// without one cannot see the difference in the plugin's run.)
func TestExecPluginsAreNeverInteractive(t *testing.T) {
	noClusterEnv(t)
	srv := newTokenServer(t, func(string) bool { return true })
	script, _, _ := execPlugin(t)
	c, err := NewClient(execKubeconfig(t, srv, execAPIVersions[0], script, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Config.ExecProvider; e == nil || !e.StdinUnavailable || !strings.Contains(e.StdinUnavailableMessage, "log in beforehand") {
		t.Errorf("exec provider %+v: want standard input unavailable, saying why", e)
	}
}
