package preflight

import (
	"context"
	"fmt"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// installBubblewrap is how a machine gets the sandbox.
const installBubblewrap = "install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) " +
	"and allow unprivileged user namespaces"

// Sandbox says whether backlog workers (key backlog.sandbox, the
// default auto) or wave agents (runtime.sandbox, off unless set) run
// sandboxed on this machine, as `backlog run` and `launch` will decide
// it: an error when the mode is on and bubblewrap cannot work here, a
// warning when they will run unconfined. pods: workers run in
// Kubernetes pods (the sandbox then covers verify only).
func Sandbox(ctx context.Context, cfg *config.Config, backlog, pods bool) []Finding {
	var fs []Finding
	if backlog {
		what := "backlog workers, reviewers and verify"
		if pods {
			what = "backlog verify (workers run in pods)"
		}
		fs = append(fs, sandboxFinding(ctx, "backlog.sandbox.mode", cfg.Backlog.Sandbox.BacklogMode(), what))
	}
	if m := cfg.Runtime.Sandbox.RuntimeMode(); m != sandbox.ModeOff {
		fs = append(fs, sandboxFinding(ctx, "runtime.sandbox.mode", m, "wave agents"))
	}
	return fs
}

func sandboxFinding(ctx context.Context, key, mode, what string) Finding {
	d, err := sandbox.Decide(ctx, key, mode)
	switch {
	case err != nil:
		return Finding{Level: LevelError, Check: "sandbox", Msg: "sandbox: " + Flat(err.Error()), Fix: installBubblewrap}
	case d.On:
		return Finding{Level: LevelOK, Check: "sandbox", Msg: fmt.Sprintf("sandbox: %s are sandboxed (bubblewrap %s): "+
			"the system read-only, their checkout read-write, a private home, the network only to the allowlist", what, d.Bwrap)}
	case mode == sandbox.ModeOff:
		return Finding{Level: LevelWarn, Check: "sandbox", Msg: fmt.Sprintf("sandbox: off (%s: off): %s can read your home "+
			"directory and reach any host", key, what)}
	}
	return Finding{Level: LevelWarn, Check: "sandbox", Msg: fmt.Sprintf("sandbox: %s will not be sandboxed: %s; %s, or set %s: off "+
		"to accept it", what, Flat(d.Why), installBubblewrap, key), Fix: installBubblewrap}
}
