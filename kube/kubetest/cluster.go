package kubetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Cluster is a running etcd + kube-apiserver pair on 127.0.0.1. It has no
// kubelet, scheduler or controller-manager: StartNode supplies the parts
// of those that Jobs need.
type Cluster struct {
	dir, etcdDir string
	url          string
	caPEM        []byte
	admin        user
	users        map[string]user
	client       kubernetes.Interface
	adminKubecfg string
	etcd, api    *process
	// kcm is the real kube-controller-manager when the cluster runs one
	// ($KUBETEST_CONTROLLER_MANAGER): its Job controller, garbage
	// collector and TTL-after-finished controller replace the Node's.
	kcm *process
	// adminCfg is the kubeconfig's admin on an existing cluster
	// ($KUBETEST_EXISTING_CLUSTER); nil on one this harness runs.
	adminCfg *rest.Config
	// StartupTime is how long the control plane took to become ready.
	StartupTime time.Duration
}

// Option configures Start.
type Option func(*settings)

type settings struct {
	users   []string
	args    []string
	timeout time.Duration
}

// WithUsers replaces the unprivileged static-token users (default alice,
// bob and carol). They authenticate but RBAC grants them nothing beyond
// what every authenticated user may do.
func WithUsers(names ...string) Option { return func(s *settings) { s.users = names } }

// WithAPIServerArgs appends flags to kube-apiserver's command line.
func WithAPIServerArgs(args ...string) Option {
	return func(s *settings) { s.args = append(s.args, args...) }
}

// WithStartTimeout bounds how long Start waits for /readyz (default 90s:
// the machines these run on are shared).
func WithStartTimeout(d time.Duration) Option { return func(s *settings) { s.timeout = d } }

// Start runs a fresh control plane for t and stops it when t ends. Without
// the binaries it skips t, or fails it when $CI or $KUBETEST_REQUIRED is
// set. Starting takes seconds; share one per package with Shared.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	c, err := start(context.Background(), opts)
	if err != nil {
		startFailed(t, err)
	}
	t.Cleanup(c.stop)
	return c
}

func start(ctx context.Context, opts []Option) (*Cluster, error) {
	s := settings{users: []string{"alice", "bob", "carol"}, timeout: 90 * time.Second}
	for _, o := range opts {
		o(&s)
	}
	if existingCluster() {
		return startExisting(ctx, s)
	}
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	c := &Cluster{dir: dir, users: map[string]user{}}
	if err := c.launch(ctx, bins, s); err != nil {
		err = fmt.Errorf("kubetest: %w%s", err, c.logTails())
		c.stop()
		return nil, err
	}
	c.StartupTime = time.Since(begin)
	return c, nil
}

// launch writes the cluster's files, starts both processes and waits until
// the apiserver is ready.
func (c *Cluster) launch(ctx context.Context, bins binaries, s settings) error {
	keys, err := newPKI(c.dir)
	if err != nil {
		return err
	}
	c.caPEM = keys.caPEM
	c.admin = user{name: "kubetest-admin", token: randomToken(), groups: []string{"system:masters"}}
	tokens := c.admin.tokenFileLine()
	for _, name := range s.users {
		u := user{name: name, token: randomToken()}
		c.users[name] = u
		tokens += u.tokenFileLine()
	}
	tokenFile := filepath.Join(c.dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(tokens), 0o600); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	c.etcdDir = etcdDataDir(c.dir)
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c.etcd, err = startProcess(bins.etcd, filepath.Join(c.dir, "etcd.log"),
		"--name=kubetest",
		"--data-dir="+c.etcdDir,
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=kubetest="+peerURL,
		"--logger=zap", "--log-outputs=stderr")
	if err != nil {
		return err
	}
	c.url = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	args := append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--cert-dir=" + filepath.Join(c.dir, "apiserver-certs"),
		"--tls-cert-file=" + keys.certFile, "--tls-private-key-file=" + keys.keyFile,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-key-file=" + keys.saPubFile,
		"--service-account-signing-key-file=" + keys.saKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.0.0.0/24",
		// The endpoint reconciler refuses a loopback advertise address
		// and would log an error every ten seconds.
		"--endpoint-reconciler-type=none",
		// etcd 3.4.23 (Debian's) lacks the watch-progress requests the
		// watch cache needs to catch up on a quiet resource: watches then
		// fail with "Too large resource version" and informers stall for
		// seconds. Served straight from etcd, watches just work.
		"--watch-cache=false",
	}, s.args...)
	c.api, err = startProcess(bins.apiserver, filepath.Join(c.dir, "kube-apiserver.log"), args...)
	if err != nil {
		return err
	}
	c.client, err = kubernetes.NewForConfig(c.AdminConfig())
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	if err := c.waitReady(ctx, s.timeout); err != nil {
		return err
	}
	c.adminKubecfg, err = c.writeKubeconfig("admin", c.admin.token, "default")
	if err != nil {
		return err
	}
	return c.startControllerManager()
}

// startControllerManager runs kube-controller-manager's Job, garbage
// collector and TTL-after-finished controllers as the admin, when asked
// for. Nothing else: the harness makes each namespace's default
// ServiceAccount and root CA ConfigMap itself, and no pod is scheduled
// but by a Node.
func (c *Cluster) startControllerManager() error {
	bin, err := controllerManager()
	if err != nil || bin == "" {
		return err
	}
	c.kcm, err = startProcess(bin, filepath.Join(c.dir, "kube-controller-manager.log"),
		"--kubeconfig="+c.adminKubecfg,
		"--controllers=job-controller,garbage-collector-controller,ttl-after-finished-controller",
		"--leader-elect=false", "--secure-port=0",
		"--concurrent-job-syncs=10", "--concurrent-gc-syncs=10")
	if err != nil {
		return err
	}
	select {
	case <-c.kcm.done:
		return fmt.Errorf("kube-controller-manager exited: %v", c.kcm.err)
	case <-time.After(time.Second):
		return nil
	}
}

// RealControllers reports whether a real kube-controller-manager runs the
// Jobs (see $KUBETEST_CONTROLLER_MANAGER) instead of the Node.
func (c *Cluster) RealControllers() bool { return c.kcm != nil }

// waitReady polls /readyz until it answers ok, a process dies or the
// deadline passes.
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		body, err := c.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready after %s: %v", timeout, last)
		case <-c.etcd.done:
			return fmt.Errorf("etcd exited: %v", c.etcd.err)
		case <-c.api.done:
			return fmt.Errorf("kube-apiserver exited: %v", c.api.err)
		case <-tick.C:
		}
	}
}

// stop kills both processes and removes the cluster's files.
func (c *Cluster) stop() {
	for _, p := range []*process{c.kcm, c.api, c.etcd} {
		if p != nil {
			p.kill()
		}
	}
	if c.etcdDir != "" {
		os.RemoveAll(c.etcdDir)
	}
	os.RemoveAll(c.dir)
}

// logTails renders the end of both logs for a start failure.
func (c *Cluster) logTails() string {
	var b strings.Builder
	for _, p := range []*process{c.etcd, c.api, c.kcm} {
		if p != nil {
			fmt.Fprintf(&b, "\n--- last lines of %s:\n%s", filepath.Base(p.log), tail(p.log, 30))
		}
	}
	return b.String()
}

// LogTail returns the last n lines of the kube-apiserver's log, for a
// test's diagnostics.
func (c *Cluster) LogTail(n int) string {
	if c.api == nil {
		return "(an existing cluster: its apiserver's log is not here)"
	}
	return tail(c.api.log, n)
}

// etcdDataDir puts etcd's data in memory when /dev/shm exists: etcd
// fsyncs every write and the tests do not need durability.
func etcdDataDir(fallback string) string {
	if d, err := os.MkdirTemp("/dev/shm", "kubetest-etcd-"); err == nil {
		return d
	}
	return filepath.Join(fallback, "etcd")
}

// freePorts returns n distinct TCP ports free on 127.0.0.1 right now.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// URL is the apiserver's https address.
func (c *Cluster) URL() string { return c.url }

// CAData is the PEM certificate that signs the apiserver's serving
// certificate.
func (c *Cluster) CAData() []byte { return append([]byte(nil), c.caPEM...) }

// AdminConfig is a client config for a cluster admin (group
// system:masters).
func (c *Cluster) AdminConfig() *rest.Config {
	if c.adminCfg != nil {
		return rest.CopyConfig(c.adminCfg)
	}
	return c.config(c.admin.token)
}

// Existing reports whether this is a cluster that existed before the
// tests ($KUBETEST_EXISTING_CLUSTER), not one the harness runs.
func (c *Cluster) Existing() bool { return c.adminCfg != nil }

// AdminClient is a clientset for AdminConfig.
func (c *Cluster) AdminClient() kubernetes.Interface { return c.client }

// AdminKubeconfig is the path of a kubeconfig file for AdminConfig, usable
// as $KUBECONFIG.
func (c *Cluster) AdminKubeconfig() string { return c.adminKubecfg }

// Users lists the unprivileged static-token users.
func (c *Cluster) Users() []string {
	var names []string
	for n := range c.users {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// UserConfig is a client config for the unprivileged static user name; it
// panics on a name that is not one of Users, a bug in the test.
func (c *Cluster) UserConfig(name string) *rest.Config { return c.config(c.mustUser(name).token) }

// UserKubeconfig writes a kubeconfig file for the static user name and
// returns its path.
func (c *Cluster) UserKubeconfig(name string) string {
	path, err := c.writeKubeconfig("user-"+name, c.mustUser(name).token, "default")
	if err != nil {
		panic(fmt.Sprintf("kubetest: %v", err))
	}
	return path
}

func (c *Cluster) mustUser(name string) user {
	u, ok := c.users[name]
	if !ok {
		panic(fmt.Sprintf("kubetest: no static user %q (have %v)", name, c.Users()))
	}
	return u
}

func (c *Cluster) config(token string) *rest.Config {
	tls := rest.TLSClientConfig{CAData: c.CAData()}
	if c.adminCfg != nil {
		tls.Insecure, tls.ServerName = c.adminCfg.Insecure, c.adminCfg.ServerName
	}
	return &rest.Config{
		Host:            c.url,
		BearerToken:     token,
		TLSClientConfig: tls,
		QPS:             100,
		Burst:           200,
	}
}
