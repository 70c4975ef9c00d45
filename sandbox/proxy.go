package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy is a sandbox's only way out: an HTTP proxy (CONNECT tunnels and
// absolute-form requests) listening on a unix socket that only the
// sandbox sees, run by the trusted process outside it. A host not on the
// allowlist is refused with 403 and reported once; a host allowed by
// name that resolves to loopback or link-local is refused too (see
// internalIP).
type Proxy struct {
	allow   Allowlist
	refused func(hostport, why string)
	ln      net.Listener
	srv     *http.Server
	fwd     *httputil.ReverseProxy
	dialer  net.Dialer
	// lookup resolves a host name (the system's resolver).
	lookup func(ctx context.Context, host string) ([]net.IPAddr, error)

	mu     sync.Mutex
	seen   map[string]bool
	tunnel map[net.Conn]struct{}
	closed bool
}

// refusal is a connection the allowlist does not allow.
type refusal struct{ hostport, why string }

func (r *refusal) Error() string { return r.hostport + ": " + r.why }

// ListenProxy serves the proxy on a new unix socket at path. refused,
// when set, is told each refused host once (it runs on the proxy's
// goroutines).
func ListenProxy(path string, allow Allowlist, refused func(hostport, why string)) (*Proxy, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("sandbox proxy: %w", err)
	}
	p := &Proxy{allow: allow, refused: refused, ln: ln, seen: map[string]bool{}, tunnel: map[net.Conn]struct{}{},
		dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, lookup: net.DefaultResolver.LookupIPAddr}
	p.fwd = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u := *pr.In.URL
			pr.Out.URL, pr.Out.Host = &u, pr.In.Host
		},
		Transport: &http.Transport{
			DialContext:         func(ctx context.Context, _, addr string) (net.Conn, error) { return p.dial(ctx, addr) },
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		},
		// Streams (server-sent events) go through as they come.
		FlushInterval: -1,
		ErrorHandler:  p.forwardError,
		ErrorLog:      nil,
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.Default().Handler(), slog.LevelDebug)}
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the proxy and ends its tunnels.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnel {
		c.Close()
	}
	p.mu.Unlock()
	return p.srv.Close()
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "this is a proxy: send an absolute URL or CONNECT", http.StatusBadRequest)
		return
	}
	hostport := r.URL.Host
	if r.URL.Port() == "" {
		port := "80"
		if r.URL.Scheme == "https" {
			port = "443"
		}
		hostport = net.JoinHostPort(r.URL.Hostname(), port)
	}
	if why := p.check(hostport); why != "" {
		p.refuse(w, hostport, why)
		return
	}
	p.fwd.ServeHTTP(w, r)
}

// connect opens a tunnel to r.Host once the allowlist allows it.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	hostport := r.Host
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	up, err := p.dial(r.Context(), hostport)
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		p.refuse(w, hostport, ref.why)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "no tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(down, up) {
		down.Close()
		up.Close()
		return
	}
	defer p.untrack(down, up)
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		down.Close()
		up.Close()
		return
	}
	splice(readerConn{down, buf.Reader}, up)
}

// check says why hostport is refused ("" when it is allowed).
func (p *Proxy) check(hostport string) string {
	if !p.allow.Allows(hostport) {
		return "not on the allowlist"
	}
	return ""
}

// dial connects to hostport if the allowlist allows it: an address as
// is, a name through its addresses but never to an internal one.
func (p *Proxy) dial(ctx context.Context, hostport string) (net.Conn, error) {
	if why := p.check(hostport); why != "" {
		return nil, &refusal{hostport, why}
	}
	host, port, _ := net.SplitHostPort(hostport)
	if ip := net.ParseIP(host); ip != nil || host == "localhost" {
		// Allowed as an address (or as localhost itself): the entry
		// named exactly this.
		if ip == nil {
			host = "127.0.0.1"
		}
		return p.dialer.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	}
	addrs, err := p.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, a := range addrs {
		if internalIP(a.IP) {
			lastErr = &refusal{hostport, "resolves to the internal address " + a.IP.String()}
			continue
		}
		c, err := p.dialer.DialContext(ctx, "tcp", net.JoinHostPort(a.IP.String(), port))
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("%s: no address", host)
	}
	return nil, lastErr
}

// refuse answers 403 and reports hostport, once. A hostport that is no
// host name or address is reported as such, never as the text asked
// for: it is the sandboxed process's, and reaches status and PRs.
func (p *Proxy) refuse(w http.ResponseWriter, hostport, why string) {
	if h, err := ParseHost(hostport); err != nil || h.Port == 0 || strings.HasPrefix(h.Name, "*") {
		hostport = "(not a host name)"
	}
	p.mu.Lock()
	first := !p.seen[hostport]
	p.seen[hostport] = true
	p.mu.Unlock()
	if first && p.refused != nil {
		p.refused(hostport, why)
	}
	http.Error(w, "wave-orchestrator sandbox: "+hostport+" is "+why+" (backlog.sandbox.allowHosts)", http.StatusForbidden)
}

// forwardError answers a failed forwarded request.
func (p *Proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	var ref *refusal
	if errors.As(err, &ref) {
		p.refuse(w, ref.hostport, ref.why)
		return
	}
	http.Error(w, err.Error(), http.StatusBadGateway)
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.tunnel[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.tunnel, c)
	}
}

// readerConn is a connection whose first bytes were already buffered.
type readerConn struct {
	net.Conn
	r *bufio.Reader
}

func (c readerConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite half-closes the underlying connection.
func (c readerConn) CloseWrite() error { return closeWrite(c.Conn) }

// splice copies both ways until both sides are done, half-closing each
// side as the other finishes, then closes both.
func splice(a, b net.Conn) {
	var wg sync.WaitGroup
	cp := func(dst, src net.Conn) {
		defer wg.Done()
		io.Copy(dst, src)
		closeWrite(dst)
	}
	wg.Add(2)
	go cp(a, b)
	go cp(b, a)
	wg.Wait()
	a.Close()
	b.Close()
}

func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// connectVia asks the proxy at socket for a tunnel to hostport and
// returns it ready for use.
func connectVia(socket, hostport string) (net.Conn, error) {
	c, err := net.DialTimeout("unix", socket, 10*time.Second)
	if err != nil {
		return nil, err
	}
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: hostport}, Host: hostport, Header: http.Header{}}
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, errors.New("proxy: " + strconv.Itoa(resp.StatusCode) + " for " + hostport)
	}
	return readerConn{c, br}, nil
}
