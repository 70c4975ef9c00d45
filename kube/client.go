// Package kube owns the Kubernetes backend: it runs each agent run as a
// Job whose pod runs the same `agent-run` runner as a tmux pane does,
// mirrors what the cluster says about the run (a Lease renewed by the
// runner, the pod's status and its container's termination message) into
// the run's local records, and stops, adopts and attaches to those runs.
// It is the only package that talks to a Kubernetes API server, and it
// does so through a REST client, kubeconfig reader, list+watch cache,
// WebSocket attach and API types of its own (api.go): the binary links
// no k8s.io or sigs.k8s.io package at all, so a process that never
// touches a cluster pays nothing for Kubernetes before main.
package kube

import (
	"fmt"
	"net/url"
	"strings"
)

// Client is a connection to one cluster.
type Client struct {
	Config *Config
	api    *restClient
	tr     *transport
	// Namespace is the kubeconfig context's namespace ("default" when it
	// sets none; the pod's own in a cluster).
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
	cfg, ns, name, err := loadConfig(defaultConfigEnv(), path, context)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	c, err := NewClientFromConfig(cfg, ns)
	if err != nil {
		return nil, err
	}
	c.Context = name
	return c, nil
}

// NewClientFromConfig returns a Client for cfg.
func NewClientFromConfig(cfg *Config, namespace string) (*Client, error) {
	cp := *cfg
	cfg = &cp
	if cfg.UserAgent == "" {
		cfg.UserAgent = "wave-orchestrator"
	}
	if cfg.Source == "" {
		cfg.Source = "kubernetes client config"
	}
	// client-go's defaults (5 QPS, burst 10) would pace a wave of 50
	// agents' creates over seconds.
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	host := cfg.Host
	if host != "" && !strings.Contains(host, "://") {
		host = "https://" + host
	}
	base, err := url.Parse(host)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("%s: server %q is not a URL", cfg.Source, cfg.Host)
	}
	tr, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	api := &restClient{base: base, rt: tr.rt, limit: newTokenBucket(cfg.QPS, cfg.Burst), timeout: cfg.Timeout}
	return &Client{Config: cfg, api: api, tr: tr, Namespace: namespace}, nil
}
