package kubernetes

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// requestCounter counts the API requests that pass its proxy, by verb
// and resource.
type requestCounter struct {
	mu sync.Mutex
	by map[string]int
}

func (c *requestCounter) note(r *http.Request) {
	verb := r.Method
	if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
		verb = "WATCH"
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource := parts[len(parts)-1]
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			resource = parts[i+2]
		}
	}
	c.mu.Lock()
	c.by[verb+" "+resource]++
	c.mu.Unlock()
}

func (c *requestCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.by {
		n += v
	}
	return n
}

// summary is the counts, largest first.
func (c *requestCounter) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.by))
	for k := range c.by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return c.by[keys[i]] > c.by[keys[j]] || c.by[keys[i]] == c.by[keys[j]] && keys[i] < keys[j]
	})
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, c.by[k])
	}
	return b.String()
}

// countingKubeconfig is kubeconfig with its server replaced by a TLS
// proxy on 127.0.0.1 that counts each request on its way to the API server
// (watches stream through). Only the process given this kubeconfig goes
// through it: the pods reach the API server with their own.
func countingKubeconfig(t *testing.T, kubeconfig string) (string, *requestCounter) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	target, err := url.Parse(cluster.Server)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cluster.CertificateAuthorityData)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}
	counter := &requestCounter{by: map[string]int{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		counter.note(r)
		proxy.ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cluster.Server, cluster.CertificateAuthorityData, cluster.CertificateAuthority = srv.URL, ca, ""
	out := filepath.Join(t.TempDir(), "kubeconfig-counted")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out, counter
}
