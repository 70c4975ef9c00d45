package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podWorker is the kubelet's part for one pod: it prepares the pod's
// volumes and environment, runs its container's process, reports its
// status and carries out its deletion.
type podWorker struct {
	n            *Node
	key, ns      string
	name         string
	uid          types.UID
	created      time.Time
	root, outLog string

	mu       sync.Mutex
	pod      *corev1.Pod
	proc     *os.Process
	tty      *os.File
	vanished bool
	startAt  time.Time
	waiting  string // the waiting reason/message last reported

	wake     chan struct{} // cap 1: the pod changed, or a volume source may have appeared
	kills    chan struct{} // cap 1: Kill or Vanish
	gone     chan struct{} // closed: the pod left the API
	stopping chan struct{} // closed: the node stops
	done     chan struct{} // closed: run returned
	goneOnce sync.Once
	stopOnce sync.Once
}

func newPodWorker(n *Node, pod *corev1.Pod) *podWorker {
	root := filepath.Join(n.root, string(pod.UID)[:8])
	return &podWorker{
		n: n, key: pod.Namespace + "/" + pod.Name, ns: pod.Namespace, name: pod.Name, uid: pod.UID,
		created: time.Now(), root: root, outLog: filepath.Join(root, "output.log"),
		pod:  pod.DeepCopy(),
		wake: make(chan struct{}, 1), kills: make(chan struct{}, 1),
		gone: make(chan struct{}), stopping: make(chan struct{}), done: make(chan struct{}),
	}
}

func (w *podWorker) update(pod *corev1.Pod) {
	w.mu.Lock()
	w.pod = pod.DeepCopy()
	w.mu.Unlock()
	w.poke()
}

func (w *podWorker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *podWorker) removed() { w.goneOnce.Do(func() { close(w.gone) }) }

// stop kills the process without reporting (the node is going away) and
// waits for the worker to end.
func (w *podWorker) stop() {
	w.stopOnce.Do(func() { close(w.stopping) })
	timer := time.NewTimer(15 * time.Second)
	defer timer.Stop()
	select {
	case <-w.done:
	case <-timer.C:
		w.n.log.Error("pod worker did not stop", "pod", w.key)
	}
}

func (w *podWorker) latest() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

// silenced reports whether nothing may be written about the pod any more.
func (w *podWorker) silenced() bool {
	w.mu.Lock()
	vanished := w.vanished
	w.mu.Unlock()
	if vanished {
		return true
	}
	select {
	case <-w.gone:
		return true
	case <-w.stopping:
		return true
	default:
		return false
	}
}

func (w *podWorker) pid() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.proc == nil {
		return 0
	}
	return w.proc.Pid
}

func (w *podWorker) output() string {
	data, err := os.ReadFile(w.outLog)
	if err != nil {
		return ""
	}
	return string(data)
}

func (w *podWorker) write(data []byte) error {
	w.mu.Lock()
	tty := w.tty
	w.mu.Unlock()
	if tty == nil {
		return fmt.Errorf("kubetest node: pod %s has no running terminal", w.key)
	}
	_, err := tty.Write(data)
	return err
}

// kill SIGKILLs the process group; vanish also silences the pod for good.
func (w *podWorker) kill(vanish bool) {
	w.mu.Lock()
	if vanish {
		w.vanished = true
	}
	w.mu.Unlock()
	select {
	case w.kills <- struct{}{}:
	default:
	}
	w.poke()
}

func (w *podWorker) run() {
	defer close(w.done)
	ctx := w.n.ctx
	l := w.prepareLoop(ctx)
	if l == nil {
		return
	}
	pgid, exited, err := w.start(l)
	if err != nil {
		if !w.silenced() {
			w.reportStartError(ctx, err)
		}
		w.awaitDeletion(ctx)
		return
	}
	if !w.silenced() {
		w.reportRunning(ctx, l)
		if w.n.opts.OnStart != nil {
			w.n.opts.OnStart(w.latest().DeepCopy())
		}
	}
	state := w.supervise(pgid, exited)
	if w.silenced() {
		return
	}
	w.reportTerminated(ctx, l, state)
	w.awaitDeletion(ctx)
}

// prepareLoop retries prepare until it succeeds, reporting why the pod
// waits meanwhile; nil when the pod went away before it could start.
func (w *podWorker) prepareLoop(ctx context.Context) *launch {
	backoff := 200 * time.Millisecond
	for {
		if w.silenced() {
			return nil
		}
		if w.latest().DeletionTimestamp != nil {
			// Never started: nothing to stop, the kubelet just lets it go.
			w.deleteNow(ctx)
			return nil
		}
		l, err := w.prepare(ctx)
		if err == nil {
			return l
		}
		var wait *waitingError
		if !errors.As(err, &wait) {
			w.reportStartError(ctx, err)
			w.awaitDeletion(ctx)
			return nil
		}
		w.reportWaiting(ctx, wait)
		timer := time.NewTimer(backoff)
		backoff = min(2*backoff, 5*time.Second)
		select {
		case <-w.wake:
		case <-timer.C:
		case <-w.gone:
		case <-w.stopping:
		}
		timer.Stop()
	}
}

// start runs the container's process in its own process group; the
// channel yields its final state.
func (w *podWorker) start(l *launch) (int, <-chan *os.ProcessState, error) {
	cmd := exec.Command(l.path, l.args...)
	cmd.Env, cmd.Dir = l.env, l.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := os.OpenFile(w.outLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, nil, fmt.Errorf("output file: %w", err)
	}
	var tty *os.File
	drained := make(chan struct{})
	if l.tty {
		// pty starts it as a session (and group) leader with the
		// terminal as its controlling tty and stdin, stdout and stderr.
		tty, err = pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
		if err == nil {
			go func() { io.Copy(out, tty); close(drained) }()
		}
	} else {
		cmd.SysProcAttr.Setpgid = true
		cmd.Stdout, cmd.Stderr = out, out
		err = cmd.Start()
		close(drained)
	}
	if err != nil {
		out.Close()
		return 0, nil, fmt.Errorf("failed to start container %q: %w", l.container, err)
	}
	w.mu.Lock()
	w.proc, w.tty, w.startAt = cmd.Process, tty, time.Now()
	w.mu.Unlock()
	w.n.log.Info("pod started", "pod", w.key, "pid", cmd.Process.Pid, "command", l.path)
	exited := make(chan *os.ProcessState, 1)
	go func() {
		cmd.Wait()
		// The container ends with its main process, as a pid namespace
		// does: whatever it left behind in its group goes too.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		timer := time.NewTimer(5 * time.Second)
		select {
		case <-drained:
		case <-timer.C:
		}
		timer.Stop()
		if tty != nil {
			tty.Close()
		}
		out.Close()
		w.mu.Lock()
		w.tty, w.proc = nil, nil
		w.mu.Unlock()
		exited <- cmd.ProcessState
	}()
	return cmd.Process.Pid, exited, nil
}

// supervise waits for the process to end, sending TERM when the pod is
// deleted and KILL once its grace period is over, on Kill or Vanish, or
// when the pod or the node goes away.
func (w *podWorker) supervise(pgid int, exited <-chan *os.ProcessState) *os.ProcessState {
	var grace <-chan time.Time
	termSent := false
	for {
		if p := w.latest(); !termSent && p.DeletionTimestamp != nil && !w.silenced() {
			termSent = true
			syscall.Kill(-pgid, syscall.SIGTERM)
			timer := time.NewTimer(gracePeriod(p))
			defer timer.Stop()
			grace = timer.C
			w.n.log.Info("pod deleted: TERM sent", "pod", w.key, "grace", gracePeriod(p))
		}
		select {
		case st := <-exited:
			return st
		case <-w.wake:
		case <-grace:
			w.n.log.Info("grace period over: KILL", "pod", w.key)
			syscall.Kill(-pgid, syscall.SIGKILL)
		case <-w.kills:
			syscall.Kill(-pgid, syscall.SIGKILL)
		case <-w.gone:
			syscall.Kill(-pgid, syscall.SIGKILL)
			return <-exited
		case <-w.stopping:
			syscall.Kill(-pgid, syscall.SIGKILL)
			return <-exited
		}
	}
}

func gracePeriod(p *corev1.Pod) time.Duration {
	switch {
	case p.DeletionGracePeriodSeconds != nil:
		return time.Duration(*p.DeletionGracePeriodSeconds) * time.Second
	case p.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*p.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}

// awaitDeletion waits, once the pod has a final status, for it to be
// deleted, and then removes it from the API as a kubelet does.
func (w *podWorker) awaitDeletion(ctx context.Context) {
	for {
		if w.silenced() {
			return
		}
		if w.latest().DeletionTimestamp != nil {
			w.deleteNow(ctx)
			return
		}
		select {
		case <-w.wake:
		case <-w.gone:
		case <-w.stopping:
		}
	}
}

func (w *podWorker) deleteNow(ctx context.Context) {
	if err := w.n.deletePod(ctx, w.latest(), ptrTo(int64(0))); err != nil {
		w.n.log.Warn("delete pod", "pod", w.key, "err", err)
	}
}
