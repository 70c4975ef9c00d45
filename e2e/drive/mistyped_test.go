package drive

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// A mistyped subcommand at any depth is refused with exit 2 and the
// command meant — never the group's help and exit 0, which told an agent
// that typed `signal prooof` it had printed its marker. The command line
// is run both as typed (the binary builds only the command named) and
// after a global flag (the whole tree).
func TestAMistypedSubcommandAtAnyDepthExitsTwoNamingTheMeantOne(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, e2etest.ImplAgent("A1"))
	for _, tc := range []struct {
		args       []string
		group, cmd string
	}{
		{[]string{"stauts"}, "wave-orchestrator", "status"},
		{[]string{"signal", "prooof"}, "wave-orchestrator signal", "proof"},
		{[]string{"coord", "pots"}, "wave-orchestrator coord", "post"},
		{[]string{"retry", "aply"}, "wave-orchestrator retry", "apply"},
		{[]string{"feedback", "ak"}, "wave-orchestrator feedback", "ask"},
		{[]string{"control", "stats"}, "wave-orchestrator control", "status"},
		{[]string{"backlog", "runn"}, "wave-orchestrator backlog", "run"},
		{[]string{"completion", "bsh"}, "wave-orchestrator completion", "bash"},
	} {
		typed := tc.args[len(tc.args)-1]
		want := "wave-orchestrator: unknown command \"" + typed + "\" for \"" + tc.group + "\"; did you mean \"" + tc.cmd +
			"\"? (" + tc.group + " --help lists its commands)\n"
		for _, res := range []e2etest.Result{runAt(t, r.Root, nil, tc.args...), r.Run(e2etest.Context(t), tc.args...)} {
			if res.Code != e2etest.ExitUsage || res.Stderr != want || res.Stdout != "" {
				t.Errorf("%v: exit %d, want 2\nstderr %q\nwant   %q\nstdout %q", tc.args, res.Code, res.Stderr, want, res.Stdout)
			}
		}
	}
	// A word nothing is near gets the list of what exists.
	res := runAt(t, r.Root, nil, "signal", "xyzzy")
	if want := "wave-orchestrator: unknown command \"xyzzy\" for \"wave-orchestrator signal\"; its commands are component, doc-closure, doc-delta, integration, proof\n"; res.Code != e2etest.ExitUsage || res.Stderr != want {
		t.Errorf("signal xyzzy: exit %d\n%q\nwant %q", res.Code, res.Stderr, want)
	}
	// A group alone still prints its help, as before.
	if res := runAt(t, r.Root, nil, "signal"); res.Code != 0 || !strings.Contains(res.Stdout, "Available Commands:") {
		t.Errorf("signal alone: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

// The top level's suggestion is printed as text, not with cobra's tab
// escaped into a literal \x09.
func TestTheTopLevelSuggestionHasNoEscapedTab(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	res := runAt(t, r.Root, nil, "lanuch")
	if res.Code != e2etest.ExitUsage || strings.Contains(res.Stderr, `\x09`) || !strings.Contains(res.Stderr, `did you mean "launch"?`) {
		t.Fatalf("lanuch: exit %d\n%q", res.Code, res.Stderr)
	}
}

// An unknown flag names the flag meant: launch's --wave (resume's) the
// range flags that run one wave, a typo the nearest flag. Nothing starts.
func TestAMistypedFlagNamesTheFlagMeant(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"launch", "--wave", "0"}, "unknown flag: --wave; --start-wave N --end-wave N runs wave N alone (resume --wave N picks a wave up again)"},
		{[]string{"launch", "--no-dashbord"}, "unknown flag: --no-dashbord; did you mean --no-dashboard?"},
		{[]string{"status", "--jsn"}, "unknown flag: --jsn; did you mean --json?"},
		{[]string{"backlog", "run", "--issue", "1"}, "unknown flag: --issue; did you mean --issues?"},
	} {
		res := runAt(t, r.Root, nil, tc.args...)
		if res.Code != e2etest.ExitUsage || res.Stderr != "wave-orchestrator: "+tc.want+"\n" {
			t.Errorf("%v: exit %d, want 2\nstderr %q\nwant   %q", tc.args, res.Code, res.Stderr, tc.want)
		}
	}
	e2etest.NothingStarted(t, r)
}

// The usage errors docs/exit-codes.md lists exit 2: a missing argument,
// a bad flag value, a wave that does not exist (for status and for
// submit's resume) and a lane the repository has nothing of.
func TestUsageErrorsExitTwoAsDocumented(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"answer"}, "answer: give the question's ID and the answer (TEXT, --file or stdin); `wave-orchestrator questions --pending` lists the IDs"},
		{[]string{"launch", "--timeout-minutes", "-1", "--no-dashboard"}, "flag --timeout-minutes: runtime.timeoutMinutes: must be >= 1, got -1"},
		{[]string{"status", "-w", "7"}, "lane main: no wave 7; the lane's waves are 0"},
		{[]string{"status", "-w", "7", "--json"}, "lane main: no wave 7; the lane's waves are 0"},
		// Refused before anything is queued, not as the queued run's why.
		{[]string{"submit", "--wave", "7"}, "submit --wave 7: lane main: no wave 7; the lane's waves are 0; " +
			"resume one of those, or submit a launch (without --wave) for a new wave"},
		// A mistyped lane is no empty lane.
		{[]string{"status", "--lane", "nope"}, "unknown lane \"nope\" (known lanes: main); declare it under `lanes: {nope: {}}` " +
			"in wave.config.yaml, or create its waves directory docs/nope/plans/waves"},
	} {
		res := r.Run(e2etest.Context(t), tc.args...)
		if res.Code != e2etest.ExitUsage || res.Stderr != "wave-orchestrator: "+tc.want+"\n" || res.Stdout != "" {
			t.Errorf("%v: exit %d, want 2\nstderr %q\nwant   %q\nstdout %q", tc.args, res.Code, res.Stderr, tc.want, res.Stdout)
		}
	}
	// A wave file that has not run is a wave: its status is no error.
	if res := r.Run(e2etest.Context(t), "status", "-w", "0"); res.Code != 0 || !strings.Contains(res.Stdout, "wave 0 has not run on this lane") {
		t.Errorf("status -w 0: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	e2etest.NothingStarted(t, r)
}

// Outside any wave-orchestrator repository, status, questions and usage
// say so and name init, instead of reporting an empty lane with exit 0.
func TestOutsideARepositoryStatusQuestionsAndUsageNameInit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, cmd := range []string{"status", "questions", "usage"} {
		res := runAt(t, dir, nil, cmd)
		want := "wave-orchestrator: " + dir + " is no wave-orchestrator repository (no wave.config.yaml, no docs/plans/waves, no .wave): `wave-orchestrator init` starts one here, or give the repository with --repo-root or $WAVE_REPO_ROOT\n"
		if res.Code != e2etest.ExitFailed || res.Stderr != want || res.Stdout != "" {
			t.Errorf("%s: exit %d, want 1\nstderr %q\nwant   %q\nstdout %q", cmd, res.Code, res.Stderr, want, res.Stdout)
		}
	}
	// After init the same commands work.
	if res := runAt(t, dir, nil, "init"); res.Code != 0 {
		t.Fatalf("init: exit %d\n%s", res.Code, res.Stderr)
	}
	for _, cmd := range []string{"status", "questions", "usage"} {
		if res := runAt(t, dir, nil, cmd); res.Code != 0 {
			t.Errorf("%s after init: exit %d\n%s", cmd, res.Code, res.Stderr)
		}
	}
}
