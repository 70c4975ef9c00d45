package preflight

import (
	"context"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

func TestDoctorSaysWhetherWorkersAreSandboxed(t *testing.T) {
	ctx := context.Background()
	_, usable := sandbox.Usable(ctx)
	cfg := func(backlogMode, runtimeMode string) *config.Config {
		c := &config.Config{}
		c.Backlog.Sandbox.Mode, c.Runtime.Sandbox.Mode = backlogMode, runtimeMode
		return c
	}
	if usable == nil {
		fs := Sandbox(ctx, cfg("", ""), true, false)
		if len(fs) != 1 || fs[0].Level != LevelOK || !strings.Contains(fs[0].Msg, "backlog workers, reviewers and verify are sandboxed") {
			t.Errorf("auto with bubblewrap: %+v", fs)
		}
	}
	fs := Sandbox(ctx, cfg("off", "on"), true, false)
	if len(fs) != 2 || fs[0].Level != LevelWarn || !strings.Contains(fs[0].Msg, "off (backlog.sandbox.mode: off)") ||
		!strings.Contains(fs[1].Msg, "wave agents") {
		t.Errorf("off, and wave agents on: %+v", fs)
	}
	// A machine without bubblewrap: auto warns, on is an error.
	t.Setenv("PATH", t.TempDir())
	fs = Sandbox(ctx, cfg("auto", ""), true, true)
	if len(fs) != 1 || fs[0].Level != LevelWarn || !strings.Contains(fs[0].Msg, "backlog verify (workers run in pods) will not be sandboxed: bwrap") ||
		fs[0].Fix == "" {
		t.Errorf("auto without bubblewrap: %+v", fs)
	}
	fs = Sandbox(ctx, cfg("on", ""), true, false)
	if len(fs) != 1 || fs[0].Level != LevelError || !strings.Contains(fs[0].Msg, "backlog.sandbox.mode: on, but bwrap") {
		t.Errorf("on without bubblewrap: %+v", fs)
	}
	if fs := Sandbox(ctx, cfg("", ""), false, false); len(fs) != 0 {
		t.Errorf("no backlog, no wave sandbox: %+v", fs)
	}
}
