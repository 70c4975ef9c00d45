// Package kube owns the Kubernetes backend: it runs each agent run as a
// Job whose pod runs the same `agent-run` runner as a tmux pane does,
// mirrors what the cluster says about the run (a Lease renewed by the
// runner, the pod's status and its container's termination message) into
// the run's local records, and stops, adopts and attaches to those runs.
// It is the only package that talks to a Kubernetes API server, and it
// does so through client-go: clientcmd reads the kubeconfig (exec
// credential plugins, in-cluster service accounts), client-go's REST
// clients of the five API groups it uses send the requests, each
// resource behind a typed client (api.go), informers keep the list+watch
// caches (cache.go) and remotecommand attaches to a pod (attach.go). The
// API types are k8s.io/api's. It links none of client-go's all-groups
// clientset, its scheme or its generated typed clients: see api.go for
// why.
package kube

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// Client is a connection to one cluster.
type Client struct {
	Config *rest.Config
	api    *groupClients
	// Namespace is the kubeconfig context's namespace ("default" when it
	// sets none; the pod's own in a cluster).
	Namespace string
	// Context is the kubeconfig context in use ("" for the in-cluster
	// service account or a config built in code); errors name it.
	Context string
}

// NewClient loads the client configuration as kubectl does: the
// kubeconfig file named by path (it must exist), else the files
// $KUBECONFIG lists, else ~/.kube/config, else the in-cluster service
// account. context, when set, picks a kubeconfig context other than the
// current one.
func NewClient(path, context string) (*Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, configError(rules, context, err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, configError(rules, context, err)
	}
	c, err := NewClientFromConfig(cfg, ns)
	if err != nil {
		return nil, configError(rules, context, err)
	}
	c.Context = context
	if raw, err := cc.RawConfig(); err == nil {
		if context == "" {
			c.Context = raw.CurrentContext
		}
		// clientcmd would go on as the anonymous user: a typo in a
		// user's name is an error, not a cluster's 403s later.
		if ctx := raw.Contexts[c.Context]; ctx != nil && ctx.AuthInfo != "" && raw.AuthInfos[ctx.AuthInfo] == nil {
			return nil, configError(rules, context, fmt.Errorf("user %q was not found for context %q", ctx.AuthInfo, c.Context))
		}
	}
	return c, nil
}

// configError says which kubeconfig files (and context) a client
// configuration error is about; clientcmd's own words name the key.
func configError(rules *clientcmd.ClientConfigLoadingRules, context string, err error) error {
	paths := rules.GetLoadingPrecedence()
	if rules.ExplicitPath != "" {
		paths = []string{rules.ExplicitPath}
	}
	var found []string
	for _, p := range paths {
		if _, serr := os.Stat(p); serr == nil {
			found = append(found, p)
		}
	}
	if clientcmd.IsEmptyConfig(err) && len(found) == 0 {
		looked := strings.Join(paths, ", ")
		if looked == "" {
			looked = "$KUBECONFIG or ~/.kube/config (neither is set)"
		}
		return fmt.Errorf("kubernetes client config: no kubeconfig (looked for %s) and not running in a pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset)", looked)
	}
	where := "kubeconfig " + strings.Join(found, ", ")
	if len(found) == 0 {
		where = "kubeconfig " + strings.Join(paths, ", ")
	}
	if context != "" {
		where += fmt.Sprintf(" (context %q)", context)
	}
	return fmt.Errorf("kubernetes client config: %s: %w", where, err)
}

// NewClientFromConfig returns a Client for cfg.
func NewClientFromConfig(cfg *rest.Config, namespace string) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = "wave-orchestrator"
	}
	if cfg.ExecProvider != nil {
		// A plugin prompting on the terminal would write over the
		// dashboard, or wait in a launcher nobody watches.
		e := *cfg.ExecProvider // CopyConfig shares it
		cfg.ExecProvider = &e
		cfg.ExecProvider.StdinUnavailable = true
		cfg.ExecProvider.StdinUnavailableMessage = "wave-orchestrator never lets a credential plugin prompt: log in beforehand"
	}
	if cfg.WarningHandler == nil && cfg.WarningHandlerWithContext == nil {
		// The API server's deprecation warnings would go to stderr.
		cfg.WarningHandler = rest.NoWarnings{}
	}
	// client-go's defaults (5 QPS, burst 10) would pace a wave of 50
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

// What client-go logs without a logger of ours in the request's context
// (an exec plugin's refresh that failed, a response cut by a cancelled
// request) goes through klog's global logger, which writes to stderr:
// over the dashboard, or over a terminal an attach holds in raw mode. It
// goes to slog's default logger at Debug instead. klog's global is set
// here, before main, because setting it while client-go's goroutines log
// is a data race.
func init() {
	klog.SetLoggerWithOptions(logr.FromSlogHandler(debugOnly{defaultHandler{}}), klog.ContextualLogger(true))
}

// defaultHandler is slog's default logger's handler at each call.
type defaultHandler struct{}

func (defaultHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return slog.Default().Handler().Enabled(ctx, l)
}

func (defaultHandler) Handle(ctx context.Context, r slog.Record) error {
	return slog.Default().Handler().Handle(ctx, r)
}

func (defaultHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return slog.Default().Handler().WithAttrs(as)
}

func (defaultHandler) WithGroup(name string) slog.Handler {
	return slog.Default().Handler().WithGroup(name)
}

// quietly is ctx with client-go's logger sent to logger, every record
// at Debug: a list or watch that failed is tried again, and what matters
// comes back as an error.
func quietly(ctx context.Context, logger *slog.Logger) context.Context {
	return klog.NewContext(ctx, logr.FromSlogHandler(debugOnly{logger.Handler()}))
}

// debugOnly hands every record on at Debug.
type debugOnly struct{ h slog.Handler }

func (d debugOnly) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugOnly) Handle(ctx context.Context, r slog.Record) error {
	if !d.h.Enabled(ctx, slog.LevelDebug) {
		return nil // logr hands errors on unasked
	}
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugOnly) WithAttrs(as []slog.Attr) slog.Handler { return debugOnly{d.h.WithAttrs(as)} }

func (d debugOnly) WithGroup(name string) slog.Handler { return debugOnly{d.h.WithGroup(name)} }
