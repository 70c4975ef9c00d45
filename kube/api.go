package kube

// The backend talks to a handful of resources of five API groups through
// client-go's typed clients: gentype's, the generic ones every generated
// client of k8s.io/client-go/kubernetes/typed wraps, over one REST client
// per group-version and a scheme of just those five groups. The
// generated packages themselves are not linked: each imports
// k8s.io/client-go/kubernetes/scheme, whose init registers every API
// group of Kubernetes (57 group-versions) before main in every process
// of the binary — `version`, `status`, each `agent-run` runner — whether
// it touches a cluster or not; measured, that is 57 more package inits,
// about 2 ms more before main and 12 MB more binary than this.
// cmd/wave-orchestrator's TestBinaryLinksClientGoButNotTheAllGroupsClientset
// keeps it so.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/gentype"
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
type object[T any] interface {
	*T
	kruntime.Object
	metav1.Object
}

// listed is the pointer to an API list type.
type listed[L any] interface {
	*L
	kruntime.Object
}

// typed is the typed client of resource in namespace ns ("" for a
// cluster-scoped resource).
func typed[T any, L any, PT object[T], PL listed[L]](rc rest.Interface, params kruntime.ParameterCodec, resource, ns string) *gentype.ClientWithList[PT, PL] {
	return gentype.NewClientWithList[PT, PL](resource, rc, params, ns,
		func() PT { return PT(new(T)) }, func() PL { return PL(new(L)) })
}

// The resources the package uses, by where they live.

func (c *Client) pods(ns string) *gentype.ClientWithList[*corev1.Pod, *corev1.PodList] {
	return typed[corev1.Pod, corev1.PodList](c.api.core, c.api.params, "pods", ns)
}

func (c *Client) jobs(ns string) *gentype.ClientWithList[*batchv1.Job, *batchv1.JobList] {
	return typed[batchv1.Job, batchv1.JobList](c.api.batch, c.api.params, "jobs", ns)
}

func (c *Client) leases(ns string) *gentype.ClientWithList[*coordv1.Lease, *coordv1.LeaseList] {
	return typed[coordv1.Lease, coordv1.LeaseList](c.api.coord, c.api.params, "leases", ns)
}

func (c *Client) secrets(ns string) *gentype.ClientWithList[*corev1.Secret, *corev1.SecretList] {
	return typed[corev1.Secret, corev1.SecretList](c.api.core, c.api.params, "secrets", ns)
}

func (c *Client) namespaces() *gentype.ClientWithList[*corev1.Namespace, *corev1.NamespaceList] {
	return typed[corev1.Namespace, corev1.NamespaceList](c.api.core, c.api.params, "namespaces", "")
}

func (c *Client) serviceAccounts(ns string) *gentype.ClientWithList[*corev1.ServiceAccount, *corev1.ServiceAccountList] {
	return typed[corev1.ServiceAccount, corev1.ServiceAccountList](c.api.core, c.api.params, "serviceaccounts", ns)
}

func (c *Client) selfSubjectAccessReviews() *gentype.Client[*authzv1.SelfSubjectAccessReview] {
	return gentype.NewClient("selfsubjectaccessreviews", c.api.authz, c.api.params, "",
		func() *authzv1.SelfSubjectAccessReview { return new(authzv1.SelfSubjectAccessReview) })
}

func (c *Client) localSubjectAccessReviews(ns string) *gentype.Client[*authzv1.LocalSubjectAccessReview] {
	return gentype.NewClient("localsubjectaccessreviews", c.api.authz, c.api.params, ns,
		func() *authzv1.LocalSubjectAccessReview { return new(authzv1.LocalSubjectAccessReview) })
}

func (c *Client) subjectAccessReviews() *gentype.Client[*authzv1.SubjectAccessReview] {
	return gentype.NewClient("subjectaccessreviews", c.api.authz, c.api.params, "",
		func() *authzv1.SubjectAccessReview { return new(authzv1.SubjectAccessReview) })
}

func (c *Client) selfSubjectReviews() *gentype.Client[*authnv1.SelfSubjectReview] {
	return gentype.NewClient("selfsubjectreviews", c.api.authn, c.api.params, "",
		func() *authnv1.SelfSubjectReview { return new(authnv1.SelfSubjectReview) })
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
