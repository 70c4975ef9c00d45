package kube

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"
)

// Config is how to reach one API server and who to be there: what a
// kubeconfig context or the in-cluster service account says, read by
// this package itself (kubeconfig.go) rather than by client-go, whose
// packages would initialise in every process of the binary.
type Config struct {
	// Host is the API server's URL (https://host:port).
	Host string

	// CAData is the PEM bundle that signs the server's certificate (the
	// system roots when empty); Insecure skips the check; ServerName is
	// the name to check instead of Host's.
	CAData     []byte
	Insecure   bool
	ServerName string
	// CertData and KeyData are a PEM client certificate and its key.
	CertData, KeyData []byte

	// BearerToken is sent as is; TokenFile is read again every minute
	// (a projected service-account token rotates); Exec runs a
	// credential plugin. At most one of them is used, in this order:
	// Exec, TokenFile, BearerToken.
	BearerToken string
	TokenFile   string
	Exec        *ExecConfig
	// Username and Password are basic authentication (old clusters).
	Username, Password string

	// ProxyURL is the proxy for every request; unset, the usual
	// $HTTPS_PROXY / $NO_PROXY apply.
	ProxyURL string

	// QPS and Burst limit this client's request rate (50 and 100 when
	// zero); Timeout bounds each request, watches included (none when
	// zero).
	QPS       float32
	Burst     int
	Timeout   time.Duration
	UserAgent string

	// Source says where the config came from ("kubeconfig /path",
	// "in-cluster service account"), for errors.
	Source string

	// wrap, when set, wraps the transport (tests count and refuse
	// requests this way).
	wrap func(http.RoundTripper) http.RoundTripper
}

// Wrap has every request go through fn's round tripper, around the ones
// wrapped before.
func (c *Config) Wrap(fn func(http.RoundTripper) http.RoundTripper) {
	if prev := c.wrap; prev != nil {
		c.wrap = func(rt http.RoundTripper) http.RoundTripper { return fn(prev(rt)) }
		return
	}
	c.wrap = fn
}

// tlsConfig is the TLS side of c; cert, when set, supplies a client
// certificate an exec plugin hands out.
func (c *Config) tlsConfig(cert func() (*tls.Certificate, error)) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.Insecure, ServerName: c.ServerName} //nolint:gosec // insecure-skip-tls-verify is the user's choice
	if len(c.CAData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(c.CAData) {
			return nil, fmt.Errorf("%s: certificate-authority holds no PEM certificate", c.Source)
		}
		tc.RootCAs = pool
	}
	if len(c.CertData) > 0 || len(c.KeyData) > 0 {
		kp, err := tls.X509KeyPair(c.CertData, c.KeyData)
		if err != nil {
			return nil, fmt.Errorf("%s: client-certificate and client-key: %w", c.Source, err)
		}
		tc.Certificates = []tls.Certificate{kp}
	}
	if cert != nil && len(tc.Certificates) == 0 {
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			crt, err := cert()
			if err != nil || crt == nil {
				return &tls.Certificate{}, err
			}
			return crt, nil
		}
	}
	return tc, nil
}

// proxy is the transport's proxy function.
func (c *Config) proxy() (func(*http.Request) (*url.URL, error), error) {
	if c.ProxyURL == "" {
		return http.ProxyFromEnvironment, nil
	}
	u, err := url.Parse(c.ProxyURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s: proxy-url %q is not a URL", c.Source, c.ProxyURL)
	}
	return http.ProxyURL(u), nil
}

// transport is the HTTP client side of a Client: TLS, proxy, the
// credentials, the user agent and the wrappers, but no rate limit.
type transport struct {
	rt   http.RoundTripper // what requests go through
	tls  *tls.Config       // for the attach's own connection
	auth *authenticator
}

func newTransport(c *Config) (*transport, error) {
	auth, err := newAuthenticator(c)
	if err != nil {
		return nil, err
	}
	var cert func() (*tls.Certificate, error)
	if auth.exec != nil {
		cert = auth.exec.certificate
	}
	tc, err := c.tlsConfig(cert)
	if err != nil {
		return nil, err
	}
	proxy, err := c.proxy()
	if err != nil {
		return nil, err
	}
	base := &http.Transport{
		Proxy:               proxy,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tc,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 25,
		IdleConnTimeout:     90 * time.Second,
		// A watch on a connection that died quietly must end, so the
		// cache lists again when the server is back.
		HTTP2: &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
	}
	var rt http.RoundTripper = &authRoundTripper{next: base, auth: auth, agent: c.UserAgent}
	if c.wrap != nil {
		rt = c.wrap(rt)
	}
	return &transport{rt: rt, tls: tc, auth: auth}, nil
}

// authenticator puts the credentials on a request.
type authenticator struct {
	token      string
	user, pass string
	file       *tokenFile
	exec       *execProvider
}

func newAuthenticator(c *Config) (*authenticator, error) {
	a := &authenticator{token: c.BearerToken, user: c.Username, pass: c.Password}
	switch {
	case c.Exec != nil:
		p, err := newExecProvider(c.Exec, c)
		if err != nil {
			return nil, err
		}
		a.exec = p
	case c.TokenFile != "":
		a.file = &tokenFile{path: c.TokenFile, static: c.BearerToken}
	}
	return a, nil
}

// header is the Authorization header's value ("" for none).
func (a *authenticator) header() (string, error) {
	switch {
	case a.exec != nil:
		tok, err := a.exec.token()
		if err != nil || tok == "" {
			return "", err
		}
		return "Bearer " + tok, nil
	case a.file != nil:
		tok, err := a.file.get()
		if err != nil {
			return "", err
		}
		return "Bearer " + tok, nil
	case a.token != "":
		return "Bearer " + a.token, nil
	case a.user != "" || a.pass != "":
		r := &http.Request{Header: http.Header{}}
		r.SetBasicAuth(a.user, a.pass)
		return r.Header.Get("Authorization"), nil
	}
	return "", nil
}

// unauthorized is told a request was refused with 401: an exec plugin's
// token is fetched again. It reports whether a retry may succeed.
func (a *authenticator) unauthorized(sent string) bool {
	if a.exec == nil {
		return false
	}
	return a.exec.expire(sent)
}

// authRoundTripper adds the credentials and the user agent, and retries
// once with fresh credentials when an exec plugin's token is refused.
type authRoundTripper struct {
	next  http.RoundTripper
	auth  *authenticator
	agent string
}

func (t *authRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, sent, err := t.send(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !t.auth.unauthorized(sent) {
		return resp, err
	}
	if req.Body != nil && req.GetBody == nil {
		return resp, nil
	}
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return resp, nil
		}
	}
	resp.Body.Close()
	resp, _, err = t.send(retry)
	return resp, err
}

func (t *authRoundTripper) send(req *http.Request) (*http.Response, string, error) {
	h, err := t.auth.header()
	if err != nil {
		return nil, "", err
	}
	r := req.Clone(req.Context())
	if h != "" && r.Header.Get("Authorization") == "" {
		r.Header.Set("Authorization", h)
	}
	if t.agent != "" && r.Header.Get("User-Agent") == "" {
		r.Header.Set("User-Agent", t.agent)
	}
	resp, err := t.next.RoundTrip(r)
	return resp, h, err
}

// tokenFile is a bearer token read from a file again once a minute: a
// projected service-account token is replaced before it expires.
type tokenFile struct {
	path   string
	static string // used when the file cannot be read and was never read

	mu   sync.Mutex
	tok  string
	read time.Time
}

func (f *tokenFile) get() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tok != "" && time.Since(f.read) < time.Minute {
		return f.tok, nil
	}
	b, err := os.ReadFile(f.path)
	switch {
	case err == nil && len(bytes.TrimSpace(b)) > 0:
		f.tok, f.read = string(bytes.TrimSpace(b)), time.Now()
	case f.tok != "":
		// Keep the last token: the file is being replaced.
	case f.static != "":
		return f.static, nil
	case err == nil:
		return "", fmt.Errorf("token file %s is empty", f.path)
	default:
		return "", fmt.Errorf("token file: %w", err)
	}
	return f.tok, nil
}

// errNotInCluster: no in-cluster service account here.
var errNotInCluster = errors.New("not running in a pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset)")
