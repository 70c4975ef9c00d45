// Package kube owns the Kubernetes backend: it runs each agent run as a
// Job whose pod runs the same `agent-run` runner as a tmux pane does,
// mirrors what the cluster says about the run (a Lease renewed by the
// runner, the pod's status and its container's termination message) into
// the run's local records, and stops, adopts and attaches to those runs.
// It is the only package that talks to a Kubernetes API server, and it
// does so through REST clients of just the API groups it uses (api.go):
// the binary links none of client-go's all-groups clientset, scheme or
// informer factory, so a process that never touches a cluster does not
// pay for them.
package kube

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Client is a connection to one cluster.
type Client struct {
	Config *rest.Config
	api    *groupClients
	// Namespace is the kubeconfig context's namespace ("" when it sets
	// none).
	Namespace string
	// Context is the kubeconfig context in use ("" for the in-cluster
	// service account or a config built in code); errors name it.
	Context string
}

// NewClient loads the client configuration the usual way: the kubeconfig
// file named by path, else $KUBECONFIG, else ~/.kube/config, else the
// in-cluster service account. context, when set, picks a kubeconfig
// context other than the current one.
func NewClient(path, context string) (*Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		ns = ""
	}
	c, err := NewClientFromConfig(cfg, ns)
	if err != nil {
		return nil, err
	}
	c.Context = context
	if raw, err := cc.RawConfig(); err == nil && context == "" {
		c.Context = raw.CurrentContext
	}
	return c, nil
}

// NewClientFromConfig returns a Client for cfg.
func NewClientFromConfig(cfg *rest.Config, namespace string) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = "wave-orchestrator"
	}
	// The client-go defaults (5 QPS, burst 10) would pace a wave of 50
	// agents' creates over seconds.
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	api, err := newGroupClients(cfg)
	if err != nil {
		return nil, err
	}
	return &Client{Config: cfg, api: api, Namespace: namespace}, nil
}
