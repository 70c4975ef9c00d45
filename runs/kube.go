package runs

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/kube"
)

// KubeOptions maps the lane's runtime.kubernetes onto the backend's
// options; the namespace falls back to the kubeconfig context's (c may
// be nil), then "default". A runtime.kubernetes.passEnv name not set in
// this environment is an error: the pod would run without it.
func KubeOptions(lane *config.Lane, c *kube.Client) (kube.Options, error) {
	k := lane.Runtime.Kubernetes
	ns := k.Namespace
	if ns == "" && c != nil {
		ns = c.Namespace
	}
	if ns == "" {
		ns = "default"
	}
	pass := map[string]string{}
	for _, n := range k.PassEnv {
		v, ok := os.LookupEnv(n)
		if !ok {
			return kube.Options{}, fmt.Errorf("runtime.kubernetes.passEnv: %s is not set in this environment", n)
		}
		pass[n] = v
	}
	return kube.Options{
		Namespace: ns, Image: k.Image, ServiceAccount: k.ServiceAccount, Binary: k.Binary,
		ImagePullPolicy: k.ImagePullPolicy, WorkspaceClaim: k.Workspace.ClaimName,
		WorkspaceHostPath: k.Workspace.HostPath, RepoRoot: lane.RepoRoot, Lane: lane.Name,
		GitCredentialsSecret: k.GitCredentialsSecret,
		EnvFrom:              k.EnvFrom, PassEnv: pass, CPU: k.CPU, Memory: k.Memory, NodeSelector: k.NodeSelector,
	}, nil
}

// kubeBackend connects the lane's kubernetes backend; its watches stop
// with ctx. self is this binary (an agent command naming it runs the
// image's binary instead).
func kubeBackend(ctx context.Context, lane *config.Lane, self string, logger *slog.Logger) (*kube.Backend, error) {
	k := lane.Runtime.Kubernetes
	c, err := kube.NewClient(k.Kubeconfig, k.Context)
	if err != nil {
		return nil, fmt.Errorf("lane %s: %w", lane.Name, err)
	}
	o, err := KubeOptions(lane, c)
	if err != nil {
		return nil, fmt.Errorf("lane %s: %w", lane.Name, err)
	}
	b, err := kube.NewBackend(ctx, c, o, self, logger)
	if err != nil {
		return nil, fmt.Errorf("lane %s: %w", lane.Name, err)
	}
	return b, nil
}

// AgentBinary is the wave-orchestrator path the lane's agents' commands
// and prompts name: self on tmux, the image's in a pod. (*Runs).AgentBinary
// is the same for opened runs; this is for what runs nothing (a dry run).
func AgentBinary(lane *config.Lane, self string) string {
	if !lane.Runtime.UsesKubernetes() {
		return self
	}
	if b := lane.Runtime.Kubernetes.Binary; b != "" {
		return b
	}
	return kube.DefaultBinary
}
