package webui

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// cookieName carries the token for the page: a browser cannot put a
// Bearer header on a navigation or an EventSource.
const cookieName = "wave_token"

// guard sets the headers every answer carries and lets a request through
// only when it may be: with a token, the token on every request; without
// one (loopback only), a Host that is loopback too, so a web page on a
// name that resolves to 127.0.0.1 cannot read the lane (DNS rebinding);
// and a state-changing request only from this origin.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		// Not no-referrer: under it a browser sends "Origin: null" with
		// the page's own form posts.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
			httpError(w, http.StatusForbidden, "cross-origin request refused")
			return
		}
		if s.opt.Token == "" {
			if !loopbackHost(r.Host) {
				httpError(w, http.StatusForbidden, "host "+r.Host+" is not loopback: serve off loopback needs --token-env")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		login := r.Method == http.MethodPost && r.URL.Path == "/login"
		tries := login || presentsToken(r)
		if tries {
			if ok, wait := s.logins.allow(clientOf(r.RemoteAddr)); !ok {
				tooManyTries(w, wait)
				return
			}
		}
		if login {
			next.ServeHTTP(w, r)
			return
		}
		if !s.authorized(r) {
			if tries {
				s.logins.failed(clientOf(r.RemoteAddr))
			}
			s.unauthorized(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// presentsToken: the request carries a Bearer header or the login
// cookie, right or wrong: a try at the token.
func presentsToken(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	_, err := r.Cookie(cookieName)
	return err == nil
}

// tooManyTries is 429 for a client over its failed-login budget; the
// connection is closed, so waiting costs the server nothing.
func tooManyTries(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
	httpError(w, http.StatusTooManyRequests, "too many wrong tokens from this address; try again later")
}

// authorized: the request's Bearer header holds the token, or (the
// page's own requests) its cookie holds the token's digest.
func (s *Server) authorized(r *http.Request) bool {
	if a := r.Header.Get("Authorization"); a != "" {
		t, ok := strings.CutPrefix(a, "Bearer ")
		return ok && s.tokenOK(strings.TrimSpace(t))
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return equal(c.Value, s.cookieValue())
	}
	return false
}

// tokenOK compares a presented token with the server's in constant time.
func (s *Server) tokenOK(got string) bool {
	return got != "" && equal(got, s.opt.Token)
}

// cookieValue is what the login cookie holds: a digest of the token, so
// the token itself is never stored in the browser and any token (spaces,
// quotes) makes a valid cookie.
func (s *Server) cookieValue() string {
	sum := sha256.Sum256([]byte("wave-orchestrator serve login\x00" + s.opt.Token))
	return hex.EncodeToString(sum[:])
}

// equal compares in constant time; hashing first makes the time
// independent of the lengths too.
func equal(a, b string) bool {
	x, y := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}

// unauthorized is 401; a browser asking for the page gets the login form.
// The connection is closed after it: a client without the token holds no
// connection (nor file) of ours longer than one answer.
func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="wave-orchestrator"`)
	w.Header().Set("Connection", "close")
	if (r.Method == http.MethodGet && r.URL.Path == "/") || r.URL.Path == "/login" {
		b, err := pageFS.ReadFile("page/login.html")
		if err == nil {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write(b)
			return
		}
	}
	httpError(w, http.StatusUnauthorized, "a Bearer token is required")
}

// handleLogin takes the token from the login form and, when it is right,
// keeps it in an HttpOnly, same-site cookie for the page's requests.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if s.opt.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	t := r.PostFormValue("token")
	if !s.tokenOK(t) {
		s.logins.failed(clientOf(r.RemoteAddr))
		s.unauthorized(w, r)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.cookieValue(), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// sameOrigin: a request with an Origin must come from this host; an
// opaque one ("null") only with the browser's word that it is ours.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	switch o {
	case "":
		return r.Header.Get("Sec-Fetch-Site") != "cross-site"
	case "null":
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	return o == "http://"+r.Host || o == "https://"+r.Host
}

// loopbackHost reports whether a Host header names this machine's
// loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
