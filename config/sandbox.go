package config

import (
	"path/filepath"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// Sandbox is backlog.sandbox and runtime.sandbox: how agents are
// confined with bubblewrap (docs/security-model.md).
type Sandbox struct {
	// Mode is auto (sandboxed where bubblewrap works, else not, and
	// said so), on (refuse to run without it) or off. Empty: auto for
	// backlog.sandbox, off for runtime.sandbox.
	Mode string `json:"mode,omitempty" yaml:"mode,omitempty"`
	// AllowHosts are reachable through the sandbox's proxy besides the
	// executor's model endpoint (host, host:port, *.domain, a URL).
	AllowHosts []string `json:"allowHosts,omitempty" yaml:"allowHosts,omitempty"`
	// ReadOnly are more paths bound read-only (absolute or ~/…): a
	// module cache, a toolchain under HOME.
	ReadOnly []string `json:"readOnly,omitempty" yaml:"readOnly,omitempty"`
	// VerifyNetwork is backlog.verify's network: allowlist (the
	// default: AllowHosts only), none, or host (the host's network).
	VerifyNetwork string `json:"verifyNetwork,omitempty" yaml:"verifyNetwork,omitempty"`
}

// BacklogMode is backlog.sandbox.mode in effect (auto unless set).
func (s Sandbox) BacklogMode() string { return cmpOr(s.Mode, sandbox.ModeAuto) }

// RuntimeMode is runtime.sandbox.mode in effect (off unless set).
func (s Sandbox) RuntimeMode() string { return cmpOr(s.Mode, sandbox.ModeOff) }

// VerifyNet is backlog.sandbox.verifyNetwork in effect.
func (s Sandbox) VerifyNet() string { return cmpOr(s.VerifyNetwork, sandbox.NetAllowlist) }

// ReadOnlyPaths is ReadOnly with ~/ expanded against home.
func (s Sandbox) ReadOnlyPaths(home string) []string {
	var out []string
	for _, p := range s.ReadOnly {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home == "" {
				continue
			}
			p = filepath.Join(home, rest)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (c *Config) validateSandboxes(p *problems) {
	for _, s := range []struct {
		key string
		sb  *Sandbox
	}{{"backlog.sandbox", &c.Backlog.Sandbox}, {"runtime.sandbox", &c.Runtime.Sandbox}} {
		sb := s.sb
		sb.Mode = strings.ToLower(strings.TrimSpace(sb.Mode))
		if sb.Mode != "" {
			p.oneOf(s.key+".mode", sb.Mode, sandbox.ModeAuto, sandbox.ModeOn, sandbox.ModeOff)
		}
		if _, err := sandbox.ParseAllowlist(sb.AllowHosts); err != nil {
			p.add(s.key+".allowHosts", "%v", err)
		}
		for _, ro := range sb.ReadOnly {
			if !filepath.IsAbs(ro) && !strings.HasPrefix(ro, "~/") {
				p.add(s.key+".readOnly", "%q: want an absolute path or ~/…", ro)
			}
		}
		sb.VerifyNetwork = strings.ToLower(strings.TrimSpace(sb.VerifyNetwork))
		switch {
		case sb.VerifyNetwork == "":
		case s.key == "runtime.sandbox":
			p.add(s.key+".verifyNetwork", "only backlog.sandbox has a verify step; move it there")
		default:
			p.oneOf(s.key+".verifyNetwork", sb.VerifyNetwork, sandbox.NetAllowlist, sandbox.NetNone, sandbox.NetHost)
		}
	}
}
