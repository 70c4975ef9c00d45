package main

import (
	"context"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/kube"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
)

// kubeChecks makes the cluster checks of a kubernetes lane; a client
// that cannot be configured is one failed check.
func kubeChecks(ctx context.Context, lane *config.Lane) []kube.Check {
	k := lane.Runtime.Kubernetes
	c, err := kube.NewClient(k.Kubeconfig, k.Context)
	if err != nil {
		return []kube.Check{{Name: "cluster", Status: kube.CheckFailed, Msg: oneLine(err.Error()),
			Fix: "set runtime.kubernetes.kubeconfig (or $KUBECONFIG) to a kubeconfig file, or run the launcher in a pod"}}
	}
	o, err := runs.KubeOptions(lane, c)
	if err != nil {
		return []kube.Check{{Name: "config", Status: kube.CheckFailed, Msg: oneLine(err.Error())}}
	}
	return kube.CheckCluster(ctx, c, o, 0)
}

// kubeFindings are a kubernetes lane's cluster checks as doctor lines.
func kubeFindings(ctx context.Context, e *laneEnv) []finding {
	if !e.lane.Runtime.UsesKubernetes() {
		return nil
	}
	var fs []finding
	for _, c := range kubeChecks(ctx, e.lane) {
		fs = append(fs, finding{level: string(c.Status), check: "kubernetes " + c.Name, msg: "kubernetes " + c.String(), fix: c.Fix})
	}
	return fs
}
