package gittest

import (
	"net"
	"net/http"
	"net/http/cgi"
	"os/exec"
	"path/filepath"
	"testing"
)

// ServeHTTP serves the bare repository bareDir over git's smart HTTP
// protocol (git http-backend behind net/http/cgi) on 127.0.0.1 until the
// test ends, and returns its URL. Pushes are accepted. With a non-empty
// user every request must carry that user and pass as basic auth; an
// empty user serves without any.
func ServeHTTP(t testing.TB, bareDir, user, pass string) string {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("serve %s over http: %v", bareDir, err)
	}
	abs, err := filepath.Abs(bareDir)
	if err != nil {
		t.Fatalf("serve %s over http: %v", bareDir, err)
	}
	backend := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Dir:  filepath.Dir(abs),
		Env: []string{
			"GIT_PROJECT_ROOT=" + filepath.Dir(abs),
			"GIT_HTTP_EXPORT_ALL=1",
			// http-backend refuses receive-pack to an anonymous user
			// unless the repository's config allows it.
			"GIT_CONFIG_COUNT=1",
			"GIT_CONFIG_KEY_0=http.receivepack",
			"GIT_CONFIG_VALUE_0=true",
		},
	}
	var h http.Handler = backend
	if user != "" {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="gittest"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
			backend.ServeHTTP(w, r)
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("serve %s over http: %v", bareDir, err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at Close
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/" + filepath.Base(abs)
}
