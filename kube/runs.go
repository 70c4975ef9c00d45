package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// startWidth bounds the runs created at once: a wave of 50 agents is
// three round trips each, and the API server handles them in parallel.
const startWidth = 8

// Start writes each run's launch.json and `launching` record, then
// creates its Job, Secret and Lease. A run whose Job exists already (the
// launcher died while starting it) is adopted, never created twice.
func (b *Backend) Start(ctx context.Context, payloads []*runtime.Payload) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		not  []string
		sem  = make(chan struct{}, startWidth)
	)
	for _, p := range payloads {
		if err := b.prepare(p); err != nil {
			return err
		}
	}
	for _, p := range payloads {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := b.create(ctx, p); err != nil {
				b.closeUnstarted(p, err)
				mu.Lock()
				errs, not = append(errs, err), append(not, p.RunDir)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return &runtime.StartError{Runs: len(payloads), NotStarted: not, Err: errors.Join(errs...)}
	}
	return nil
}

// prepare writes the run's files; the run is tracked from then on.
func (b *Backend) prepare(p *runtime.Payload) error {
	if err := runtime.CheckPayload(p); err != nil {
		return err
	}
	switch {
	case p.Checkout != nil:
		if err := checkCheckout(p); err != nil {
			return err
		}
	case b.o.WorkspaceClaim == "" && b.o.WorkspaceHostPath == "":
		return fmt.Errorf("run %s: runtime.kubernetes.workspace is not set: a wave agent's pod sees the repository through it (only backlog workers, which clone origin in their pod, run without one)", p.RunID)
	}
	p.FillPaths()
	if p.SchemaVersion == 0 {
		p.SchemaVersion = runtime.SchemaVersion
	}
	name := ObjectName(b.o.instance(), p.RunID)
	p.SocketName, p.SessionName = "", ""
	p.Kubernetes = &runtime.KubeRun{Namespace: b.o.Namespace, Name: name, LeaseDurationSeconds: leaseSeconds(p)}
	if err := jsonfile.MkdirAll(p.RunDir); err != nil {
		return fmt.Errorf("run %s: %w", p.RunID, err)
	}
	if err := runtime.WriteJSON(filepath.Join(p.RunDir, "launch.json"), runtime.Redacted(*p)); err != nil {
		return fmt.Errorf("run %s: %w", p.RunID, err)
	}
	if err := runtime.WriteJSON(p.RuntimePath, runtime.LaunchingRecord(p, b.now())); err != nil {
		return fmt.Errorf("run %s: %w", p.RunID, err)
	}
	b.track(name, p.RunID, p.RunDir)
	return nil
}

// create makes the run's objects. The Job comes first: the Secret and
// Lease are owned by it (deleting the Job deletes them), and its pod
// waits for its Secret.
func (b *Backend) create(ctx context.Context, p *runtime.Payload) error {
	name := p.Kubernetes.Name
	jobs := b.c.jobs(b.o.Namespace)
	job, err := jobs.Create(ctx, jobFor(p, b.o, name, b.now()), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		job, err = jobs.Get(ctx, name, metav1.GetOptions{})
		if err == nil && job.Annotations[AnnotationRunID] != p.RunID {
			return fmt.Errorf("run %s: job %s/%s exists and belongs to run %q", p.RunID, b.o.Namespace, name, job.Annotations[AnnotationRunID])
		}
	}
	if err != nil {
		return fmt.Errorf("run %s: create job %s/%s: %w", p.RunID, b.o.Namespace, name, err)
	}
	sec, err := secretFor(p, b.o, b.self, job)
	if err != nil {
		return err
	}
	if _, err := b.c.secrets(b.o.Namespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.deleteJob(context.WithoutCancel(ctx), name, 0)
		return fmt.Errorf("run %s: create secret %s/%s: %w", p.RunID, b.o.Namespace, name, err)
	}
	if _, err := b.c.leases(b.o.Namespace).Create(ctx, leaseFor(p, b.o, job), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.deleteJob(context.WithoutCancel(ctx), name, 0)
		return fmt.Errorf("run %s: create lease %s/%s: %w", p.RunID, b.o.Namespace, name, err)
	}
	return nil
}

// closeUnstarted fails the record of a run whose objects could not be made.
func (b *Backend) closeUnstarted(p *runtime.Payload, err error) {
	now := b.now()
	rec := runtime.LaunchingRecord(p, now)
	rec.TerminalDisposition, rec.ExitReason, rec.FinishedAt = runtime.Failed, "job did not start: "+err.Error(), &now
	if werr := runtime.WriteJSON(p.RuntimePath, rec); werr != nil {
		b.logger.Error("close unstarted run", "run", p.RunID, "err", werr)
	}
}

// kubeRun reads the run's name and namespace from its launch.json.
func kubeRun(runDir string) (runID string, k *runtime.KubeRun, err error) {
	var lf struct {
		RunID      string           `json:"runId"`
		Kubernetes *runtime.KubeRun `json:"kubernetes"`
	}
	b, err := os.ReadFile(filepath.Join(runDir, "launch.json"))
	if err != nil {
		return "", nil, err
	}
	if err := json.Unmarshal(b, &lf); err != nil {
		return "", nil, fmt.Errorf("%s: %w", filepath.Join(runDir, "launch.json"), err)
	}
	if lf.Kubernetes == nil {
		return lf.RunID, nil, fmt.Errorf("%s: not a kubernetes run", runDir)
	}
	return lf.RunID, lf.Kubernetes, nil
}

// runOf is the object name of the run in runDir, which is tracked from
// then on. launch.json is read once per run: Observe is the sweep's, and
// runs every second for every run.
func (b *Backend) runOf(runDir string) (string, *tracked, error) {
	b.mu.Lock()
	name, ok := b.dirs[runDir]
	t := b.runs[name]
	b.mu.Unlock()
	if ok {
		return name, t, nil
	}
	runID, k, err := kubeRun(runDir)
	if err != nil {
		return "", nil, err
	}
	t = b.track(k.Name, runID, runDir)
	b.mu.Lock()
	t.adopted = true
	b.mu.Unlock()
	return k.Name, t, nil
}

// Watch makes the backend mirror the run in runDir (adoption: a run
// started by an earlier launcher).
func (b *Backend) Watch(runDir string) {
	if name, _, err := b.runOf(runDir); err == nil {
		b.sync(name)
	}
}

// Observe mirrors the run from the caches, then classifies it.
func (b *Backend) Observe(ctx context.Context, runDir string, now time.Time) (runtime.Observation, error) {
	name, _, err := b.runOf(runDir)
	if err != nil {
		obs := runtime.ObserveFiles(runDir, now)
		return obs, obs.Err
	}
	f := b.sync(name)
	obs := runtime.ObserveKube(runDir, now, b.o.LaunchGrace, func(rec *runtime.Record) *runtime.KubeFacts {
		if rec.TerminalDisposition == runtime.Launching && f.Job != nil && f.Lease == nil {
			f.LeaseMissing = b.leaseMissing(ctx, name, runDir, f, now.Sub(rec.StartedAt) > b.o.LaunchGrace)
		}
		k := facts(rec, f, now)
		if expired(rec, k) {
			b.confirmExpiry(ctx, name, k, now)
		}
		return k
	})
	if v := obs.Verdict; v.Done && obs.Status == nil && obs.Record != nil && !isFinal(obs.Record.TerminalDisposition) {
		b.judge(name, v)
	}
	return obs, obs.Err
}

// judge keeps a verdict reached without the runner's record and mirrors
// the run: the record takes it once the pod is gone or ended (at once for
// a run whose Job is gone). A pod still to be deleted (Terminate) may yet
// report its own record, which then wins.
func (b *Backend) judge(name string, v runtime.Verdict) {
	b.mu.Lock()
	if t := b.runs[name]; t != nil && t.judged == nil {
		t.judged = &v
	}
	b.mu.Unlock()
	b.sync(name)
}

// leaseMissing decides a launching run whose Job is there and whose
// Lease is not: its launcher died before making the Lease. Start makes
// the Secret before the Lease, so the Lease tells whether the Secret was
// made without a right to read Secrets (see Needs). A pod whose
// container runs had its Secret: its runner waits for the Lease, which
// an adopting launcher makes now, and the run goes on without a retry.
// A pod that cannot start past the grace waits for a Secret nobody will
// make: reported missing. Runs this process is starting are left to
// Start.
func (b *Backend) leaseMissing(ctx context.Context, name, runDir string, f runFacts, pastGrace bool) bool {
	b.mu.Lock()
	t := b.runs[name]
	adopted := t != nil && t.adopted
	b.mu.Unlock()
	if !adopted {
		return false
	}
	if agentRunning(f.Pod) == nil {
		return pastGrace
	}
	p, err := runtime.ReadPayload(filepath.Join(runDir, "launch.json"))
	if err != nil {
		b.logger.Warn("kube_lease_repair", "run", name, "err", err)
		return false
	}
	_, err = b.c.leases(b.o.Namespace).Create(ctx, leaseFor(p, b.o, f.Job), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		b.logger.Warn("kube_lease_repair", "run", name, "err", err)
		return false
	}
	b.logger.Info("kube_lease_repaired", "run", name)
	return false
}

// confirmExpiry asks the API server for a Lease that looks expired
// before the run is called lost: a watch that lags or broke, or a
// launcher cut off from its cluster, must not make every run lost (and
// retried beside itself). A renewal the watch missed revives the run;
// no answer leaves it undecided.
func (b *Backend) confirmExpiry(ctx context.Context, name string, k *runtime.KubeFacts, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	l, err := b.c.leases(b.o.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return
	case err != nil:
		k.Unreachable = err.Error()
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.runs[name]
	if t == nil || l.Spec.RenewTime == nil || l.Spec.RenewTime.Time.Equal(t.renew) {
		return // really not renewed
	}
	b.sawLease(t, l)
	k.Alive, k.Detail = true, ""
}

// confirmTimeout bounds the look that confirms an expired Lease.
const confirmTimeout = 3 * time.Second

// expired reports a verdict of lost by an unrenewed Lease alone.
func expired(rec *runtime.Record, k *runtime.KubeFacts) bool {
	return rec.TerminalDisposition == runtime.Running && !k.Alive && k.ExitCode == nil && !k.Gone && k.StartFailed == ""
}

// Terminate stops the run as a tmux run is stopped: the pod is deleted
// with the grace, so its runner gets TERM, forwards it to the agent,
// records the outcome, and is killed when the grace is over. The Job goes
// first so nothing replaces the pod. It returns when the run's record is
// final, or the pod gone, or grace plus a margin has passed.
func (b *Backend) Terminate(ctx context.Context, runDir string, grace time.Duration, _ bool) error {
	name, t, err := b.runOf(runDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("terminate %s: %w", runDir, err)
	}
	runID := t.runID
	b.mu.Lock()
	t.stopped = true
	b.mu.Unlock()
	b.markStopped(ctx, name)
	secs := int64(math.Ceil(grace.Seconds()))
	if err := b.deleteJob(ctx, name, secs); err != nil {
		return fmt.Errorf("terminate %s: %w", runID, err)
	}
	sel := labels.SelectorFromSet(labels.Set{LabelInstance: b.o.instance(), LabelRun: LabelValue(runID)}).String()
	err = b.c.pods(b.o.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &secs}, metav1.ListOptions{LabelSelector: sel})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("terminate %s: delete pods: %w", runID, err)
	}
	wait, cancel := context.WithTimeout(ctx, grace+30*time.Second)
	defer cancel()
	b.waitFor(wait, func() bool {
		f := b.sync(name)
		rec, err := runtime.ReadRecord(filepath.Join(runDir, "runtime.json"))
		// A run without a pod is over once the cache has seen its Job go:
		// the last sync then records it stopped.
		if err == nil && isFinal(rec.TerminalDisposition) || f.PodGone || f.Pod == nil && f.JobGone {
			return true
		}
		// A runner that no longer renews its lease (its node is gone)
		// will not report: its pod stays terminating until the node
		// comes back, and waiting for it helps nobody.
		return err == nil && !facts(rec, f, b.now()).Alive && f.Lease != nil && f.Lease.Spec.RenewTime != nil
	})
	b.sync(name)
	b.closeStopped(name, runDir)
	return nil
}

// closeStopped makes the record of a stopped run final when its pod did
// not report (a node cut off keeps it terminating): with the verdict that
// had it stopped, else as stopped on request. A record left running
// would say so for good.
func (b *Backend) closeStopped(name, runDir string) {
	b.syncMu.Lock()
	defer b.syncMu.Unlock()
	path := filepath.Join(runDir, "runtime.json")
	cur, err := runtime.ReadRecord(path)
	if err != nil || isFinal(cur.TerminalDisposition) {
		return
	}
	b.mu.Lock()
	var judged *runtime.Verdict
	if t := b.runs[name]; t != nil {
		judged = t.judged
	}
	b.mu.Unlock()
	now := b.now()
	rec := *cur
	if judged != nil {
		rec = judgedRecord(rec, *judged, now)
	} else {
		rec.TerminalDisposition, rec.FinishedAt = runtime.Terminated, &now
		rec.ExitReason = "stopped on request; the runner did not report within the grace (is its node cut off from the cluster?)"
	}
	if err := runtime.WriteJSON(path, rec); err != nil {
		b.logger.Error("kube_mirror_write", "run", name, "file", path, "err", err)
	}
}

// markStopped notes the stop on the run's Lease, where every launcher
// and `status` sees it: a pod deleted before it reports is then a run
// stopped, not lost.
func (b *Backend) markStopped(ctx context.Context, name string) {
	patch := []byte(`{"metadata":{"annotations":{"` + AnnotationStopped + `":"true"}}}`)
	_, err := b.c.leases(b.o.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		b.logger.Warn("kube_mark_stopped", "lease", name, "err", err)
	}
}

func (b *Backend) deleteJob(ctx context.Context, name string, graceSeconds int64) error {
	err := b.c.jobs(b.o.Namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: &graceSeconds, PropagationPolicy: new(metav1.DeletePropagationBackground)})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete job %s/%s: %w", b.o.Namespace, name, err)
	}
	return nil
}

// waitFor waits until cond holds, checking after every watch event.
func (b *Backend) waitFor(ctx context.Context, cond func() bool) bool {
	for {
		b.mu.Lock()
		ch := b.changed
		b.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return cond()
		}
	}
}
