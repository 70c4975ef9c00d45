package sandbox

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Host is one entry of an allowlist: a host name, a wildcard
// (*.example.com: its subdomains, not itself) or an IP address, and a
// port (0: any).
type Host struct {
	Name string // lower case; an IP address in its canonical form
	Port int
}

func (h Host) String() string {
	p := "*"
	if h.Port > 0 {
		p = strconv.Itoa(h.Port)
	}
	return net.JoinHostPort(h.Name, p)
}

// loopback reports whether h names this machine's loopback: such an
// entry is reached through a forwarder inside the sandbox on the same
// port (a client that bypasses proxies for loopback still gets there).
func (h Host) loopback() bool {
	if h.Name == "localhost" {
		return true
	}
	ip := net.ParseIP(h.Name)
	return ip != nil && ip.IsLoopback()
}

// ParseHost reads an allowlist entry: "host", "host:port", "*.host:443",
// "127.0.0.1:8080", "[::1]:8080" or a URL ("https://host:8443/v1",
// whose scheme gives the port when it names none).
func ParseHost(s string) (Host, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		return hostOfURL(s)
	}
	name, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		name, port = h, p
	} else if strings.Count(s, ":") > 1 {
		name = strings.Trim(s, "[]") // a bare IPv6 address
	}
	return newHost(name, port)
}

func hostOfURL(s string) (Host, error) {
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return Host{}, fmt.Errorf("%q: not a host, host:port or URL", s)
	}
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		}
	}
	return newHost(u.Hostname(), port)
}

func newHost(name, port string) (Host, error) {
	name = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
	h := Host{Name: name}
	if ip := net.ParseIP(name); ip != nil {
		h.Name = ip.String()
	} else if !validName(strings.TrimPrefix(name, "*.")) {
		return Host{}, fmt.Errorf("%q: not a host name or IP address", name)
	}
	switch port {
	case "", "*":
	default:
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Host{}, fmt.Errorf("%q: port %q is not a number from 1 to 65535", name, port)
		}
		h.Port = n
	}
	return h, nil
}

// validName: letters, digits, dashes, underscores and dots, no empty
// label.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// Allowlist is the hosts a sandboxed process may reach through its
// proxy. Everything else is refused.
type Allowlist []Host

// ParseAllowlist reads entries (see ParseHost); every bad one is named.
func ParseAllowlist(entries []string) (Allowlist, error) {
	var a Allowlist
	var bad []string
	for _, e := range entries {
		if strings.TrimSpace(e) == "" {
			continue
		}
		h, err := ParseHost(e)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		if !slices.Contains(a, h) {
			a = append(a, h)
		}
	}
	if len(bad) > 0 {
		return a, fmt.Errorf("allowed hosts: %s", strings.Join(bad, "; "))
	}
	return a, nil
}

// Allows reports whether hostport ("host:port") may be reached.
func (a Allowlist) Allows(hostport string) bool {
	name, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if ip := net.ParseIP(name); ip != nil {
		name = ip.String()
	}
	for _, h := range a {
		if h.Port != 0 && h.Port != p {
			continue
		}
		if h.Name == name {
			return true
		}
		if sub, ok := strings.CutPrefix(h.Name, "*"); ok && strings.HasSuffix(name, sub) && len(name) > len(sub) {
			return true
		}
	}
	return false
}

// internalIP reports whether ip is this machine's or its link's own:
// loopback, link-local (a cloud's metadata endpoint), unspecified or
// multicast. A host allowed by name must not resolve to one, or a
// wildcard entry whose DNS an attacker controls would open the
// supervisor's own services; only an entry naming loopback itself
// (127.0.0.1:8080, localhost:8080) reaches loopback.
func internalIP(ip net.IP) bool {
	return ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast()
}

// Forwards are the loopback endpoints with a port: the shim listens on
// each inside the sandbox and relays to it.
func (a Allowlist) Forwards() []string {
	var out []string
	for _, h := range a {
		if h.Port == 0 || !h.loopback() {
			continue
		}
		name := h.Name
		if name == "localhost" {
			name = "127.0.0.1"
		}
		if addr := net.JoinHostPort(name, strconv.Itoa(h.Port)); !slices.Contains(out, addr) {
			out = append(out, addr)
		}
	}
	return out
}

// Strings is the allowlist as entries, for records and messages.
func (a Allowlist) Strings() []string {
	out := make([]string, len(a))
	for i, h := range a {
		out[i] = h.String()
	}
	return out
}
