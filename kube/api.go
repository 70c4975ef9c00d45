package kube

// The backend talks to a handful of resources of five API groups, over
// its own small REST client (rest.go: JSON over net/http, client-go's
// error type apierrors.StatusError for the API's refusals), its own
// list+watch cache (cache.go), kubeconfig reader (kubeconfig.go, exec
// credential plugins in exec.go) and WebSocket attach (attach.go,
// websocket.go). The binary links no k8s.io/client-go package: client-go
// initialises dozens of packages before main in every process of the
// binary — `version`, each `agent-run` runner — whether it touches a
// cluster or not. The API types stay k8s.io/api's and apimachinery's.
// cmd/wave-orchestrator's TestBinaryLinksNoClientGo keeps client-go out.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
)

// The resources the package uses, by where they live.

func (c *Client) pods(ns string) listable[corev1.Pod] {
	return listable[corev1.Pod]{newObjects[corev1.Pod](c, corev1.SchemeGroupVersion, "Pod", ns, "pods")}
}

func (c *Client) jobs(ns string) listable[batchv1.Job] {
	return listable[batchv1.Job]{newObjects[batchv1.Job](c, batchv1.SchemeGroupVersion, "Job", ns, "jobs")}
}

func (c *Client) leases(ns string) listable[coordv1.Lease] {
	return listable[coordv1.Lease]{newObjects[coordv1.Lease](c, coordv1.SchemeGroupVersion, "Lease", ns, "leases")}
}

func (c *Client) secrets(ns string) objects[corev1.Secret] {
	return newObjects[corev1.Secret](c, corev1.SchemeGroupVersion, "Secret", ns, "secrets")
}

func (c *Client) namespaces() objects[corev1.Namespace] {
	return newObjects[corev1.Namespace](c, corev1.SchemeGroupVersion, "Namespace", "", "namespaces")
}

func (c *Client) serviceAccounts(ns string) objects[corev1.ServiceAccount] {
	return newObjects[corev1.ServiceAccount](c, corev1.SchemeGroupVersion, "ServiceAccount", ns, "serviceaccounts")
}

func (c *Client) selfSubjectAccessReviews() objects[authzv1.SelfSubjectAccessReview] {
	return newObjects[authzv1.SelfSubjectAccessReview](c, authzv1.SchemeGroupVersion, "SelfSubjectAccessReview", "", "selfsubjectaccessreviews")
}

func (c *Client) localSubjectAccessReviews(ns string) objects[authzv1.LocalSubjectAccessReview] {
	return newObjects[authzv1.LocalSubjectAccessReview](c, authzv1.SchemeGroupVersion, "LocalSubjectAccessReview", ns, "localsubjectaccessreviews")
}

func (c *Client) subjectAccessReviews() objects[authzv1.SubjectAccessReview] {
	return newObjects[authzv1.SubjectAccessReview](c, authzv1.SchemeGroupVersion, "SubjectAccessReview", "", "subjectaccessreviews")
}

func (c *Client) selfSubjectReviews() objects[authnv1.SelfSubjectReview] {
	return newObjects[authnv1.SelfSubjectReview](c, authnv1.SchemeGroupVersion, "SelfSubjectReview", "", "selfsubjectreviews")
}

func newObjects[T any](c *Client, gv schema.GroupVersion, kind, ns, name string) objects[T] {
	return objects[T]{rc: c.api, gvk: gv.WithKind(kind), ns: ns, name: name}
}

// serverVersion is the API server's /version.
func (c *Client) serverVersion(ctx context.Context) (*version.Info, error) {
	var v version.Info
	if err := c.api.do(ctx, apiRequest{method: "GET", path: "/version"}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// objects are the objects (of type T, an API type whose pointer is a
// runtime.Object) of one resource of a group-version in a namespace (""
// for a cluster-scoped one).
type objects[T any] struct {
	rc   *restClient
	gvk  schema.GroupVersionKind
	ns   string
	name string // plural, as in the URL: "pods"
}

// obj is p as the runtime.Object it is.
func obj(p any) kruntime.Object { return p.(kruntime.Object) }

// path is the URL path (unescaped: url.URL escapes it) of the resource, of its object name when set,
// and of that object's subresource sub.
func (r objects[T]) path(name, sub string) string {
	p := "/apis/" + r.gvk.Group + "/" + r.gvk.Version
	if r.gvk.Group == "" {
		p = "/api/" + r.gvk.Version
	}
	if r.ns != "" {
		p += "/namespaces/" + r.ns
	}
	p += "/" + r.name
	if name != "" {
		p += "/" + name
	}
	if sub != "" {
		p += "/" + sub
	}
	return p
}

func (r objects[T]) request(method, name string) apiRequest {
	q := apiRequest{method: method, path: r.path(name, ""), resource: schema.GroupResource{Group: r.gvk.Group, Resource: r.name}, name: name}
	for _, seg := range []string{r.ns, name} {
		if seg == "." || seg == ".." || strings.ContainsAny(seg, "/%") {
			q.invalid = fmt.Errorf("invalid %s name %q: it may not be '.' or '..' nor contain '/' or '%%'", r.name, seg)
		}
	}
	return q
}

// encode is o as JSON with its apiVersion and kind set.
func (r objects[T]) encode(o *T) ([]byte, error) {
	cp := *o
	obj(&cp).GetObjectKind().SetGroupVersionKind(r.gvk)
	return json.Marshal(&cp)
}

func (r objects[T]) get(ctx context.Context, name string) (*T, error) {
	out := new(T)
	return out, r.rc.do(ctx, r.request("GET", name), out)
}

func (r objects[T]) create(ctx context.Context, o *T) (*T, error) {
	q := r.request("POST", "")
	var err error
	if q.body, err = r.encode(o); err != nil {
		return nil, err
	}
	out := new(T)
	return out, r.rc.do(ctx, q, out)
}

func (r objects[T]) patch(ctx context.Context, name string, pt types.PatchType, data []byte) (*T, error) {
	q := r.request("PATCH", name)
	q.body, q.contentType = data, string(pt)
	out := new(T)
	return out, r.rc.do(ctx, q, out)
}

func (r objects[T]) delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	q := r.request("DELETE", name)
	var err error
	if q.body, err = deleteBody(opts); err != nil {
		return err
	}
	return r.rc.do(ctx, q, nil)
}

func deleteBody(opts metav1.DeleteOptions) ([]byte, error) {
	opts.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}
	return json.Marshal(&opts)
}

// listable are objects that are listed and watched.
type listable[T any] struct{ objects[T] }

// list is the answer to a list: the items and the resourceVersion to
// watch from.
type list[T any] struct {
	Metadata metav1.ListMeta `json:"metadata"`
	Items    []T             `json:"items"`
}

func (r listable[T]) list(ctx context.Context, opts metav1.ListOptions) (*list[T], error) {
	q := r.request("GET", "")
	q.query = listQuery(opts)
	out := new(list[T])
	return out, r.rc.do(ctx, q, out)
}

func (r listable[T]) deleteCollection(ctx context.Context, opts metav1.DeleteOptions, lo metav1.ListOptions) error {
	q := r.request("DELETE", "")
	q.query = listQuery(lo)
	var err error
	if q.body, err = deleteBody(opts); err != nil {
		return err
	}
	return r.rc.do(ctx, q, nil)
}

// listQuery is opts as URL parameters (the ones this package sets).
func listQuery(opts metav1.ListOptions) url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("labelSelector", opts.LabelSelector)
	set("fieldSelector", opts.FieldSelector)
	set("resourceVersion", opts.ResourceVersion)
	set("resourceVersionMatch", string(opts.ResourceVersionMatch))
	set("continue", opts.Continue)
	if opts.Watch {
		v.Set("watch", "true")
	}
	if opts.AllowWatchBookmarks {
		v.Set("allowWatchBookmarks", "true")
	}
	if opts.TimeoutSeconds != nil {
		v.Set("timeoutSeconds", strconv.FormatInt(*opts.TimeoutSeconds, 10))
	}
	if opts.Limit > 0 {
		v.Set("limit", strconv.FormatInt(opts.Limit, 10))
	}
	return v
}

// metaOf is the object metadata of p (a pointer to an API type).
func metaOf(p any) metav1.Object {
	m, ok := p.(metav1.Object)
	if !ok {
		panic(fmt.Sprintf("kube: %T has no object metadata", p))
	}
	return m
}
