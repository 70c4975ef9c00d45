// Package localagent is the built-in simulated agent (`wave-orchestrator
// local`) used for demos and tests: it reads the prompt executor.Prompt
// wrote, writes the files its role owns, and prints the markers the gates
// need, with knobs to make it slow, fail, or report a bad verdict.
package localagent

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/roles"
)

// options are the command-line knobs.
type options struct {
	promptFile   string
	repoRoot     string
	delay        time.Duration
	exitCode     int
	failAttempts int
	verdict      string
	security     string
	ask          string
}

var verdicts = []string{"PASS", "CONCERNS", "BLOCKED", "HOLD", "FAIL"}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.promptFile, "prompt-file", "", "prompt file written by the launcher (required)")
	fs.StringVar(&o.repoRoot, "repo-root", "", "repository root deliverables are relative to (default: current directory)")
	fs.DurationVar(&o.delay, "delay", 0, "simulated work time, e.g. 2s")
	fs.IntVar(&o.exitCode, "exit-code", 0, "exit with this code after doing everything")
	fs.IntVar(&o.failAttempts, "fail-attempts", 0, "fail without markers while WAVE_ATTEMPT <= N")
	fs.StringVar(&o.verdict, "verdict", "PASS", "cont-QA verdict: PASS|CONCERNS|BLOCKED|HOLD|FAIL")
	fs.StringVar(&o.security, "security", "clear", "security review state: clear|concerns|blocked")
	fs.StringVar(&o.ask, "ask", "", "until a run is started with answers ($WAVE_ANSWERED), ask a person this blocking question (`ask`) and finish without markers")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.promptFile == "":
		return o, errors.New("--prompt-file is required")
	case o.delay < 0:
		return o, fmt.Errorf("--delay %v: must not be negative", o.delay)
	}
	o.verdict = strings.ToUpper(strings.TrimSpace(o.verdict))
	if !slices.Contains(verdicts, o.verdict) {
		return o, fmt.Errorf("--verdict %q: want one of %v", o.verdict, verdicts)
	}
	o.security = strings.ToLower(strings.TrimSpace(o.security))
	if !slices.Contains([]string{"clear", "concerns", "blocked"}, o.security) {
		return o, fmt.Errorf("--security %q: want clear, concerns or blocked", o.security)
	}
	return o, nil
}

// Main runs the local agent and returns its exit code: 2 for bad usage,
// 1 for a simulated or real failure, else --exit-code.
func Main(args []string, stdout io.Writer, getenv func(string) string) int {
	o, err := parseFlags(args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stdout, "local agent: %v\n", err)
		return 2
	}
	raw, err := os.ReadFile(o.promptFile)
	if err != nil {
		fmt.Fprintf(stdout, "local agent: %v\n", err)
		return 1
	}
	root := o.repoRoot
	if root == "" {
		if root, err = os.Getwd(); err != nil {
			fmt.Fprintf(stdout, "local agent: %v\n", err)
			return 1
		}
	}
	t := parsePrompt(string(raw))
	if t.facts["agent"] == "" {
		fmt.Fprintf(stdout, "local agent: %s: no agent id in the %q section; was it written by the launcher?\n", o.promptFile, "Run facts:")
		return 1
	}

	fmt.Fprintln(stdout, "[wave-phase] coding")
	time.Sleep(o.delay)
	attempt, err := strconv.Atoi(cmp(getenv("WAVE_ATTEMPT"), "1"))
	if err != nil {
		fmt.Fprintf(stdout, "local agent: WAVE_ATTEMPT %q: not a number\n", getenv("WAVE_ATTEMPT"))
		return 1
	}
	if attempt <= o.failAttempts {
		fmt.Fprintf(stdout, "[local-agent] simulated failure: attempt %d of agent %s (--fail-attempts %d)\n", attempt, t.facts["agent"], o.failAttempts)
		return 1
	}
	if o.ask != "" {
		answered, err := askPerson(root, o.ask, stdout, getenv)
		if err != nil {
			fmt.Fprintf(stdout, "local agent: %v\n", err)
			return 1
		}
		if !answered {
			return 0
		}
	}
	if err := writeFiles(root, t, o, stdout); err != nil {
		fmt.Fprintf(stdout, "local agent: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "[wave-phase] finalizing")
	for _, m := range markers(t, o) {
		fmt.Fprintln(stdout, m)
	}
	fmt.Fprintf(stdout, "[local-agent] done: agent %s\n", t.facts["agent"])
	return o.exitCode
}

// markers are the final marker lines the agent's role needs
// (docs/wave-files.md, "Markers").
func markers(t task, o options) []string {
	var out []string
	switch t.facts["role"] {
	case roles.RoleContQa:
		g := gateState(o.verdict)
		out = append(out,
			"[wave-verdict] "+strings.ToLower(o.verdict),
			fmt.Sprintf("[wave-gate] architecture=%s integration=%s durability=%s live=%s docs=%s", g, g, g, g, g))
	case roles.RoleContEval:
		out = append(out, evalMarker(t))
	case roles.RoleIntegration:
		out = append(out, "[wave-integration] state=ready-for-doc-closure claims=0 conflicts=0 blockers=0")
	case roles.RoleDocumentation:
		out = append(out, "[wave-doc-closure] state=no-change")
	case roles.RoleDesign:
		out = append(out, "[wave-design] state=ready-for-implementation decisions=1 assumptions=1 open_questions=0")
	case roles.RoleSecurity:
		out = append(out, fmt.Sprintf("[wave-security] state=%s findings=%d approvals=0", o.security, findings(o.security)))
	}
	if t.facts["implementation-owning"] == "yes" {
		c := t.contract
		out = append(out, fmt.Sprintf("[wave-proof] completion=%s durability=%s proof=%s state=met",
			cmp(c["completion"], "contract"), cmp(c["durability"], "none"), cmp(c["proof"], "unit")))
		doc := c["doc-impact"]
		if doc == "" {
			doc = map[bool]string{true: "owned", false: "none"}[len(t.deliverables) > 0]
		}
		out = append(out, "[wave-doc-delta] state="+doc)
		for _, comp := range t.components {
			out = append(out, fmt.Sprintf("[wave-component] component=%s level=%s state=met", comp.id, cmp(comp.level, "repo-landed")))
		}
	}
	return out
}

func gateState(verdict string) string {
	switch verdict {
	case "PASS":
		return "pass"
	case "CONCERNS":
		return "concerns"
	}
	return "blocked"
}

func findings(state string) int {
	if state == "clear" {
		return 0
	}
	return 1
}

func evalMarker(t task) string {
	var ids, bench []string
	for _, e := range t.evalTargets {
		ids = append(ids, strings.ToLower(e.id))
		for _, b := range e.benchmarks {
			if b = strings.ToLower(strings.TrimSpace(b)); b != "" && !slices.Contains(bench, b) {
				bench = append(bench, b)
			}
		}
	}
	slices.Sort(ids)
	slices.Sort(bench)
	m := fmt.Sprintf("[wave-eval] state=satisfied targets=%d benchmarks=%d regressions=0", len(ids), len(bench))
	if len(ids) > 0 {
		m += " target_ids=" + strings.Join(ids, ",")
	}
	if len(bench) > 0 {
		m += " benchmark_ids=" + strings.Join(bench, ",")
	}
	return m
}

// safePath resolves a repo-relative path, refusing absolute paths and
// paths that leave the repository.
func safePath(root, rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) {
		return "", fmt.Errorf("unsafe path %q: want a repo-relative path", rel)
	}
	abs := filepath.Join(root, rel)
	if r, err := filepath.Rel(root, abs); err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("unsafe path %q: leaves the repository", rel)
	}
	return abs, nil
}

func cmp(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
