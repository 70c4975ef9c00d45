package kube

// The backend talks to a handful of resources of five API groups through
// client-go's REST clients, one per group-version over a scheme of just
// those five groups, each resource behind a typed client with the methods
// (and signatures) of client-go's generated ones (typed, below). Neither
// the generated typed clients nor the generic ones they wrap (gentype)
// are linked, for what they would bring into every process of the
// binary — `version`, `status`, each `agent-run` runner — whether it
// touches a cluster or not (measured on a loaded 2-core machine):
//   - k8s.io/client-go/kubernetes/typed/...: their scheme package, whose
//     init registers every API group of Kubernetes (57 group-versions):
//     57 more package inits, about 2 ms more before main, 12 MB more;
//   - gentype: client-go's fakes (client-go/testing) and with them 81
//     packages (protobuf, OpenAPI models, structured-merge-diff, which
//     parses a YAML schema at init): 36 more inits, about 2 ms, 3.7 MB.
// cmd/wave-orchestrator's TestBinaryLinksClientGoButNotTheAllGroupsClientset
// keeps both out.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	"k8s.io/client-go/util/flowcontrol"
)

// newScheme knows the five groups' types, and the options types
// (ListOptions, DeleteOptions…) as the API server reads them.
func newScheme() (*kruntime.Scheme, error) {
	s := kruntime.NewScheme()
	for _, add := range []func(*kruntime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme,
		coordv1.AddToScheme, authzv1.AddToScheme, authnv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("kubernetes client scheme: %w", err)
		}
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s, nil
}

// groupClients are the REST clients of the group-versions the backend
// uses, sharing one HTTP client and one rate limiter.
type groupClients struct {
	core, batch, coord, authz, authn rest.Interface
	params                           kruntime.ParameterCodec
}

func newGroupClients(cfg *rest.Config) (*groupClients, error) {
	s, err := newScheme()
	if err != nil {
		return nil, err
	}
	codecs := rest.CodecFactoryForGeneratedClient(s, serializer.NewCodecFactory(s)).WithoutConversion()
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return htmlElided{rt} })
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		// One limiter for all groups, as a clientset has it.
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

// htmlElided keeps the HTML page a proxy answers an error with (a 502
// from a load balancer) out of the error client-go makes of it, which
// would quote it: the error says the status and that a page came.
type htmlElided struct{ next http.RoundTripper }

func (h htmlElided) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		return resp, err
	}
	resp.Body.Close()
	resp.Header.Set("Content-Type", "text/plain")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Body = io.NopCloser(strings.NewReader("(an HTML page)"))
	return resp, nil
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

// object is what a typed client sends and reads: an API type's pointer.
type object[E any] interface {
	*E
	kruntime.Object
	metav1.Object
}

// typed is the typed client of one resource in a namespace ("" for a
// cluster-scoped one): client-go's REST client with the object and list
// types fixed, the methods (and their signatures) of a generated typed
// client that the backend uses.
type typed[T object[E], L kruntime.Object, E any] struct {
	rc       rest.Interface
	params   kruntime.ParameterCodec
	resource string
	ns       string
	newList  func() L
}

func newTyped[T object[E], L kruntime.Object, E any](rc rest.Interface, params kruntime.ParameterCodec, resource, ns string, newList func() L) typed[T, L, E] {
	return typed[T, L, E]{rc: rc, params: params, resource: resource, ns: ns, newList: newList}
}

func (r typed[T, L, E]) on(q *rest.Request) *rest.Request {
	return q.NamespaceIfScoped(r.ns, r.ns != "").Resource(r.resource)
}

func timeout(secs *int64) time.Duration {
	if secs == nil {
		return 0
	}
	return time.Duration(*secs) * time.Second
}

func (r typed[T, L, E]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := T(new(E))
	err := r.on(r.rc.Get()).Name(name).VersionedParams(&opts, r.params).Do(ctx).Into(out)
	return out, err
}

func (r typed[T, L, E]) Create(ctx context.Context, o T, opts metav1.CreateOptions) (T, error) {
	out := T(new(E))
	err := r.on(r.rc.Post()).VersionedParams(&opts, r.params).Body(o).Do(ctx).Into(out)
	return out, err
}

func (r typed[T, L, E]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (T, error) {
	out := T(new(E))
	err := r.on(r.rc.Patch(pt)).Name(name).VersionedParams(&opts, r.params).Body(data).Do(ctx).Into(out)
	return out, err
}

func (r typed[T, L, E]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return r.on(r.rc.Delete()).Name(name).Body(&opts).Do(ctx).Error()
}

func (r typed[T, L, E]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := r.newList()
	err := r.on(r.rc.Get()).VersionedParams(&opts, r.params).Timeout(timeout(opts.TimeoutSeconds)).Do(ctx).Into(out)
	return out, err
}

func (r typed[T, L, E]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return r.on(r.rc.Get()).VersionedParams(&opts, r.params).Timeout(timeout(opts.TimeoutSeconds)).Watch(ctx)
}

func (r typed[T, L, E]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, lo metav1.ListOptions) error {
	return r.on(r.rc.Delete()).VersionedParams(&lo, r.params).Timeout(timeout(lo.TimeoutSeconds)).Body(&opts).Do(ctx).Error()
}

// The resources the package uses, by where they live.

func (c *Client) pods(ns string) typed[*corev1.Pod, *corev1.PodList, corev1.Pod] {
	return newTyped[*corev1.Pod](c.api.core, c.api.params, "pods", ns, func() *corev1.PodList { return new(corev1.PodList) })
}

func (c *Client) jobs(ns string) typed[*batchv1.Job, *batchv1.JobList, batchv1.Job] {
	return newTyped[*batchv1.Job](c.api.batch, c.api.params, "jobs", ns, func() *batchv1.JobList { return new(batchv1.JobList) })
}

func (c *Client) leases(ns string) typed[*coordv1.Lease, *coordv1.LeaseList, coordv1.Lease] {
	return newTyped[*coordv1.Lease](c.api.coord, c.api.params, "leases", ns, func() *coordv1.LeaseList { return new(coordv1.LeaseList) })
}

func (c *Client) secrets(ns string) typed[*corev1.Secret, *corev1.SecretList, corev1.Secret] {
	return newTyped[*corev1.Secret](c.api.core, c.api.params, "secrets", ns, func() *corev1.SecretList { return new(corev1.SecretList) })
}

func (c *Client) namespaces() typed[*corev1.Namespace, *corev1.NamespaceList, corev1.Namespace] {
	return newTyped[*corev1.Namespace](c.api.core, c.api.params, "namespaces", "", func() *corev1.NamespaceList { return new(corev1.NamespaceList) })
}

func (c *Client) serviceAccounts(ns string) typed[*corev1.ServiceAccount, *corev1.ServiceAccountList, corev1.ServiceAccount] {
	return newTyped[*corev1.ServiceAccount](c.api.core, c.api.params, "serviceaccounts", ns, func() *corev1.ServiceAccountList { return new(corev1.ServiceAccountList) })
}

// review is the typed client of an access review (created only).
type review[T object[E], E any] = typed[T, *metav1.Status, E]

func (c *Client) selfSubjectAccessReviews() review[*authzv1.SelfSubjectAccessReview, authzv1.SelfSubjectAccessReview] {
	return newTyped[*authzv1.SelfSubjectAccessReview, *metav1.Status](c.api.authz, c.api.params, "selfsubjectaccessreviews", "", nil)
}

func (c *Client) localSubjectAccessReviews(ns string) review[*authzv1.LocalSubjectAccessReview, authzv1.LocalSubjectAccessReview] {
	return newTyped[*authzv1.LocalSubjectAccessReview, *metav1.Status](c.api.authz, c.api.params, "localsubjectaccessreviews", ns, nil)
}

func (c *Client) subjectAccessReviews() review[*authzv1.SubjectAccessReview, authzv1.SubjectAccessReview] {
	return newTyped[*authzv1.SubjectAccessReview, *metav1.Status](c.api.authz, c.api.params, "subjectaccessreviews", "", nil)
}

func (c *Client) selfSubjectReviews() review[*authnv1.SelfSubjectReview, authnv1.SelfSubjectReview] {
	return newTyped[*authnv1.SelfSubjectReview, *metav1.Status](c.api.authn, c.api.params, "selfsubjectreviews", "", nil)
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
