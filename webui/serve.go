package webui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// CheckAddr refuses an address off loopback without a token: the API
// shows agents' output and prompts, and with --allow-answer it writes.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if token != "" {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %s is not loopback: set --token-env NAME (an environment variable holding the Bearer token) to serve off this machine", addr)
}

// ListenAndServe serves the lane on addr until ctx ends, then shuts down
// gracefully (open event streams end, requests in flight finish within
// five seconds). ready, when set, gets the address bound (addr may say
// port 0).
//
// A request must arrive and be answered within the server's limits (the
// event stream excepted), an idle connection is closed, and only so many
// connections are open at once (see limits).
func ListenAndServe(ctx context.Context, addr string, o Options, ready func(net.Addr)) error {
	if err := CheckAddr(addr, o.Token); err != nil {
		return err
	}
	if len(o.Token) > 0 && len(o.Token) < MinTokenBytes {
		return fmt.Errorf("serve: the token is %d bytes, a token needs at least %d", len(o.Token), MinTokenBytes)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", addr, err)
	}
	return New(o).serve(ctx, ln, ready)
}

// serve serves on ln, capped at s.lim.conns connections, until ctx ends.
func (s *Server) serve(ctx context.Context, ln net.Listener, ready func(net.Addr)) (err error) {
	ln = netutil.LimitListener(ln, s.lim.conns)
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: s.lim.readHeader, ReadTimeout: s.lim.read,
		WriteTimeout: s.lim.write, IdleTimeout: s.lim.idle, ErrorLog: nil}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watchErr := make(chan error, 1)
	go func() { watchErr <- s.Watch(wctx) }()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case <-ctx.Done():
	case err = <-watchErr:
		err = fmt.Errorf("serve: %w", err)
	case err = <-serveErr:
	}
	stopWatch() // ends the event streams, so Shutdown need not wait for them
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil && err == nil {
		err = fmt.Errorf("serve: shut down: %w", serr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
