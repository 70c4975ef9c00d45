package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Where a pod finds what its run brought beyond launch.json (the
// container's env names the directories, so a test node can map them).
const (
	// envInDir is the run's Secret's directory: launch.json, and the run
	// directory's files (runFileKey) for a run without a shared disk.
	envInDir = "WAVE_IN_DIR"
	// envGitCredentials is the git credentials Secret's directory
	// (username, password).
	envGitCredentials = "WAVE_GIT_CREDENTIALS"
	// gitCredentialsDir is where that Secret is mounted.
	gitCredentialsDir = "/wave/git-credentials"
	// runFilePrefix starts the Secret keys that carry run-dir files.
	runFilePrefix = "file."
)

// maxLogTail is how much of agent.log the result ref keeps.
const maxLogTail = 256 << 10

// podCheckout is runtime.CheckoutKeeper in a pod: the runner's clone of
// origin, kept through gitops.
type podCheckout struct {
	p     *runtime.Payload
	co    *runtime.Checkout
	env   []string // git's credential helper, when the Secret is mounted
	inDir string

	repo    *gitops.Repo
	lease   string // origin's sha of the branch when the run began ("" none)
	base    string // the base's sha the run began from
	state   string // last HEAD + status, for ChangedAt
	facts   runtime.GitFacts
	nowFunc func() time.Time
}

var _ runtime.CheckoutKeeper = (*podCheckout)(nil)

// NewCheckout is the runtime.CheckoutFunc of `agent-run`: the pod's
// runner owns the checkout of a payload with one.
func NewCheckout(p *runtime.Payload) (runtime.CheckoutKeeper, error) {
	if p.Checkout == nil {
		return nil, nil
	}
	c := &podCheckout{p: p, co: p.Checkout, inDir: os.Getenv(envInDir), nowFunc: time.Now}
	if dir := os.Getenv(envGitCredentials); dir != "" {
		env, err := gitops.CredentialEnv(dir)
		if err != nil {
			return nil, err
		}
		c.env = env
	}
	return c, nil
}

// Prepare writes the run directory's files the Secret carried, clones
// origin's base, starts the worker branch and restores the snapshot to
// continue from.
func (c *podCheckout) Prepare(ctx context.Context) error {
	if err := c.writeRunFiles(); err != nil {
		return err
	}
	repo, err := gitops.Clone(ctx, c.co.Origin, c.co.Dir, gitops.CloneOptions{
		Options: gitops.Options{Env: c.env, Timeout: gitops.DefaultTimeout}, Branch: c.co.Base, Depth: 1})
	if err != nil {
		return err
	}
	c.repo = repo
	if c.base, err = repo.RevParse(ctx, "refs/remotes/"+repo.Remote+"/"+c.co.Base); err != nil {
		return fmt.Errorf("base %s: %w", c.co.Base, err)
	}
	if c.co.PushRef != "" {
		c.lease, err = repo.StartCandidate(ctx, c.co.Branch, c.co.PushRef, c.co.Base)
	} else {
		c.lease, err = repo.StartBranch(ctx, c.co.Branch, c.co.Base)
	}
	if err != nil {
		return err
	}
	if c.co.RestoreRef != "" {
		if _, err := repo.Restore(ctx, c.co.RestoreRef); err != nil {
			return err
		}
	}
	return nil
}

// writeRunFiles writes the run directory's files (the prompt, the
// executor's overlays) from the Secret: the pod's run directory is its
// own, not the launcher's.
func (c *podCheckout) writeRunFiles() error {
	if c.inDir == "" {
		return nil
	}
	entries, err := os.ReadDir(c.inDir)
	if err != nil {
		return fmt.Errorf("run files: %w", err)
	}
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), runFilePrefix)
		if !ok || name == "" || strings.ContainsAny(name, "/\x00") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.inDir, e.Name()))
		if err != nil {
			return fmt.Errorf("run file %s: %w", name, err)
		}
		if err := jsonfile.MkdirAll(c.p.RunDir); err != nil {
			return fmt.Errorf("run dir: %w", err)
		}
		if err := jsonfile.WriteFile(filepath.Join(c.p.RunDir, name), b); err != nil {
			return fmt.Errorf("run file %s: %w", name, err)
		}
	}
	return nil
}

// Facts reads the clone and says when its HEAD or dirty set last changed.
func (c *podCheckout) Facts(ctx context.Context) (runtime.GitFacts, error) {
	if c.repo == nil {
		return c.facts, errors.New("no clone yet")
	}
	st, err := c.repo.State(ctx, c.base)
	if err != nil {
		return c.facts, err
	}
	c.facts.Head, c.facts.Ahead, c.facts.Dirty = st.Head, st.Ahead, st.Dirty
	if key := st.Head + "\x00" + st.Status; key != c.state {
		now := c.nowFunc()
		c.state, c.facts.ChangedAt = key, &now
	}
	return c.facts, nil
}

// Snapshot pushes the uncommitted work to SnapshotRef when it changed.
func (c *podCheckout) Snapshot(ctx context.Context) error {
	if c.repo == nil || c.co.SnapshotRef == "" {
		return nil
	}
	sha, err := c.repo.PushSnapshot(ctx, c.co.SnapshotRef, c.facts.Snapshot, "wave-orchestrator snapshot of run "+c.p.RunID)
	if err != nil {
		return err
	}
	if sha != c.facts.Snapshot {
		now := c.nowFunc()
		c.facts.Snapshot, c.facts.SnapshotAt = sha, &now
	}
	return nil
}

// PushBranch pushes the worker branch's commits to its candidate ref
// (or, for an older supervisor's payload, the branch) under the lease
// taken at start.
func (c *podCheckout) PushBranch(ctx context.Context) error {
	if c.repo == nil {
		return nil
	}
	push := c.repo.PushBranchLeased
	to := c.co.Branch
	if c.co.PushRef != "" {
		push, to = c.repo.PushCandidate, c.co.PushRef
	}
	sha, err := push(ctx, to, c.lease)
	if err != nil {
		return err
	}
	c.facts.Pushed = sha
	return nil
}

// PushResult pushes runner-final.json and agent.log's tail to ResultRef.
func (c *podCheckout) PushResult(ctx context.Context, rec runtime.Record, st runtime.Status) error {
	if c.repo == nil || c.co.ResultRef == "" {
		return nil
	}
	final, err := json.MarshalIndent(finalReport{Record: rec, Status: st}, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{FinalFile: final, lanes.LogFile: logTail(c.p.LogPath, maxLogTail)}
	at := st.CompletedAt
	if rec.FinishedAt != nil {
		at = *rec.FinishedAt
	}
	_, err = c.repo.PushResult(ctx, c.co.ResultRef, files, at, "wave-orchestrator result of run "+c.p.RunID)
	return err
}

// logTail is the last max bytes of the log at path (empty when unread).
func logTail(path string, max int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		if _, err := f.Seek(-max, io.SeekEnd); err != nil {
			return nil
		}
	}
	b, _ := io.ReadAll(io.LimitReader(f, max))
	return b
}
