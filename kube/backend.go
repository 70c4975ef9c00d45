package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Backend is runtime.Backend on a Kubernetes cluster: a Job per run. It
// watches the lane's Jobs, pods and Leases (list+watch caches:
// detection is event-driven) and mirrors each run it knows into the run's
// runtime.json and status.json, which is all the rest of the program
// reads.
type Backend struct {
	c      *Client
	o      Options
	self   string
	logger *slog.Logger
	now    func() time.Time

	// The lane's Jobs, pods (indexed by run) and Leases, as watched.
	jobs   *watched[*batchv1.Job, batchv1.Job]
	pods   *watched[*corev1.Pod, corev1.Pod]
	leases *watched[*coordv1.Lease, coordv1.Lease]

	mu      sync.Mutex
	runs    map[string]*tracked // by object name
	dirs    map[string]string   // object name by run directory
	changed chan struct{}       // closed and replaced on every event
	syncMu  sync.Mutex          // one mirror write at a time

	// wrote, when set, hears every record the mirror writes (benchmarks).
	wrote func(name string, rec runtime.Record)
}

// tracked is a run this process mirrors.
type tracked struct {
	dir       string
	runID     string
	lastPod   *corev1.Pod
	podGone   bool
	lastLease *coordv1.Lease
	renew     time.Time // the Lease's renewTime as last seen
	renewSeen time.Time // when this process saw it change
	stopped   bool
	// secretGone: the run is over and its Secret deleted.
	secretGone bool
	// adopted: the run was started by another launcher (or an earlier
	// one), not by this process's Start.
	adopted bool
	// judged is the verdict this process reached without the runner's
	// record (lost, a pod that could not start): written to runtime.json
	// once the pod is done with, so the record says what was decided.
	judged *runtime.Verdict
}

var _ runtime.Backend = (*Backend)(nil)

// NewBackend connects the backend to its namespace and waits until its
// caches hold the lane's objects, so the first Observe already knows
// which runs are alive (adoption after a launcher restart depends on
// it). self is the launcher's binary: an agent command naming it runs
// Options.Binary in the pod. The watches stop with ctx.
func NewBackend(ctx context.Context, c *Client, o Options, self string, logger *slog.Logger) (*Backend, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	if o.LaunchGrace <= 0 {
		o.LaunchGrace = runtime.DefaultLaunchGrace
	}
	b := &Backend{c: c, o: o, self: self, logger: logger, now: time.Now,
		runs: map[string]*tracked{}, dirs: map[string]string{}, changed: make(chan struct{})}
	sel := labels.SelectorFromSet(labels.Set{LabelInstance: o.instance()}).String()
	b.jobs = newWatched(c.jobs(o.Namespace), sel, nil, func(j *batchv1.Job, d bool) { b.event(j, d) }, logger)
	b.pods = newWatched(c.pods(o.Namespace), sel, podRun, func(p *corev1.Pod, d bool) { b.event(p, d) }, logger)
	b.leases = newWatched(c.leases(o.Namespace), sel, nil, func(l *coordv1.Lease, d bool) { b.event(l, d) }, logger)
	go b.jobs.run(ctx)
	go b.pods.run(ctx)
	go b.leases.run(ctx)
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, w := range []struct {
		what   string
		synced func(context.Context) bool
	}{{"jobs", b.jobs.waitSynced}, {"pods", b.pods.waitSynced}, {"leases", b.leases.waitSynced}} {
		if !w.synced(syncCtx) {
			return nil, fmt.Errorf("kubernetes namespace %s: could not list and watch %s (is the cluster reachable, and may this user list jobs, pods and leases?)", o.Namespace, w.what)
		}
	}
	return b, nil
}

// podRun indexes the watched pods by their run's label.
func podRun(p *corev1.Pod) string { return p.Labels[LabelRun] }

func (o Options) check() error {
	switch {
	case o.Namespace == "":
		return errors.New("kubernetes backend: no namespace")
	case o.Image == "":
		return errors.New("kubernetes backend: runtime.kubernetes.image is not set")
	}
	for key, q := range map[string]string{"cpu": o.CPU, "memory": o.Memory} {
		if _, err := resource.ParseQuantity(q); q != "" && err != nil {
			return fmt.Errorf("runtime.kubernetes.%s: %q: %w", key, q, err)
		}
	}
	return nil
}

// event notes what a watch saw and mirrors the run it belongs to.
func (b *Backend) event(obj any, deleted bool) {
	var name string
	b.mu.Lock()
	switch o := obj.(type) {
	case *corev1.Pod:
		name = ObjectName(b.o.instance(), o.Annotations[AnnotationRunID])
		if t := b.runs[name]; t != nil {
			t.lastPod, t.podGone = o, deleted
		}
	case *coordv1.Lease:
		name = o.Name
		if t := b.runs[name]; t != nil {
			b.sawLease(t, o)
		}
	case *batchv1.Job:
		name = o.Name
	}
	close(b.changed)
	b.changed = make(chan struct{})
	_, known := b.runs[name]
	b.mu.Unlock()
	if known {
		b.sync(name)
	}
}

// sawLease keeps a Lease and times its renewals by this machine's clock.
func (b *Backend) sawLease(t *tracked, l *coordv1.Lease) {
	t.lastLease = l
	var rt time.Time
	if l.Spec.RenewTime != nil {
		rt = l.Spec.RenewTime.Time
	}
	if !rt.Equal(t.renew) || t.renewSeen.IsZero() {
		t.renew, t.renewSeen = rt, b.now()
	}
	if l.Annotations[AnnotationStopped] != "" {
		t.stopped = true
	}
}

// track registers a run to mirror; runDir holds its launch.json.
func (b *Backend) track(name, runID, runDir string) *tracked {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.runs[name]
	if t == nil {
		t = &tracked{dir: runDir, runID: runID}
		b.runs[name], b.dirs[runDir] = t, name
		if l, ok := b.leases.get(b.o.Namespace, name); ok {
			b.sawLease(t, l)
		}
	}
	return t
}

// runFacts gathers the cluster's facts on a tracked run from the caches.
func (b *Backend) runFacts(name string) (runFacts, *tracked) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.runs[name]
	if t == nil {
		return runFacts{}, nil
	}
	f := runFacts{Lease: t.lastLease, RenewSeenAt: t.renewSeen, Stopped: t.stopped, Judged: t.judged}
	f.Job, _ = b.jobs.get(b.o.Namespace, name)
	f.JobGone = f.Job == nil
	if l, ok := b.leases.get(b.o.Namespace, name); ok {
		f.Lease = l
	}
	f.Pod, f.PodGone = t.lastPod, t.podGone
	for _, p := range b.pods.byIndex(LabelValue(t.runID)) {
		if p.Annotations[AnnotationRunID] == t.runID &&
			(f.Pod == nil || f.PodGone || p.CreationTimestamp.After(f.Pod.CreationTimestamp.Time)) {
			f.Pod, f.PodGone = p, false
		}
	}
	return f, t
}

// sync mirrors a run's cluster facts into its records: status.json
// before runtime.json, as the runner writes them, and never over a
// final record.
//
// It returns the facts it mirrored: a verdict must be made from those,
// not from a later look, or a pod that ended in between would be judged
// against a record that does not know it yet.
func (b *Backend) sync(name string) runFacts {
	b.syncMu.Lock()
	defer b.syncMu.Unlock()
	f, t := b.runFacts(name)
	if t == nil {
		return f
	}
	path := filepath.Join(t.dir, "runtime.json")
	cur, err := runtime.ReadRecord(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			b.logger.Warn("kube_mirror_read", "run", t.runID, "err", err)
		}
		return f
	}
	if !isFinal(cur.TerminalDisposition) {
		if fr, ok := readFinal(t.dir, t.runID); ok {
			f.Final = fr
		}
	}
	rec, st := merge(*cur, f)
	if st != nil {
		sp := filepath.Join(t.dir, "status.json")
		if _, err := os.Stat(sp); errors.Is(err, os.ErrNotExist) {
			if err := runtime.WriteJSON(sp, st); err != nil {
				b.logger.Error("kube_mirror_write", "run", t.runID, "file", sp, "err", err)
				return f
			}
		}
	}
	if reflect.DeepEqual(*cur, rec) {
		return f
	}
	if err := runtime.WriteJSON(path, rec); err != nil {
		b.logger.Error("kube_mirror_write", "run", t.runID, "file", path, "err", err)
		return f
	}
	if b.wrote != nil {
		b.wrote(name, rec)
	}
	if isFinal(rec.TerminalDisposition) && !t.secretGone {
		// The run's Secret holds its env values: at rest no longer than
		// needed, as the tmux runner deletes its env file.
		t.secretGone = true
		go b.deleteSecret(name)
	}
	return f
}

func (b *Backend) deleteSecret(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := b.c.secrets(b.o.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		b.logger.Warn("kube_delete_secret", "secret", name, "err", err)
	}
}
