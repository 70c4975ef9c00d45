package drive

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// referenceIgnoredFlags are the reference's launch flags that have no
// effect here (cmd/wave-orchestrator/refflags.go says why for each);
// value says whether the flag takes one.
var referenceIgnoredFlags = []struct {
	name  string
	value bool
}{
	{"no-telemetry", false}, {"no-context7", false}, {"terminal-surface", true},
	{"cleanup-sessions", false}, {"keep-terminals", false}, {"orchestrator-id", true},
	{"orchestrator-board", true}, {"no-orchestrator-board", false}, {"coordination-note", true},
}

// Every flag of the reference's launch line parses here as documented:
// honoured ones change what runs, ignored ones say so in exactly one
// line, and what cannot be honoured is refused by name.
func TestReferenceLaunchFlagsParseAsStated(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	r.WriteWave(1, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: codex")}, e2etest.ClosureAgents()...)...)
	ctx := e2etest.Context(t)
	dry := []string{"launch", "--dry-run", "--start-wave", "1", "--end-wave", "1"}
	resume := []string{"resume", "--wave", "0", "--reconcile-status"}

	// Ignored flags: on launch and resume, one `ignored:` line each.
	for _, x := range referenceIgnoredFlags {
		args := []string{"--" + x.name}
		if x.value {
			args = []string{"--" + x.name + "=tmux"}
		}
		for _, base := range [][]string{dry, resume} {
			t.Run(base[0]+" --"+x.name, func(t *testing.T) {
				res := r.Run(ctx, append(slices.Clone(base), args...)...)
				var got []string
				for _, l := range e2etest.Lines(res.Stderr) {
					if strings.HasPrefix(l, "ignored:") {
						got = append(got, l)
					}
				}
				if res.Code != 0 || len(got) != 1 || !strings.HasPrefix(got[0], "ignored: --"+x.name+" (") {
					t.Fatalf("exit %d, ignored lines %q\n%s%s", res.Code, got, res.Stdout, res.Stderr)
				}
			})
		}
	}

	refused := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"another project", append(slices.Clone(dry), "--project", "elsewhere"), e2etest.ExitUsage, "multi-project workspaces are unsupported"},
		{"bad terminal surface", append(slices.Clone(dry), "--terminal-surface", "iterm"), e2etest.ExitUsage, "--terminal-surface"},
		{"bad codex sandbox", append(slices.Clone(dry), "--codex-sandbox", "open-door"), e2etest.ExitUsage, "executors.codex.sandbox"}, // a bad flag value
		{"resume control state with a phase", []string{"resume", "-w", "0", "--resume-control-state", "--phase", "implementation"}, e2etest.ExitUsage, "--phase"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Run(ctx, tc.args...)
			if res.Code != tc.code || !strings.Contains(res.Stderr, tc.want) {
				t.Fatalf("exit %d (want %d), stderr lacks %q:\n%s", res.Code, tc.code, tc.want, res.Stderr)
			}
		})
	}

	t.Run("default project passes", func(t *testing.T) {
		if res := r.Run(ctx, append(slices.Clone(dry), "--project", filepath.Base(r.Root))...); res.Code != 0 {
			t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
		}
	})

	t.Run("codex sandbox and rate limits reach the codex run", func(t *testing.T) {
		res := r.Run(ctx, append(slices.Clone(dry), "--codex-sandbox", "workspace-write", "--agent-rate-limit-retries", "5",
			"--agent-rate-limit-base-delay-seconds", "3", "--agent-rate-limit-max-delay-seconds", "9")...)
		if res.Code != 0 {
			t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
		}
		var spec struct {
			Argv      []string `json:"argv"`
			RateLimit struct {
				Retries, BaseDelayMs, MaxDelayMs int
			} `json:"rateLimit"`
		}
		e2etest.ReadJSONFile(t, filepath.Join(r.Layout().DryRun().RunDir(1, "A1", 1), "launch.json"), &spec)
		argv := strings.Join(spec.Argv, " ")
		if !strings.Contains(argv, "--sandbox workspace-write") || strings.Contains(argv, "danger-full-access") {
			t.Errorf("codex argv does not use the sandbox given: %s", argv)
		}
		if rl := spec.RateLimit; rl.Retries != 5 || rl.BaseDelayMs != 3000 || rl.MaxDelayMs != 9000 {
			t.Errorf("rate limit %+v, want 5 retries, 3 s base, 9 s max", rl)
		}
	})

	stateFile := filepath.Join(t.TempDir(), "run.json")
	t.Run("state file records a foreground run", func(t *testing.T) {
		res := r.Run(ctx, "launch", "--no-dashboard", "--end-wave", "0", "--state-file", stateFile)
		if res.Code != 0 {
			t.Fatalf("launch: exit %d\n%s", res.Code, res.Stderr)
		}
		var rec e2etest.SubmittedRun
		e2etest.ReadJSONFile(t, stateFile, &rec)
		if rec.State != e2etest.RunCompleted || rec.ExitCode == nil || *rec.ExitCode != 0 || rec.Pid == 0 || rec.Lane != "main" {
			t.Fatalf("state file: %+v", rec)
		}
	})

	t.Run("resume control state continues at the first wave not completed", func(t *testing.T) {
		res := r.Run(ctx, "launch", "--dry-run", "--resume-control-state")
		if res.Code != 0 || strings.Contains(res.Stdout, "wave 0 ") || !strings.Contains(res.Stdout, "wave 1 A1") {
			t.Fatalf("exit %d; want only wave 1 previewed:\n%s%s", res.Code, res.Stdout, res.Stderr)
		}
	})

	t.Run("reconcile status prints the rebuilt state and takes no lock", func(t *testing.T) {
		res := r.Run(ctx, "launch", "--reconcile-status")
		if res.Code != 0 || !strings.Contains(res.Stdout, "reconcile: lane main lock is free") {
			t.Fatalf("exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
		}
		st := r.Run(ctx, "status", "--json")
		var lane struct {
			Launcher *struct {
				Pid int `json:"pid"`
			} `json:"launcher"`
		}
		if err := json.Unmarshal([]byte(st.Stdout), &lane); err != nil || lane.Launcher == nil {
			t.Fatalf("status: %v %s", err, st.Stdout)
		}
		// The lock still names the foreground launch, not the reconcile.
		var info struct{ Pid int }
		e2etest.ReadJSONFile(t, r.Layout().LockPath(), &info)
		var rec e2etest.SubmittedRun
		e2etest.ReadJSONFile(t, stateFile, &rec)
		if info.Pid != rec.Pid {
			t.Fatalf("lock names pid %d, the last launcher was %d: %s", info.Pid, rec.Pid, fmt.Sprint(info))
		}
	})
}
