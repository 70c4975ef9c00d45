package kube

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
)

// connectProxy is an HTTP proxy that tunnels every CONNECT to target,
// whatever host it names, and keeps what it was asked.
type connectProxy struct {
	target string
	mu     sync.Mutex
	asked  []string
}

func (p *connectProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.asked = append(p.asked, r.Method+" "+r.Host)
	p.mu.Unlock()
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.WriteHeader(http.StatusOK)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		up.Close()
		return
	}
	go func() { _, _ = io.Copy(up, conn); up.Close() }()
	_, _ = io.Copy(conn, up)
	conn.Close()
}

// A kubeconfig's proxy-url carries every request, with the credentials
// and our user agent on it.
func TestRequestsGoThroughTheProxyURL(t *testing.T) {
	noClusterEnv(t)
	srv := newTokenServer(t, func(auth string) bool { return auth == "Bearer t0ken" })
	var mu sync.Mutex
	var seen []string
	api := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String()+" "+r.Header.Get("Authorization")+" "+r.Header.Get("User-Agent"))
		mu.Unlock()
		api.ServeHTTP(w, r)
	})
	u, _ := url.Parse(srv.URL)
	proxy := &connectProxy{target: u.Host}
	ps := httptest.NewServer(proxy)
	defer ps.Close()
	kc := func(proxyURL string) string {
		dir := kubeconfigDir(t, map[string]string{"kc": "current-context: x\nclusters: [{name: c, cluster: {server: \"https://api.cluster.invalid:6443\", " +
			"tls-server-name: example.com, certificate-authority-data: " + srv.caData() + ", proxy-url: \"" + proxyURL + "\"}}]\n" +
			"users: [{name: u, user: {token: t0ken}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"})
		return filepath.Join(dir, "kc")
	}
	c, err := NewClient(kc(ps.URL), "")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.serverVersion(testCtx(t)); err != nil || v.GitVersion != "v1.34.4" {
		t.Fatalf("version through the proxy: %+v %v", v, err)
	}
	if len(proxy.asked) != 1 || proxy.asked[0] != "CONNECT api.cluster.invalid:6443" {
		t.Errorf("the proxy was asked %q", proxy.asked)
	}
	if len(seen) != 1 || seen[0] != "/version Bearer t0ken wave-orchestrator" {
		t.Errorf("the API server saw %q", seen)
	}
	if _, err := NewClient(kc("::not a url"), ""); err == nil {
		t.Error("a bad proxy-url is no error")
	}
}
