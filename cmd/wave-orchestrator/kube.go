package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/kube"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
)

// kubeOptions maps runtime.kubernetes onto the backend's options; the
// namespace falls back to the kubeconfig context's, then "default".
func kubeOptions(lane *config.Lane, c *kube.Client) (kube.Options, error) {
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
		EnvFrom: k.EnvFrom, PassEnv: pass, CPU: k.CPU, Memory: k.Memory, NodeSelector: k.NodeSelector,
	}, nil
}

// kubeBackend connects the lane's kubernetes backend; self is this
// binary (an agent command naming it runs the image's binary instead).
func kubeBackend(ctx context.Context, lane *config.Lane, self string, logger *slog.Logger) (*kube.Backend, error) {
	k := lane.Runtime.Kubernetes
	c, err := kube.NewClient(k.Kubeconfig, k.Context)
	if err != nil {
		return nil, fmt.Errorf("lane %s: %w", lane.Name, err)
	}
	o, err := kubeOptions(lane, c)
	if err != nil {
		return nil, fmt.Errorf("lane %s: %w", lane.Name, err)
	}
	b, err := kube.NewBackend(ctx, c, o, self, logger)
	if err != nil {
		return nil, fmt.Errorf("lane %s: %w", lane.Name, err)
	}
	return b, nil
}

// agentBinary is the wave-orchestrator path agents' commands and prompts
// name: this binary on tmux, the image's in a pod.
func agentBinary(lane *config.Lane, self string) string {
	if !lane.Runtime.UsesKubernetes() {
		return self
	}
	if b := lane.Runtime.Kubernetes.Binary; b != "" {
		return b
	}
	return kube.DefaultBinary
}

// laneRuns is the launcher's Runs on the lane's backend.
func laneRuns(ctx context.Context, e *laneEnv, self string, logger *slog.Logger) (*launcher.RuntimeRuns, error) {
	if !e.lane.Runtime.UsesKubernetes() {
		return launcher.NewRuntimeRuns(ctx, e.layout, self, logger)
	}
	b, err := kubeBackend(ctx, e.lane, self, logger)
	if err != nil {
		return nil, err
	}
	return launcher.NewBackendRuns(ctx, b, logger), nil
}
