package kubetest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// NodeOptions configure StartNode.
type NodeOptions struct {
	// Name is the node's name, which the pods it runs carry in
	// spec.nodeName (default "kubetest-node-" and a random suffix).
	Name string
	// Namespace limits the node to one namespace; "" watches all.
	Namespace string
	// Binaries maps a container's command[0] (a path inside the image,
	// e.g. /usr/local/bin/wave-orchestrator) to the local executable that
	// plays it. A command not in the map is looked up as written, then
	// by its base name in the pod's PATH.
	Binaries map[string]string
	// ExtraPath is put before the node's own $PATH in every process's
	// PATH.
	ExtraPath []string
	// Root holds the pods' directories (default: a fresh short
	// directory under $TMPDIR, removed when the test ends; short because
	// programs make unix sockets under their pod's paths).
	Root string
	// OnStart, when set, is called with the pod once its process runs
	// and its Running status is written.
	OnStart func(pod *corev1.Pod)
}

// Node stands in for a kubelet, the Job controller and the garbage
// collector for the Jobs and pods of one namespace (or all), running each
// pod's container as a local process until the test ends. Run one Node
// per namespace: two would both create pods for the same Job.
//
// The processes share this machine's filesystem; a pod's mounts are
// emulated by mapping container paths to local ones (see StartNode). They
// get the pod's ServiceAccount identity through $KUBECONFIG only: the
// in-cluster config reads fixed paths (/var/run/secrets/...) that the
// mapping cannot reach, so a process must load its config from
// $KUBECONFIG (as client-go's default loading rules do).
type Node struct {
	c         *Cluster
	opts      NodeOptions
	name      string
	root      string
	client    kubernetes.Interface
	log       *slog.Logger
	logPath   string
	ctx       context.Context
	jobs      batchlisters.JobLister
	pods      corelisters.PodLister
	secrets   corelisters.SecretLister
	configMap corelisters.ConfigMapLister
	leases    coordlisters.LeaseLister
	queue     workqueue.TypedRateLimitingInterface[item]

	mu      sync.Mutex
	workers map[types.UID]*podWorker
	created map[types.UID]bool // Jobs this node made their pod for
	seen    map[types.UID]bool // Jobs whose pod the informer has shown
}

// StartNode starts a node on c until t ends. How it runs a pod:
//   - volumes: secret, configMap, downwardAPI and projected (the
//     ServiceAccount token volume included) are written as files,
//     emptyDir is a directory; all four live at <pod root><mountPath>. A
//     hostPath volume is its own path; a persistentVolumeClaim is the
//     mountPath itself on this machine (the claim must exist), as a
//     shared RWX volume would be. A missing Secret or ConfigMap keeps the
//     pod Pending until it appears.
//   - paths: an env value, arg or workingDir that is a mounted path or
//     lies under one is rewritten to its local place; so is the
//     terminationMessagePath, whose file's first 4096 bytes become the
//     termination message.
//   - environment: the container's env and envFrom only, plus PATH, HOME
//     (under the pod root) and KUBECONFIG (a token from the TokenRequest
//     API for the pod's ServiceAccount, bound to the pod).
//   - tty: true runs the process on a pty whose output is kept for
//     Output; otherwise stdout and stderr are kept. Each pod's process
//     runs in its own process group, which is what TERM and KILL reach.
func (c *Cluster) StartNode(t testing.TB, opts NodeOptions) *Node {
	t.Helper()
	if c.Existing() {
		// A real cluster runs pods in its own nodes, from images: this
		// Node's local processes, its fault knobs (Kill, Vanish) and its
		// host paths have no counterpart there.
		t.Skip("kubetest: KUBETEST_EXISTING_CLUSTER: this test needs the harness's Node (pods run as local processes)")
	}
	n, err := c.newNode(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.ctx = ctx
	factoryOpts := []informers.SharedInformerOption{}
	if opts.Namespace != "" {
		factoryOpts = append(factoryOpts, informers.WithNamespace(opts.Namespace))
	}
	factory := informers.NewSharedInformerFactoryWithOptions(n.client, 0, factoryOpts...)
	n.register(factory)
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		n.queue.ShutDown()
		factory.Shutdown()
		n.stopPods()
		wg.Wait()
		if t.Failed() {
			t.Logf("kubetest node %s log (%s):\n%s", n.name, n.logPath, tail(n.logPath, 40))
		}
	})
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			t.Fatalf("kubetest node %s: informer for %v did not sync", n.name, typ)
		}
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n.processNext() {
			}
		}()
	}
	return n
}

func (c *Cluster) newNode(t testing.TB, opts NodeOptions) (*Node, error) {
	name := opts.Name
	if name == "" {
		name = "kubetest-node-" + randomSuffix(5)
	}
	root := opts.Root
	if root == "" {
		dir, err := os.MkdirTemp("", "kn-")
		if err != nil {
			return nil, fmt.Errorf("kubetest node: %w", err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		root = dir
	}
	logPath := filepath.Join(root, "node.log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("kubetest node: %w", err)
	}
	t.Cleanup(func() { f.Close() })
	client, err := kubernetes.NewForConfig(c.AdminConfig())
	if err != nil {
		return nil, fmt.Errorf("kubetest node: client: %w", err)
	}
	return &Node{
		c: c, opts: opts, name: name, root: root, client: client,
		log:     slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", name),
		logPath: logPath,
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[item]()),
		workers: map[types.UID]*podWorker{},
		created: map[types.UID]bool{},
		seen:    map[types.UID]bool{},
	}, nil
}

// register wires the informers: Jobs and pods feed the Job controller,
// pods on this node feed their workers, and every kind a Job may own
// feeds the garbage collector and wakes pods waiting for a volume.
func (n *Node) register(f informers.SharedInformerFactory) {
	jobs := f.Batch().V1().Jobs()
	pods := f.Core().V1().Pods()
	secrets := f.Core().V1().Secrets()
	cms := f.Core().V1().ConfigMaps()
	leases := f.Coordination().V1().Leases()
	n.jobs, n.pods, n.secrets, n.configMap, n.leases = jobs.Lister(), pods.Lister(), secrets.Lister(), cms.Lister(), leases.Lister()

	jobs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { n.enqueueJob(o) },
		UpdateFunc: func(_, o any) { n.enqueueJob(o) },
		DeleteFunc: n.jobDeleted,
	})
	pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { n.podEvent(o, false) },
		UpdateFunc: func(_, o any) { n.podEvent(o, false) },
		DeleteFunc: func(o any) { n.podEvent(o, true) },
	})
	for _, inf := range []cache.SharedIndexInformer{secrets.Informer(), cms.Informer(), leases.Informer()} {
		inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { n.dependentEvent(o, false) },
			UpdateFunc: func(_, o any) { n.dependentEvent(o, false) },
			DeleteFunc: func(o any) { n.dependentEvent(o, true) },
		})
	}
}

// podEvent routes a pod change to the Job controller and, for pods bound
// to this node, to the pod's worker.
func (n *Node) podEvent(o any, deleted bool) {
	pod, ok := unwrap(o).(*corev1.Pod)
	if !ok {
		return
	}
	n.dependentEvent(pod, deleted)
	if pod.Spec.NodeName == "" && !deleted && n.c.RealControllers() && pod.DeletionTimestamp == nil {
		n.queue.Add(item{kind: bindPod, ns: pod.Namespace, name: pod.Name})
		return
	}
	if pod.Spec.NodeName != n.name {
		return
	}
	n.mu.Lock()
	w := n.workers[pod.UID]
	if w == nil && !deleted && n.ctx.Err() == nil && pod.Status.Phase == corev1.PodPending {
		w = newPodWorker(n, pod)
		n.workers[pod.UID] = w
		go w.run()
	}
	n.mu.Unlock()
	if w == nil {
		return
	}
	if deleted {
		w.removed()
	} else {
		w.update(pod)
	}
}

// unwrap returns the object inside a delete tombstone.
func unwrap(o any) any {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return o
}

func (n *Node) stopPods() {
	n.mu.Lock()
	ws := make([]*podWorker, 0, len(n.workers))
	for _, w := range n.workers {
		ws = append(ws, w)
	}
	n.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
}

// Name is the node's name (the pods' spec.nodeName).
func (n *Node) Name() string { return n.name }

// worker finds the worker of the pod named pod ("name" or
// "namespace/name"; the newest when a name was reused).
func (n *Node) worker(pod string) *podWorker {
	n.mu.Lock()
	defer n.mu.Unlock()
	var found *podWorker
	for _, w := range n.workers {
		if w.key == pod || (!strings.Contains(pod, "/") && w.name == pod) {
			if found == nil || w.created.After(found.created) {
				found = w
			}
		}
	}
	return found
}

// Pods lists the "namespace/name" of every pod this node has taken on.
func (n *Node) Pods() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var keys []string
	for _, w := range n.workers {
		keys = append(keys, w.key)
	}
	sort.Strings(keys)
	return keys
}

// Process is the pid (and process group) of the pod's running process,
// or 0 when it is not running.
func (n *Node) Process(pod string) int {
	if w := n.worker(pod); w != nil {
		return w.pid()
	}
	return 0
}

// Output is what the pod's process has written so far (its terminal, for
// a tty container): there is no log endpoint without a real kubelet, so
// this is the place to look when a test fails.
func (n *Node) Output(pod string) string {
	if w := n.worker(pod); w != nil {
		return w.output()
	}
	return ""
}

// Kill SIGKILLs the pod's process group; the node reports the exit like a
// kubelet would (exit code 137).
func (n *Node) Kill(pod string) error {
	w := n.worker(pod)
	if w == nil {
		return fmt.Errorf("kubetest node %s: no pod %q", n.name, pod)
	}
	w.kill(false)
	return nil
}

// Vanish SIGKILLs the pod's process group and never reports anything
// about the pod again, as when its node dies or is partitioned away: the
// pod stays Running in the API and, once deleted, Terminating.
func (n *Node) Vanish(pod string) error {
	w := n.worker(pod)
	if w == nil {
		return fmt.Errorf("kubetest node %s: no pod %q", n.name, pod)
	}
	w.kill(true)
	return nil
}

// Write types data into the terminal of a tty pod, as an attached user
// would.
func (n *Node) Write(pod string, data []byte) error {
	w := n.worker(pod)
	if w == nil {
		return fmt.Errorf("kubetest node %s: no pod %q", n.name, pod)
	}
	return w.write(data)
}

// jobKey names a Job for the queue.
func jobKey(j *batchv1.Job) item { return item{kind: syncJob, ns: j.Namespace, name: j.Name} }
