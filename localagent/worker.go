package localagent

import (
	"context"
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

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// directivePrefix starts a line of an issue that tells the simulated
// worker what to do, the way a real issue tells a real agent
// (docs/local-agent.md is the user's reference):
//
//	local-agent: commit=src/x.go result=needs-input question="Which API?"
//
// Keys: commit=PATH|none (file to write and commit; default
// backlog-work/issue-<n>.md), result=done|needs-input|blocked,
// question=..., detail=..., exit=N, fail-attempts=N (exit 1 while
// WAVE_ATTEMPT <= N), dirty=PATH (leave an uncommitted file first),
// hang (never finish), delay=DURATION, wait=PATH (go on only once PATH
// exists: a test's gate; waitForGate), review=pass|fail (what the simulated reviewer
// says of the change; unfixed: fail while the change lacks the fix file),
// fix=PATH (the file a rework round commits; default
// backlog-work/issue-<n>-fix.md), plant=hooks,fsmonitor,push and
// plant-log=PATH (act hostile once the work is committed, before hanging
// with hang: plant.go).
// Sent back for rework (the prompt's
// "## Rework requested" section), the worker commits the fix file on top
// of its earlier work, so a verify or a reviewer that looks for it passes.
// usage-limit=claude|claude-json|claude-stream-json|codex|api-key|opencode
// prints that CLI's usage-limit message and exits 1 while WAVE_ATTEMPT <=
// limit-attempts (default 1), the reset reset-in (default 3s) from now;
// busy-attempts=N keeps printing without changing anything while
// WAVE_ATTEMPT <= N.
// A needs-input issue whose comments hold an answer (`backlog answer`),
// or whose prompt has the "## Answers from people" block, is worked as
// done: the simulated person answered.
const directivePrefix = "local-agent:"

// directiveKeys are the keys a directive line may set (docs/local-agent.md
// lists each).
var directiveKeys = []string{"commit", "result", "question", "detail", "exit", "fail-attempts", "delay", "hang",
	"dirty", "wait", "review", "fix", "usage-limit", "limit-attempts", "reset-in", "busy-attempts", "plant", "plant-log"}

type workerKnobs struct {
	commit, result, question, detail, dirty, review, wait string
	fix, plant, plantLog                                  string
	exit, failAttempts                                    int
	hang                                                  bool
	delay                                                 time.Duration
	// usageLimit is the CLI whose usage-limit message the worker prints
	// (limits.go) while its attempt <= limitAttempts, naming a reset
	// resetIn from now; busyAttempts: it prints for ever, changing
	// nothing, while its attempt <= busyAttempts.
	usageLimit                  string
	limitAttempts, busyAttempts int
	resetIn                     time.Duration
}

// WorkerMain runs the simulated backlog worker in its worktree (the
// current directory) and returns its exit code.
func WorkerMain(args []string, stdout io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("local-worker", flag.ContinueOnError)
	fs.SetOutput(stdout)
	promptFile := fs.String("prompt-file", "", "prompt file written by the supervisor (required)")
	delay := fs.Duration("delay", 0, "simulated work time")
	review := fs.Bool("review", false, "review a change instead: print a [wave-verdict] (fail when the issue says review=fail)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	raw, err := os.ReadFile(*promptFile)
	if err != nil {
		fmt.Fprintf(stdout, "local worker: %v\n", err)
		return 1
	}
	k, err := parseKnobs(string(raw))
	if err != nil {
		fmt.Fprintf(stdout, "local worker: %v\n", err)
		return 2
	}
	if k.delay == 0 {
		k.delay = *delay
	}
	issue, _ := strconv.Atoi(getenv("WAVE_ISSUE_NUMBER"))
	attempt, _ := strconv.Atoi(getenv("WAVE_ATTEMPT"))
	wt, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stdout, "local worker: %v\n", err)
		return 1
	}
	if *review {
		fix := orDefault(k.fix, fmt.Sprintf("backlog-work/issue-%d-fix.md", issue))
		if p, err := safePath(wt, fix); k.review == "unfixed" && (err != nil || !exists(p)) {
			fmt.Fprintf(stdout, "[wave-verdict] fail detail=the change to #%d lacks %s\n", issue, fix)
			return 0
		}
		if k.review == "fail" {
			fmt.Fprintf(stdout, "[wave-verdict] fail detail=the issue asked the simulated reviewer to fail #%d\n", issue)
			return 0
		}
		fmt.Fprintf(stdout, "[wave-verdict] pass detail=simulated review of #%d\n", issue)
		return 0
	}
	fmt.Fprintf(stdout, "[local-worker] issue #%d attempt %d in %s\n", issue, attempt, wt)
	return runWorker(k, string(raw), issue, attempt, wt, getenv("WAVE_TARGET_BRANCH"), stdout)
}

func runWorker(k workerKnobs, prompt string, issue, attempt int, wt, target string, out io.Writer) int {
	ctx := context.Background()
	if k.dirty != "" {
		if p, err := safePath(wt, k.dirty); err == nil {
			if _, err := os.Stat(p); err == nil {
				fmt.Fprintf(out, "[local-worker] found earlier uncommitted work in %s\n", k.dirty)
			} else if err := writeFile(p, fmt.Sprintf("work in progress on #%d (attempt %d)\n", issue, attempt)); err != nil {
				fmt.Fprintf(out, "local worker: %v\n", err)
				return 1
			}
		}
	}
	time.Sleep(k.delay)
	if k.wait != "" {
		waitForGate(k.wait, wt)
	}
	if k.hang {
		if k.plant != "" { // a hostile worker at work: commit, plant, work on
			if code := commitWork(ctx, k, issue, attempt, wt, out); code != 0 {
				return code
			}
			if err := plant(ctx, k.plant, k.plantLog, wt, target, out); err != nil {
				fmt.Fprintf(out, "local worker: %v\n", err)
				return 1
			}
		}
		fmt.Fprintln(out, "[local-worker] hanging (local-agent: hang)")
		select {}
	}
	if k.usageLimit != "" && attempt <= max(k.limitAttempts, 1) {
		printUsageLimit(out, k.usageLimit, time.Now().Add(resetIn(k.resetIn)))
		return 1
	}
	if attempt <= k.busyAttempts {
		busy(out, issue)
	}
	if k.result == "needs-input" && (strings.Contains(prompt, backlog.AnswerHeading) || strings.Contains(prompt, backlog.AnswersSection)) {
		// A person answered the question (in the issue's comments): go on.
		fmt.Fprintln(out, "[local-worker] the question is answered; doing the work")
		k.result = ""
	}
	if attempt <= k.failAttempts {
		fmt.Fprintf(out, "[local-worker] simulated failure on attempt %d (fail-attempts=%d)\n", attempt, k.failAttempts)
		return 1
	}
	if strings.Contains(prompt, "## Merge the wave branch first") && target != "" {
		if err := gitops.MergeFavouring(ctx, wt, target, "ours", fmt.Sprintf("Merge %s into the worker branch of #%d", target, issue)); err != nil {
			fmt.Fprintf(out, "local worker: merge %s: %v\n", target, err)
			return 1
		}
		fmt.Fprintf(out, "[local-worker] merged %s, conflicts resolved\n", target)
	} else if strings.Contains(prompt, reworkHeading) {
		if code := commitFix(ctx, k, issue, attempt, wt, out); code != 0 {
			return code
		}
	} else if k.result == "" || k.result == "done" {
		if code := commitWork(ctx, k, issue, attempt, wt, out); code != 0 {
			return code
		}
	}
	if k.plant != "" {
		if err := plant(ctx, k.plant, k.plantLog, wt, target, out); err != nil {
			fmt.Fprintf(out, "local worker: %v\n", err)
			return 1
		}
	}
	r := backlog.Result{State: backlog.ResultDone, Detail: orDefault(k.detail, fmt.Sprintf("simulated work for #%d", issue))}
	switch k.result {
	case "needs-input":
		r = backlog.Result{State: backlog.ResultNeedsInput, Question: orDefault(k.question, "What should this do?")}
	case "blocked":
		r = backlog.Result{State: backlog.ResultBlocked, Detail: orDefault(k.detail, "blocked by something outside the issue")}
	}
	fmt.Fprintln(out, backlog.FormatResult(r))
	return k.exit
}

func commitWork(ctx context.Context, k workerKnobs, issue, attempt int, wt string, out io.Writer) int {
	if k.commit == "none" {
		return 0
	}
	rel := orDefault(k.commit, fmt.Sprintf("backlog-work/issue-%d.md", issue))
	p, err := safePath(wt, rel)
	if err != nil {
		fmt.Fprintf(out, "local worker: %v\n", err)
		return 1
	}
	body := fmt.Sprintf("Work for issue #%d (attempt %d) by the local worker.\n", issue, attempt)
	if err := writeFile(p, body); err != nil {
		fmt.Fprintf(out, "local worker: %v\n", err)
		return 1
	}
	if err := gitops.CommitAll(ctx, wt, fmt.Sprintf("Work on #%d", issue)); err != nil {
		fmt.Fprintf(out, "local worker: commit: %v\n", err)
		return 1
	}
	fmt.Fprintf(out, "[local-worker] committed %s\n", rel)
	return 0
}

// reworkHeading starts the section of a prompt sent back with feedback.
const reworkHeading = "## Rework requested"

// commitFix answers a rework round: the fix file, committed on top of the
// earlier work.
func commitFix(ctx context.Context, k workerKnobs, issue, attempt int, wt string, out io.Writer) int {
	rel := orDefault(k.fix, fmt.Sprintf("backlog-work/issue-%d-fix.md", issue))
	p, err := safePath(wt, rel)
	if err != nil {
		fmt.Fprintf(out, "local worker: %v\n", err)
		return 1
	}
	if err := writeFile(p, fmt.Sprintf("Fix for issue #%d (attempt %d) after the rework feedback.\n", issue, attempt)); err != nil {
		fmt.Fprintf(out, "local worker: %v\n", err)
		return 1
	}
	if err := gitops.CommitAll(ctx, wt, fmt.Sprintf("Address the feedback on #%d", issue)); err != nil {
		fmt.Fprintf(out, "local worker: commit: %v\n", err)
		return 1
	}
	fmt.Fprintf(out, "[local-worker] reworked: committed %s\n", rel)
	return 0
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func writeFile(p, body string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(body), 0o644)
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// parseKnobs reads every directive line of the prompt; later keys win.
func parseKnobs(prompt string) (workerKnobs, error) {
	var k workerKnobs
	for _, line := range strings.Split(prompt, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), directivePrefix)
		if !ok {
			continue
		}
		kv, err := backlog.ParseFields(rest)
		if err != nil {
			return k, fmt.Errorf("%s%s: %w", directivePrefix, rest, err)
		}
		for key, v := range kv {
			if err := k.set(key, v); err != nil {
				return k, err
			}
		}
	}
	return k, nil
}

func (k *workerKnobs) set(key, v string) error {
	var err error
	switch key {
	case "commit":
		k.commit = v
	case "result":
		if v != "done" && v != "needs-input" && v != "blocked" {
			return fmt.Errorf("result=%q: want done, needs-input or blocked", v)
		}
		k.result = v
	case "question":
		k.question = v
	case "detail":
		k.detail = v
	case "dirty":
		k.dirty = v
	case "fix":
		k.fix = v
	case "plant":
		k.plant = v
	case "plant-log":
		k.plantLog = v
	case "review":
		if v != "pass" && v != "fail" && v != "unfixed" {
			return fmt.Errorf("review=%q: want pass, fail or unfixed", v)
		}
		k.review = v
	case "exit":
		k.exit, err = strconv.Atoi(v)
	case "fail-attempts":
		k.failAttempts, err = strconv.Atoi(v)
	case "hang":
		k.hang = true
	case "wait":
		k.wait = v
	case "delay":
		k.delay, err = time.ParseDuration(v)
	case "usage-limit":
		if !slices.Contains(limitKinds, v) {
			return fmt.Errorf("usage-limit=%q: want one of %s", v, strings.Join(limitKinds, ", "))
		}
		k.usageLimit = v
	case "limit-attempts":
		k.limitAttempts, err = strconv.Atoi(v)
	case "reset-in":
		k.resetIn, err = time.ParseDuration(v)
	case "busy-attempts":
		k.busyAttempts, err = strconv.Atoi(v)
	default:
		return fmt.Errorf("unknown local-agent key %q: want one of %s (docs/local-agent.md)", key, strings.Join(directiveKeys, ", "))
	}
	if err != nil {
		return fmt.Errorf("%s=%q: %w", key, v, err)
	}
	return nil
}

// waitForGate waits until gate exists, as an agent at work: a scratch
// file in its checkout changes every second, so a wait longer than the
// no-progress limit is not taken for a worker that is stuck (a test's
// gate holds a worker at work, not a stalled one). The file is gone
// before the worker goes on.
func waitForGate(gate, wt string) {
	scratch := filepath.Join(wt, ".local-agent-at-work")
	defer os.Remove(scratch)
	last := time.Time{}
	for beat := 0; ; {
		if _, err := os.Stat(gate); err == nil {
			return
		}
		if time.Since(last) >= time.Second {
			beat++
			_ = os.WriteFile(scratch, []byte(strconv.Itoa(beat)+"\n"), 0o644)
			last = time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
}
