package sandbox

import (
	"net"
	"slices"
	"strings"
	"testing"
)

func TestAllowlistMatching(t *testing.T) {
	t.Parallel()
	a, err := ParseAllowlist([]string{
		"api.anthropic.com:443",
		"https://gateway.example.com/v1", // a URL: its port from the scheme
		"*.githubusercontent.com",        // any port of any subdomain
		"http://127.0.0.1:8080",
		"[::1]:9000",
		"10.0.0.7",
		"LocalHost:7000",
		"",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		hostport string
		want     bool
	}{
		{"api.anthropic.com:443", true},
		{"API.Anthropic.com.:443", true},
		{"api.anthropic.com:80", false},
		{"anthropic.com:443", false},
		{"evil-api.anthropic.com:443", false},
		{"gateway.example.com:443", true},
		{"gateway.example.com:8443", false},
		{"raw.githubusercontent.com:443", true},
		{"a.b.githubusercontent.com:22", true},
		{"githubusercontent.com:443", false},
		{"xgithubusercontent.com:443", false},
		{"127.0.0.1:8080", true},
		{"127.0.0.1:8081", false},
		{"[::1]:9000", true},
		{"[0:0:0:0:0:0:0:1]:9000", true},
		{"10.0.0.7:5432", true},
		{"10.0.0.8:5432", false},
		{"localhost:7000", true},
		{"localhost:7001", false},
		{"example.org:443", false},
		{"no-port", false},
		{"host:notaport", false},
	} {
		if got := a.Allows(tc.hostport); got != tc.want {
			t.Errorf("Allows(%q) = %v, want %v", tc.hostport, got, tc.want)
		}
	}
	if got, want := a.Forwards(), []string{"127.0.0.1:8080", "::1:9000", "127.0.0.1:7000"}; !slices.Equal(got, fixV6(want)) {
		t.Errorf("Forwards = %q, want %q", got, fixV6(want))
	}
}

func fixV6(addrs []string) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		if strings.HasPrefix(a, "::1:") {
			a = net.JoinHostPort("::1", strings.TrimPrefix(a, "::1:"))
		}
		out[i] = a
	}
	return out
}

func TestBadAllowlistEntriesAreNamed(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"api.example.com:0", "api.example.com:70000", "exa mple.com", "http://", "a..b:443", "host:port"} {
		if _, err := ParseAllowlist([]string{"ok.example.com", bad}); err == nil || !strings.Contains(err.Error(), "allowed hosts") {
			t.Errorf("ParseAllowlist(%q) = %v, want an error naming it", bad, err)
		}
	}
}

func TestInternalAddressesAreNeverReachedByName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true}, {"127.8.9.10", true}, {"::1", true}, {"169.254.169.254", true}, {"fe80::1", true},
		{"0.0.0.0", true}, {"::", true}, {"224.0.0.1", true},
		{"10.1.2.3", false}, {"192.168.1.1", false}, {"93.184.216.34", false}, {"2606:4700::1", false},
	} {
		if got := internalIP(net.ParseIP(tc.ip)); got != tc.want {
			t.Errorf("internalIP(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}

func TestEndpointsComeFromTheExecutorsVariablesElseItsDefaults(t *testing.T) {
	t.Parallel()
	n := Needs{EndpointEnv: []string{"ANTHROPIC_BASE_URL"}, Endpoints: []string{"api.anthropic.com:443"}}
	env := envLookup([]string{"ANTHROPIC_BASE_URL=http://127.0.0.1:5000", "X=1"})
	if got := n.endpoints(env); !slices.Equal(got, []string{"http://127.0.0.1:5000"}) {
		t.Errorf("with the variable set: %q", got)
	}
	if got := n.endpoints(envLookup(nil)); !slices.Equal(got, []string{"api.anthropic.com:443"}) {
		t.Errorf("without it: %q", got)
	}
}
