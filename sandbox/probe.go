package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	goruntime "runtime"
	"strings"
	"time"
)

// Modes of backlog.sandbox.mode and runtime.sandbox.mode.
const (
	ModeAuto = "auto" // sandboxed where bubblewrap works, else not (and said so)
	ModeOn   = "on"   // sandboxed, or nothing runs
	ModeOff  = "off"  // not sandboxed (and said so)
)

// Decision is whether runs are sandboxed and, when not, why.
type Decision struct {
	On    bool   `json:"on"`
	Mode  string `json:"mode"`            // as configured
	Bwrap string `json:"bwrap,omitempty"` // bubblewrap's path, when on
	Why   string `json:"why,omitempty"`   // when off: the reason
}

// String is the decision in a few words, for status lines.
func (d Decision) String() string {
	if d.On {
		return "on (bubblewrap)"
	}
	return "off: " + d.Why
}

// probeTimeout bounds the probe; bwrap answers in milliseconds.
const probeTimeout = 10 * time.Second

// Decide resolves mode (ModeAuto when empty) against this machine, once:
// ModeAuto and ModeOn probe bubblewrap. With ModeOn a machine where it
// cannot work is an error naming the cause and key (the caller's key
// name); with ModeAuto the decision says why it is off.
func Decide(ctx context.Context, key, mode string) (Decision, error) {
	if mode == "" {
		mode = ModeAuto
	}
	d := Decision{Mode: mode}
	if mode == ModeOff {
		d.Why = key + ": off"
		return d, nil
	}
	bwrap, err := Usable(ctx)
	if err != nil {
		d.Why = err.Error()
		if mode == ModeOn {
			return d, fmt.Errorf("%s: on, but %w; install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) "+
				"and allow unprivileged user namespaces, or set %s: auto", key, err, key)
		}
		return d, nil
	}
	d.On, d.Bwrap = true, bwrap
	return d, nil
}

// Usable finds bubblewrap and checks it can make a sandbox here (its own
// user, pid and network namespaces, /proc, /dev), returning its path.
func Usable(ctx context.Context) (string, error) {
	if goruntime.GOOS != "linux" {
		return "", errors.New("bubblewrap sandboxes need Linux")
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return "", errors.New("bwrap (bubblewrap) is not on PATH")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "true").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return "", fmt.Errorf("%s cannot make a sandbox here: %w: %s", bwrap, err, msg)
	}
	return bwrap, nil
}
