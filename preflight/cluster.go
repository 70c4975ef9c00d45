package preflight

import (
	"context"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/kube"
)

// ClusterOptions maps a kubernetes lane's runtime.kubernetes onto the
// backend's options once its client is known (the namespace may come
// from the kubeconfig context): the same mapping the backend starts with.
type ClusterOptions func(*config.Lane, *kube.Client) (kube.Options, error)

// Cluster makes the cluster checks of a kubernetes lane (reachable,
// namespace, the launcher's permissions, image, service account), as
// both doctor and a launch's preflight make them; a client that cannot
// be configured is one failed check.
func Cluster(ctx context.Context, lane *config.Lane, options ClusterOptions) []kube.Check {
	k := lane.Runtime.Kubernetes
	c, err := kube.NewClient(k.Kubeconfig, k.Context)
	if err != nil {
		return []kube.Check{{Name: "cluster", Status: kube.CheckFailed, Msg: Flat(err.Error()),
			Fix: "set runtime.kubernetes.kubeconfig (or $KUBECONFIG) to a kubeconfig file, or run the launcher in a pod"}}
	}
	o, err := options(lane, c)
	if err != nil {
		return []kube.Check{{Name: "config", Status: kube.CheckFailed, Msg: Flat(err.Error())}}
	}
	return kube.CheckCluster(ctx, c, o, 0)
}

// Launch checks, before anything starts, what launching on lane needs
// from this machine (needs: tmux, the executors). On a kubernetes lane
// the executors are the image's, so the cluster is checked instead
// (reachable, namespace, the launcher's permissions). what names the
// command ("launch lane main"). The error is an *Error (see ExitCode).
func Launch(ctx context.Context, needs Needs, lane *config.Lane, options ClusterOptions, what string) error {
	kubeLane := lane.Runtime.UsesKubernetes()
	if kubeLane {
		needs.Executors = nil // they run in the image, not here
	}
	ps := Check(ctx, needs)
	if kubeLane {
		ps = append(ps, ClusterProblems(Cluster(ctx, lane, options))...)
	}
	if len(ps) == 0 {
		return nil
	}
	return &Error{What: what, Problems: ps}
}

// ClusterProblems are the failed cluster checks as a launch's problems:
// missing RBAC fails the launch, naming the verb, before any Job exists.
func ClusterProblems(cs []kube.Check) []Problem {
	var ps []Problem
	for _, c := range kube.Failed(cs) {
		ps = append(ps, Problem{Kind: KindKubernetes, Subject: "kubernetes " + c.Name, Msg: c.Msg, Fix: c.Fix})
	}
	return ps
}

// ClusterFindings are the cluster checks as doctor's findings.
func ClusterFindings(cs []kube.Check) []Finding {
	var fs []Finding
	for _, c := range cs {
		fs = append(fs, Finding{Level: Level(c.Status), Check: "kubernetes " + c.Name, Msg: "kubernetes " + c.String(), Fix: c.Fix})
	}
	return fs
}
