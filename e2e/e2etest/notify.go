package e2etest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// HookSecret is the secret part of the fake chat webhook's URL: it must
// appear in no log, record or output.
const HookSecret = "T0SECRET/B0SECRET/xoxSECRETxox"

// HookEnv names the variable the test webhook's URL is passed in.
const HookEnv = "NOTIFY_TEST_HOOK_URL"

// HookReceiver is a chat incoming webhook: it keeps every POST it gets
// (status answers with that code: 200 unless set).
type HookReceiver struct {
	Srv    *httptest.Server
	Mu     sync.Mutex
	Bodies []map[string]any
	Status int
}

// URL is the hook address, the secret in its path as a Slack-style hook has it.
func (h *HookReceiver) URL() string { return h.Srv.URL + "/services/" + HookSecret }

// Count is how many POSTs carried event (and, when id is set, that id).
func (h *HookReceiver) Count(event, id string) int {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	n := 0
	for _, b := range h.Bodies {
		if b["event"] == event && (id == "" || b["id"] == id) {
			n++
		}
	}
	return n
}

// WithNotify writes the test config with a notify section.
func (r *Repo) WithNotify(sinks string) {
	r.Write("wave.config.yaml", Config+"notify:\n"+sinks)
}

// AskQuestion appends a question-asked event to the lane's log, as the
// launcher does when an agent asks (docs/state.md), and returns its id.
func (r *Repo) AskQuestion(wave int, id, agent, text string) string {
	r.T.Helper()
	ev := state.NewEvent("main", wave, "question", id, "asked", 1,
		map[string]any{"agentId": agent, "attempt": 1, "text": text, "blocking": true})
	if err := state.Append(r.Layout().EventsPath(), ev); err != nil {
		r.T.Fatal(err)
	}
	return "lane-main-" + ev.ID
}

// WaitFollowing waits until a launcher's notifier follows the lane log.
func (r *Repo) WaitFollowing(n int) {
	r.T.Helper()
	WaitFor(r.T, fmt.Sprintf("notifier start #%d", n), 30*time.Second, func() bool {
		evs, _, _ := state.ReadEvents(r.Layout().EventsPath())
		seen := 0
		for _, ev := range evs {
			if ev.EntityType == state.EntityNotification && ev.Action == state.NotifyFollowing {
				seen++
			}
		}
		return seen >= n
	})
}

// LaunchEnv is the command for a wave launch with env added.
func (r *Repo) LaunchEnv(ctx context.Context, env ...string) *exec.Cmd {
	cmd := r.Command(ctx, "launch", "--lane", "main", "--no-dashboard")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// WithNotify points the backlog's notify sink at hook; it returns the env to run with.
func (r *BacklogRepo) WithNotify(hook *HookReceiver) []string {
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		r.T.Fatal(err)
	}
	r.Write("wave.config.yaml", string(cfg)+fmt.Sprintf("notify:\n  - kind: webhook\n    urlEnv: %s\n", HookEnv))
	return append(r.Env(), HookEnv+"="+hook.URL())
}

// RunEvents reads the lane's only backlog run's log.
func (r *BacklogRepo) RunEvents() []backlog.Event {
	r.T.Helper()
	dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "events.jsonl"))
	if len(dirs) != 1 {
		r.T.Fatalf("%d backlog runs, want 1", len(dirs))
	}
	evs, _, err := jsonfile.ReadLines[backlog.Event](dirs[0])
	if err != nil {
		r.T.Fatal(err)
	}
	return evs
}

// RunID is the id of the repo's one backlog run.
func (r *BacklogRepo) RunID() string {
	r.T.Helper()
	for _, ev := range r.RunEvents() {
		if ev.Kind == backlog.EvRunStarted && ev.Run != nil {
			return ev.Run.ID
		}
	}
	r.T.Fatal("no run_started event")
	return ""
}
