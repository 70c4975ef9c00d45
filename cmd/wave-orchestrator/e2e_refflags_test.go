package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// Every flag of the reference's launch line parses here as documented:
// honoured ones change what runs, ignored ones say so in exactly one
// line, and what cannot be honoured is refused by name.
func TestReferenceLaunchFlagsParseAsStated(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	r.writeWave(1, append([]agentSpec{implAgent("A1", "id: codex")}, closureAgents()...)...)
	ctx := ctxFor(t)
	dry := []string{"launch", "--dry-run", "--start-wave", "1", "--end-wave", "1"}
	resume := []string{"resume", "--wave", "0", "--reconcile-status"}

	// Ignored flags: on launch and resume, one `ignored:` line each.
	for _, x := range ignoredFlags {
		args := []string{"--" + x.name}
		if x.value {
			args = []string{"--" + x.name + "=tmux"}
		}
		for _, base := range [][]string{dry, resume} {
			t.Run(base[0]+" --"+x.name, func(t *testing.T) {
				res := r.run(ctx, append(slices.Clone(base), args...)...)
				var got []string
				for _, l := range lines(res.stderr) {
					if strings.HasPrefix(l, "ignored:") {
						got = append(got, l)
					}
				}
				if res.code != 0 || len(got) != 1 || !strings.HasPrefix(got[0], "ignored: --"+x.name+" (") {
					t.Fatalf("exit %d, ignored lines %q\n%s%s", res.code, got, res.stdout, res.stderr)
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
		{"another project", append(slices.Clone(dry), "--project", "elsewhere"), exitcode.Usage, "multi-project workspaces are unsupported"},
		{"bad terminal surface", append(slices.Clone(dry), "--terminal-surface", "iterm"), exitcode.Usage, "--terminal-surface"},
		{"bad codex sandbox", append(slices.Clone(dry), "--codex-sandbox", "open-door"), exitcode.Failed, "executors.codex.sandbox"},
		{"resume control state with a phase", []string{"resume", "-w", "0", "--resume-control-state", "--phase", "implementation"}, exitcode.Usage, "--phase"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			res := r.run(ctx, tc.args...)
			if res.code != tc.code || !strings.Contains(res.stderr, tc.want) {
				t.Fatalf("exit %d (want %d), stderr lacks %q:\n%s", res.code, tc.code, tc.want, res.stderr)
			}
		})
	}

	t.Run("default project passes", func(t *testing.T) {
		if res := r.run(ctx, append(slices.Clone(dry), "--project", filepath.Base(r.root))...); res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
	})

	t.Run("codex sandbox and rate limits reach the codex run", func(t *testing.T) {
		res := r.run(ctx, append(slices.Clone(dry), "--codex-sandbox", "workspace-write", "--agent-rate-limit-retries", "5",
			"--agent-rate-limit-base-delay-seconds", "3", "--agent-rate-limit-max-delay-seconds", "9")...)
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		var spec struct {
			Argv      []string `json:"argv"`
			RateLimit struct {
				Retries, BaseDelayMs, MaxDelayMs int
			} `json:"rateLimit"`
		}
		readJSONFile(t, filepath.Join(r.layout().DryRun().RunDir(1, "A1", 1), "launch.json"), &spec)
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
		res := r.run(ctx, "launch", "--no-dashboard", "--end-wave", "0", "--state-file", stateFile)
		if res.code != 0 {
			t.Fatalf("launch: exit %d\n%s", res.code, res.stderr)
		}
		var rec submittedRun
		readJSONFile(t, stateFile, &rec)
		if rec.State != runCompleted || rec.ExitCode == nil || *rec.ExitCode != 0 || rec.Pid == 0 || rec.Lane != "main" {
			t.Fatalf("state file: %+v", rec)
		}
	})

	t.Run("resume control state continues at the first wave not completed", func(t *testing.T) {
		res := r.run(ctx, "launch", "--dry-run", "--resume-control-state")
		if res.code != 0 || strings.Contains(res.stdout, "wave 0 ") || !strings.Contains(res.stdout, "wave 1 A1") {
			t.Fatalf("exit %d; want only wave 1 previewed:\n%s%s", res.code, res.stdout, res.stderr)
		}
	})

	t.Run("reconcile status prints the rebuilt state and takes no lock", func(t *testing.T) {
		res := r.run(ctx, "launch", "--reconcile-status")
		if res.code != 0 || !strings.Contains(res.stdout, "reconcile: lane main lock is free") {
			t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
		st := r.run(ctx, "status", "--json")
		var lane struct {
			Launcher *struct {
				Pid int `json:"pid"`
			} `json:"launcher"`
		}
		if err := json.Unmarshal([]byte(st.stdout), &lane); err != nil || lane.Launcher == nil {
			t.Fatalf("status: %v %s", err, st.stdout)
		}
		// The lock still names the foreground launch, not the reconcile.
		var info struct{ Pid int }
		readJSONFile(t, r.layout().LockPath(), &info)
		var rec submittedRun
		readJSONFile(t, stateFile, &rec)
		if info.Pid != rec.Pid {
			t.Fatalf("lock names pid %d, the last launcher was %d: %s", info.Pid, rec.Pid, fmt.Sprint(info))
		}
	})
}
