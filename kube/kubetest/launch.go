package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// launch is everything needed to start a pod's process.
type launch struct {
	container   string
	containerID string
	path        string   // the local executable
	args        []string // after argv[0]
	env         []string
	dir         string
	termPath    string // the local termination message file
	termPolicy  corev1.TerminationMessagePolicy
	tty         bool
}

// prepare resolves what the pod's container needs to start. A
// waitingError means try again later; any other error is a start error.
func (w *podWorker) prepare(ctx context.Context) (*launch, error) {
	pod := w.latest()
	if len(pod.Spec.Containers) != 1 || len(pod.Spec.InitContainers) > 0 {
		return nil, fmt.Errorf("the kubetest node runs pods of exactly one container and no init containers")
	}
	c := &pod.Spec.Containers[0]
	if len(c.Command) == 0 {
		return nil, fmt.Errorf("container %q has no command: the kubetest node runs commands, not images' entrypoints", c.Name)
	}
	paths, err := w.mount(ctx, pod, c)
	if err != nil {
		return nil, err
	}
	termPath := c.TerminationMessagePath
	if termPath == "" {
		termPath = corev1.TerminationMessagePathDefault
	}
	localTerm := filepath.Join(w.root, termPath)
	if err := writeFile(localTerm, nil, 0o666); err != nil {
		return nil, fmt.Errorf("termination message file: %w", err)
	}
	paths.add(termPath, localTerm)
	env, err := w.containerEnv(ctx, pod, c)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := w.kubeconfig(ctx, pod)
	if err != nil {
		return nil, err
	}
	argv := make([]string, 0, len(c.Command)+len(c.Args))
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		argv = append(argv, paths.rewrite(expand(a, env.lookup)))
	}
	var final envList
	for _, name := range env.names {
		final.set(name, paths.rewrite(env.values[name]))
	}
	home := filepath.Join(w.root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fmt.Errorf("home directory: %w", err)
	}
	defaults := [][2]string{
		{"PATH", strings.Join(append(append([]string{}, w.n.opts.ExtraPath...), os.Getenv("PATH")), string(os.PathListSeparator))},
		{"HOME", home},
		{"KUBECONFIG", kubeconfig},
	}
	for _, d := range defaults {
		if _, set := final.lookup(d[0]); !set && d[1] != "" {
			final.set(d[0], d[1])
		}
	}
	pathEnv, _ := final.lookup("PATH")
	exe, err := resolveCommand(argv[0], w.n.opts.Binaries, pathEnv)
	if err != nil {
		return nil, err
	}
	dir := w.root
	if c.WorkingDir != "" {
		dir = paths.rewrite(c.WorkingDir)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("chdir to cwd (%q) failed: working directory does not exist", c.WorkingDir)
		}
	}
	return &launch{
		container: c.Name, containerID: containerID(string(pod.UID), w.created),
		path: exe, args: argv[1:], env: final.environ(), dir: dir,
		termPath: localTerm, termPolicy: c.TerminationMessagePolicy, tty: c.TTY,
	}, nil
}

// resolveCommand finds the local executable for an image's command:
// NodeOptions.Binaries first, then the path as written, then its base
// name in the pod's PATH.
func resolveCommand(cmd string, binaries map[string]string, pathEnv string) (string, error) {
	if local, ok := binaries[cmd]; ok {
		if err := executable(local); err != nil {
			return "", fmt.Errorf("exec: %q mapped to %s: %w", cmd, local, err)
		}
		return local, nil
	}
	name := cmd
	if strings.Contains(cmd, "/") {
		if executable(cmd) == nil {
			return cmd, nil
		}
		name = filepath.Base(cmd)
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, name); executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH (map it with NodeOptions.Binaries)", cmd)
}

// containerEnv builds the container's environment as a kubelet does:
// envFrom first, then env in order, each value expanded against what was
// defined before it.
func (w *podWorker) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container) (*envList, error) {
	var env envList
	for _, from := range c.EnvFrom {
		data, err := w.envSource(ctx, from)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if name := from.Prefix + k; validEnvName.MatchString(name) {
				env.set(name, data[k])
			}
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env.set(e.Name, expand(e.Value, env.lookup))
			continue
		}
		v, ok, err := w.envValueFrom(ctx, pod, e.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			env.set(e.Name, v)
		}
	}
	return &env, nil
}

// validEnvName is what the kubelet accepts from envFrom keys.
var validEnvName = regexp.MustCompile(`^[^=\x00-\x1f]+$`)

func (w *podWorker) envSource(ctx context.Context, from corev1.EnvFromSource) (map[string]string, error) {
	cs := w.n.client.CoreV1()
	switch {
	case from.SecretRef != nil:
		s, err := cs.Secrets(w.ns).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
		if err != nil {
			return nil, missing(err, from.SecretRef.Optional)
		}
		out := map[string]string{}
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, nil
	case from.ConfigMapRef != nil:
		cm, err := cs.ConfigMaps(w.ns).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
		if err != nil {
			return nil, missing(err, from.ConfigMapRef.Optional)
		}
		return cm.Data, nil
	}
	return nil, nil
}

// missing turns a failed lookup of an env source into nil (optional and
// absent) or the kubelet's CreateContainerConfigError.
func missing(err error, optional *bool) error {
	if apierrors.IsNotFound(err) && deref(optional) {
		return nil
	}
	return waitFor("CreateContainerConfigError", "%v", err)
}

// envValueFrom resolves one valueFrom; ok is false for an optional
// source that is absent (the variable is then not set).
func (w *podWorker) envValueFrom(ctx context.Context, pod *corev1.Pod, from *corev1.EnvVarSource) (string, bool, error) {
	cs := w.n.client.CoreV1()
	switch {
	case from.FieldRef != nil:
		v, err := fieldValue(pod, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := cs.Secrets(w.ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", false, missing(err, ref.Optional)
		}
		v, ok := s.Data[ref.Key]
		if !ok && !deref(ref.Optional) {
			return "", false, waitFor("CreateContainerConfigError", "couldn't find key %s in Secret %s/%s", ref.Key, w.ns, ref.Name)
		}
		return string(v), ok, nil
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := cs.ConfigMaps(w.ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", false, missing(err, ref.Optional)
		}
		v, ok := cm.Data[ref.Key]
		if !ok && !deref(ref.Optional) {
			return "", false, waitFor("CreateContainerConfigError", "couldn't find key %s in ConfigMap %s/%s", ref.Key, w.ns, ref.Name)
		}
		return v, ok, nil
	}
	return "", false, fmt.Errorf("this valueFrom is not supported by the kubetest node")
}

// fieldValue is the downward API: the pod fields a container can read.
func fieldValue(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs":
		return nodeIP, nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if key, ok := strings.CutPrefix(path, prefix+"['"); ok && strings.HasSuffix(key, "']") {
			return m[strings.TrimSuffix(key, "']")], nil
		}
	}
	return "", fmt.Errorf("field %q is not supported by the kubetest node", path)
}

// kubeconfig writes the pod's identity: a kubeconfig with a token of its
// ServiceAccount bound to the pod. None when the pod opts out of
// automounting.
func (w *podWorker) kubeconfig(ctx context.Context, pod *corev1.Pod) (string, error) {
	if pod.Spec.AutomountServiceAccountToken != nil && !*pod.Spec.AutomountServiceAccountToken {
		return "", nil
	}
	path := filepath.Join(w.root, "kubeconfig")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	token, err := w.n.c.podToken(ctx, pod, "", nil)
	if err != nil {
		return "", waitFor("ContainerCreating", "%v", err)
	}
	return path, writeKubeconfigFile(path, w.n.c.url, w.n.c.caPEM, token, pod.Namespace)
}
