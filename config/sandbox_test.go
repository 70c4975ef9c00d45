package config

import (
	"slices"
	"strings"
	"testing"
)

func TestSandboxKeysLoadFromTheFileAndTheEnvironment(t *testing.T) {
	dir := yamlRepo(t, `backlog:
  sandbox:
    mode: "On"
    allowHosts: [proxy.golang.org, "https://gateway.example.com/v1"]
    readOnly: [~/go/pkg/mod, /opt/sdk]
    verifyNetwork: none
`)
	c := mustLoad(t, dir, map[string]string{"WAVE_RUNTIME_SANDBOX_MODE": "auto"})
	b := c.Backlog.Sandbox
	if b.BacklogMode() != "on" || b.VerifyNet() != "none" || !slices.Equal(b.AllowHosts, []string{"proxy.golang.org", "https://gateway.example.com/v1"}) {
		t.Errorf("backlog.sandbox = %+v", b)
	}
	if got := b.ReadOnlyPaths("/home/u"); !slices.Equal(got, []string{"/home/u/go/pkg/mod", "/opt/sdk"}) {
		t.Errorf("readOnly = %q", got)
	}
	if m := c.Runtime.Sandbox.RuntimeMode(); m != "auto" {
		t.Errorf("runtime.sandbox.mode from WAVE_RUNTIME_SANDBOX_MODE = %q", m)
	}
	d := mustLoad(t, yamlRepo(t, "projectName: x\n"), nil)
	if d.Backlog.Sandbox.BacklogMode() != "auto" || d.Runtime.Sandbox.RuntimeMode() != "off" || d.Backlog.Sandbox.VerifyNet() != "allowlist" {
		t.Errorf("defaults: backlog %q, runtime %q, verify %q; want auto, off, allowlist",
			d.Backlog.Sandbox.BacklogMode(), d.Runtime.Sandbox.RuntimeMode(), d.Backlog.Sandbox.VerifyNet())
	}
}

func TestBadSandboxKeysAreNamedWithTheirLine(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"backlog:\n  sandbox:\n    mode: maybe\n", `wave.config.yaml:3: backlog.sandbox.mode: "maybe" is not one of auto, on, off`},
		{"backlog:\n  sandbox:\n    allowHosts: [\"exa mple.com\"]\n", "backlog.sandbox.allowHosts: allowed hosts"},
		{"backlog:\n  sandbox:\n    readOnly: [go/pkg]\n", `backlog.sandbox.readOnly: "go/pkg": want an absolute path`},
		{"backlog:\n  sandbox:\n    verifyNetwork: open\n", `backlog.sandbox.verifyNetwork: "open" is not one of allowlist, none, host`},
		{"runtime:\n  sandbox:\n    verifyNetwork: none\n", "runtime.sandbox.verifyNetwork: only backlog.sandbox has a verify step"},
	} {
		_, err := Load(yamlRepo(t, tc.body), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.body, err, tc.want)
		}
	}
}
