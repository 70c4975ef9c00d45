package kube

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// execPlugin writes a credential plugin script: each run appends a line
// to runs, saves $KUBERNETES_EXEC_INFO, and prints token tok-<run> that
// expires at $EXPIRES (none when empty).
func execPlugin(t *testing.T) (script, runs, info string) {
	t.Helper()
	dir := t.TempDir()
	script, runs, info = filepath.Join(dir, "plugin.sh"), filepath.Join(dir, "runs"), filepath.Join(dir, "info")
	body := `#!/bin/sh
echo run >> "` + runs + `"
n=$(wc -l < "` + runs + `" | tr -d ' ')
printf '%s' "$KUBERNETES_EXEC_INFO" > "` + info + `"
exp=""
[ -n "$EXPIRES" ] && exp=", \"expirationTimestamp\": \"$EXPIRES\""
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

// The plugin runs once for a credential it keeps until its expiry, then
// again; it gets the ExecCredential request (with the cluster when it
// asks) in $KUBERNETES_EXEC_INFO.
func TestExecPluginTokenIsCachedUntilItExpires(t *testing.T) {
	for _, api := range execAPIVersions {
		t.Run(api, func(t *testing.T) {
			script, runs, info := execPlugin(t)
			now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
			e := &ExecConfig{APIVersion: api, Command: script, ProvideClusterInfo: true,
				Env: []ExecEnv{{Name: "API", Value: api}, {Name: "EXPIRES", Value: now.Add(time.Hour).Format(time.RFC3339)}}}
			p, err := newExecProvider(e, &Config{Host: "https://k.example.com", CAData: []byte(testCAPEM)})
			if err != nil {
				t.Fatal(err)
			}
			p.now = func() time.Time { return now }
			for range 3 {
				if tok, err := p.token(); err != nil || tok != "tok-1" {
					t.Fatalf("token %q %v", tok, err)
				}
			}
			if n := runsOf(t, runs); n != 1 {
				t.Errorf("%d runs before expiry, want 1", n)
			}
			now = now.Add(time.Hour + time.Second)
			if tok, _ := p.token(); tok != "tok-2" {
				t.Errorf("after expiry %q, want tok-2", tok)
			}
			var req struct {
				APIVersion, Kind string
				Spec             struct {
					Interactive bool
					Cluster     execCluster
				}
			}
			b, _ := os.ReadFile(info)
			if err := json.Unmarshal(b, &req); err != nil || req.APIVersion != api || req.Kind != "ExecCredential" ||
				req.Spec.Interactive || req.Spec.Cluster.Server != "https://k.example.com" || string(req.Spec.Cluster.CAData) != testCAPEM {
				t.Errorf("KUBERNETES_EXEC_INFO %s (%v)", b, err)
			}
		})
	}
}

// A request the server refuses with 401 runs the plugin again and is
// sent once more with the new token.
func TestExecPluginRunsAgainWhenTheTokenIsRefused(t *testing.T) {
	script, runs, _ := execPlugin(t)
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer tok-2" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401,"message":"Unauthorized"}`))
			return
		}
		_, _ = w.Write([]byte(`{"gitVersion":"v1.34.4"}`))
	}))
	defer srv.Close()
	c, err := NewClientFromConfig(&Config{Host: srv.URL, Exec: &ExecConfig{APIVersion: execAPIVersions[0], Command: script,
		Env: []ExecEnv{{Name: "API", Value: execAPIVersions[0]}}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.serverVersion(testCtx(t))
	if err != nil || v.GitVersion != "v1.34.4" {
		t.Fatalf("version %+v %v", v, err)
	}
	if n := runsOf(t, runs); n != 2 || strings.Join(seen, ",") != "Bearer tok-1,Bearer tok-2" {
		t.Errorf("%d runs, requests %v; want 2 runs, tok-1 refused then tok-2", n, seen)
	}
}

// What a plugin prints is checked, and no error quotes it (it holds the
// credential).
func TestExecPluginOutputErrorsKeepTheCredentialOut(t *testing.T) {
	e := ExecConfig{APIVersion: execAPIVersions[0], Command: "plugin", where: `kubeconfig k: user "u": exec`}
	for _, c := range []struct{ out, want string }{
		{`not json s3cret`, "printed no ExecCredential JSON"},
		{`{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"s3cret"}}`, `printed apiVersion "client.authentication.k8s.io/v1beta1", want the configured`},
		{`{"apiVersion":"client.authentication.k8s.io/v1","kind":"Other","status":{"token":"s3cret"}}`, `printed kind "Other"`},
		{`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"}`, "without status"},
		{`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}`, "neither a token nor a client certificate"},
	} {
		_, err := parseExecOutput(e, []byte(c.out))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), e.where) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want %q", c.out, err, c.want)
		}
	}
	if _, err := newExecProvider(&ExecConfig{APIVersion: "client.authentication.k8s.io/v1alpha1", Command: "x"}, &Config{}); err == nil {
		t.Error("v1alpha1 accepted")
	}
}
