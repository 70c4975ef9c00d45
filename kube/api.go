package kube

// The backend talks to a handful of resources of five API groups. It does
// so through one rest.RESTClient per group-version over a scheme that
// knows only those groups, not through client-go's generated clientset
// (k8s.io/client-go/kubernetes), its all-groups scheme, the informer
// factory, the generated listers or discovery: linking those registers
// every API group of Kubernetes before main in every process of the
// binary — `version`, each `agent-run` runner — whether it touches a
// cluster or not (90 more package inits, 2 ms in the scheme alone, and
// 50 of the binary's 96 MB). client-go's generic typed client (gentype) is no way
// out: it links client-go's fake clientset machinery and protobuf.
// cmd/wave-orchestrator's TestBinaryLinksOnlyTheClientGoItUses keeps them
// out.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
)

// groupClients are the REST clients of the group-versions the backend
// uses, sharing one HTTP client and one rate limiter.
type groupClients struct {
	core, batch, coord, authz, authn rest.Interface
	params                           kruntime.ParameterCodec
}

func newGroupClients(cfg *rest.Config) (*groupClients, error) {
	s := kruntime.NewScheme()
	for _, add := range []func(*kruntime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme,
		coordv1.AddToScheme, authzv1.AddToScheme, authnv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("kubernetes client scheme: %w", err)
		}
	}
	// The options types (ListOptions, DeleteOptions…) as the API server
	// reads them.
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	codecs := rest.CodecFactoryForGeneratedClient(s, serializer.NewCodecFactory(s)).WithoutConversion()

	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		// One limiter for all groups, as the clientset has it.
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	g := &groupClients{params: kruntime.NewParameterCodec(s)}
	for _, c := range []struct {
		to   *rest.Interface
		gv   schema.GroupVersion
		path string
	}{
		{&g.core, corev1.SchemeGroupVersion, "/api"},
		{&g.batch, batchv1.SchemeGroupVersion, "/apis"},
		{&g.coord, coordv1.SchemeGroupVersion, "/apis"},
		{&g.authz, authzv1.SchemeGroupVersion, "/apis"},
		{&g.authn, authnv1.SchemeGroupVersion, "/apis"},
	} {
		if *c.to, err = restClient(cfg, hc, c.gv, c.path, codecs); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func restClient(cfg *rest.Config, hc *http.Client, gv schema.GroupVersion, path string, codecs kruntime.NegotiatedSerializer) (*rest.RESTClient, error) {
	c := *cfg
	c.GroupVersion, c.APIPath, c.NegotiatedSerializer = &gv, path, codecs
	rc, err := rest.RESTClientForConfigAndClient(&c, hc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", gv, err)
	}
	return rc, nil
}

// The resources the package uses, by where they live.

func (c *Client) pods(ns string) listable[corev1.Pod, corev1.PodList] {
	return listable[corev1.Pod, corev1.PodList]{newObjects[corev1.Pod](c.api.core, c.api.params, ns, "pods")}
}

func (c *Client) jobs(ns string) listable[batchv1.Job, batchv1.JobList] {
	return listable[batchv1.Job, batchv1.JobList]{newObjects[batchv1.Job](c.api.batch, c.api.params, ns, "jobs")}
}

func (c *Client) leases(ns string) listable[coordv1.Lease, coordv1.LeaseList] {
	return listable[coordv1.Lease, coordv1.LeaseList]{newObjects[coordv1.Lease](c.api.coord, c.api.params, ns, "leases")}
}

func (c *Client) secrets(ns string) objects[corev1.Secret] {
	return newObjects[corev1.Secret](c.api.core, c.api.params, ns, "secrets")
}

func (c *Client) namespaces() objects[corev1.Namespace] {
	return newObjects[corev1.Namespace](c.api.core, c.api.params, "", "namespaces")
}

func (c *Client) serviceAccounts(ns string) objects[corev1.ServiceAccount] {
	return newObjects[corev1.ServiceAccount](c.api.core, c.api.params, ns, "serviceaccounts")
}

func (c *Client) selfSubjectAccessReviews() objects[authzv1.SelfSubjectAccessReview] {
	return newObjects[authzv1.SelfSubjectAccessReview](c.api.authz, c.api.params, "", "selfsubjectaccessreviews")
}

func (c *Client) localSubjectAccessReviews(ns string) objects[authzv1.LocalSubjectAccessReview] {
	return newObjects[authzv1.LocalSubjectAccessReview](c.api.authz, c.api.params, ns, "localsubjectaccessreviews")
}

func (c *Client) subjectAccessReviews() objects[authzv1.SubjectAccessReview] {
	return newObjects[authzv1.SubjectAccessReview](c.api.authz, c.api.params, "", "subjectaccessreviews")
}

func (c *Client) selfSubjectReviews() objects[authnv1.SelfSubjectReview] {
	return newObjects[authnv1.SelfSubjectReview](c.api.authn, c.api.params, "", "selfsubjectreviews")
}

func newObjects[T any](rc rest.Interface, params kruntime.ParameterCodec, ns, name string) objects[T] {
	return objects[T]{rc: rc, params: params, ns: ns, name: name}
}

// serverVersion is the API server's /version, as discovery reads it.
func (c *Client) serverVersion(ctx context.Context) (*version.Info, error) {
	body, err := c.api.core.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var v version.Info
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("unexpected /version answer: %w", err)
	}
	return &v, nil
}

// objects are the objects (of type T) of one resource of a group-version
// in a namespace ("" for a cluster-scoped one). T is an API type whose
// pointer is a runtime.Object (each use above is exercised by the tests;
// a wrong one panics at its first call).
type objects[T any] struct {
	rc     rest.Interface
	params kruntime.ParameterCodec
	ns     string
	name   string // plural, as in the URL: "pods"
}

// obj is p as the runtime.Object it is.
func obj(p any) kruntime.Object { return p.(kruntime.Object) }

func (r objects[T]) req(q *rest.Request) *rest.Request {
	return q.NamespaceIfScoped(r.ns, r.ns != "").Resource(r.name)
}

func (r objects[T]) get(ctx context.Context, name string) (*T, error) {
	out := new(T)
	err := r.req(r.rc.Get()).Name(name).Do(ctx).Into(obj(out))
	return out, err
}

func (r objects[T]) create(ctx context.Context, o *T) (*T, error) {
	out := new(T)
	err := r.req(r.rc.Post()).Body(obj(o)).Do(ctx).Into(obj(out))
	return out, err
}

func (r objects[T]) patch(ctx context.Context, name string, pt types.PatchType, data []byte) (*T, error) {
	out := new(T)
	err := r.req(r.rc.Patch(pt)).Name(name).Body(data).Do(ctx).Into(obj(out))
	return out, err
}

func (r objects[T]) delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return r.req(r.rc.Delete()).Name(name).Body(&opts).Do(ctx).Error()
}

// listable are objects that are listed and watched; L is their list type.
type listable[T, L any] struct{ objects[T] }

func (r listable[T, L]) list(ctx context.Context, opts metav1.ListOptions) (*L, error) {
	out := new(L)
	err := r.req(r.rc.Get()).VersionedParams(&opts, r.params).Timeout(timeout(opts)).Do(ctx).Into(obj(out))
	return out, err
}

func (r listable[T, L]) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return r.req(r.rc.Get()).VersionedParams(&opts, r.params).Timeout(timeout(opts)).Watch(ctx)
}

func (r listable[T, L]) deleteCollection(ctx context.Context, opts metav1.DeleteOptions, lo metav1.ListOptions) error {
	return r.req(r.rc.Delete()).VersionedParams(&lo, r.params).Timeout(timeout(lo)).Body(&opts).Do(ctx).Error()
}

func timeout(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}

// informer watches r's objects that match the label selector sel into an
// indexed cache (the informer factory's informer, without the factory).
func informer[T, L any](r listable[T, L], sel string, indexers cache.Indexers) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
			opts.LabelSelector = sel
			l, err := r.list(ctx, opts)
			return obj(l), err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = sel
			return r.watch(ctx, opts)
		},
	}
	return cache.NewSharedIndexInformer(lw, obj(new(T)), 0, indexers)
}

// cached is the object ns/name in an informer's cache.
func cached[T any](inf cache.SharedIndexInformer, ns, name string) (*T, bool) {
	o, ok, err := inf.GetIndexer().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	t, ok := o.(*T)
	return t, ok
}
