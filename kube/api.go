package kube

// The backend talks to a handful of resources of five API groups, over
// its own small REST client (rest.go: JSON over net/http, the API's
// refusals as *StatusError, apierror.go), its own list+watch cache
// (cache.go), kubeconfig reader (kubeconfig.go, exec credential plugins
// in exec.go), WebSocket attach (attach.go, websocket.go) and API types
// (apimeta.go, apicore.go, apigroups.go: only the fields it uses). The
// binary links no k8s.io or sigs.k8s.io package at all: client-go, and
// after it k8s.io/api and apimachinery (scheme registration, validation
// regexps, json-iterator), initialised dozens of packages before main in
// every process of the binary — `version`, `status`, each `agent-run`
// runner — whether it touched a cluster or not.
// cmd/wave-orchestrator's TestBinaryLinksNoClientGo keeps them out; the
// tests may use them (manifest_golden_test.go holds the manifests to
// what k8s.io/api's types sent).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// The resources the package uses, by where they live.

func (c *Client) pods(ns string) listable[Pod] {
	return listable[Pod]{newObjects[Pod](c, "v1", "Pod", ns, "pods")}
}

func (c *Client) jobs(ns string) listable[Job] {
	return listable[Job]{newObjects[Job](c, "batch/v1", "Job", ns, "jobs")}
}

func (c *Client) leases(ns string) listable[Lease] {
	return listable[Lease]{newObjects[Lease](c, "coordination.k8s.io/v1", "Lease", ns, "leases")}
}

func (c *Client) secrets(ns string) objects[Secret] {
	return newObjects[Secret](c, "v1", "Secret", ns, "secrets")
}

func (c *Client) namespaces() objects[Namespace] {
	return newObjects[Namespace](c, "v1", "Namespace", "", "namespaces")
}

func (c *Client) serviceAccounts(ns string) objects[ServiceAccount] {
	return newObjects[ServiceAccount](c, "v1", "ServiceAccount", ns, "serviceaccounts")
}

const authz, authn = "authorization.k8s.io/v1", "authentication.k8s.io/v1"

func (c *Client) selfSubjectAccessReviews() objects[SelfSubjectAccessReview] {
	return newObjects[SelfSubjectAccessReview](c, authz, "SelfSubjectAccessReview", "", "selfsubjectaccessreviews")
}

func (c *Client) localSubjectAccessReviews(ns string) objects[LocalSubjectAccessReview] {
	return newObjects[LocalSubjectAccessReview](c, authz, "LocalSubjectAccessReview", ns, "localsubjectaccessreviews")
}

func (c *Client) subjectAccessReviews() objects[SubjectAccessReview] {
	return newObjects[SubjectAccessReview](c, authz, "SubjectAccessReview", "", "subjectaccessreviews")
}

func (c *Client) selfSubjectReviews() objects[SelfSubjectReview] {
	return newObjects[SelfSubjectReview](c, authn, "SelfSubjectReview", "", "selfsubjectreviews")
}

// newObjects is the resource name (plural, as in the URL) of kind, in
// group-version gv ("v1" for the core group).
func newObjects[T any](c *Client, gv, kind, ns, name string) objects[T] {
	group, version, ok := strings.Cut(gv, "/")
	if !ok {
		group, version = "", gv
	}
	return objects[T]{rc: c.api, group: group, version: version, kind: kind, ns: ns, name: name}
}

// serverVersion is the API server's /version.
func (c *Client) serverVersion(ctx context.Context) (*versionInfo, error) {
	var v versionInfo
	if err := c.api.do(ctx, apiRequest{method: "GET", path: "/version"}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// objects are the objects (of type T, an API type of apimeta.go's
// kind) of one resource of a group-version in a namespace (""
// for a cluster-scoped one).
type objects[T any] struct {
	rc                   *restClient
	group, version, kind string
	ns                   string
	name                 string // plural, as in the URL: "pods"
}

func (r objects[T]) apiVersion() string {
	if r.group == "" {
		return r.version
	}
	return r.group + "/" + r.version
}

// path is the URL path (unescaped: url.URL escapes it) of the resource, of its object name when set,
// and of that object's subresource sub.
func (r objects[T]) path(name, sub string) string {
	p := "/apis/" + r.group + "/" + r.version
	if r.group == "" {
		p = "/api/" + r.version
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
	q := apiRequest{method: method, path: r.path(name, ""), resource: groupResource{Group: r.group, Resource: r.name}, name: name}
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
	*any(&cp).(apiObject).types() = typeMeta{APIVersion: r.apiVersion(), Kind: r.kind}
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

func (r objects[T]) patch(ctx context.Context, name string, contentType string, data []byte) (*T, error) {
	q := r.request("PATCH", name)
	q.body, q.contentType = data, contentType
	out := new(T)
	return out, r.rc.do(ctx, q, out)
}

func (r objects[T]) delete(ctx context.Context, name string, opts deleteOptions) error {
	q := r.request("DELETE", name)
	var err error
	if q.body, err = deleteBody(opts); err != nil {
		return err
	}
	return r.rc.do(ctx, q, nil)
}

func deleteBody(opts deleteOptions) ([]byte, error) {
	opts.typeMeta = typeMeta{APIVersion: "v1", Kind: "DeleteOptions"}
	return json.Marshal(&opts)
}

// listable are objects that are listed and watched.
type listable[T any] struct{ objects[T] }

// list is the answer to a list: the items and the resourceVersion to
// watch from.
type list[T any] struct {
	Metadata listMeta `json:"metadata"`
	Items    []T      `json:"items"`
}

func (r listable[T]) list(ctx context.Context, opts listOptions) (*list[T], error) {
	q := r.request("GET", "")
	q.query = listQuery(opts)
	out := new(list[T])
	return out, r.rc.do(ctx, q, out)
}

func (r listable[T]) deleteCollection(ctx context.Context, opts deleteOptions, lo listOptions) error {
	q := r.request("DELETE", "")
	q.query = listQuery(lo)
	var err error
	if q.body, err = deleteBody(opts); err != nil {
		return err
	}
	return r.rc.do(ctx, q, nil)
}

// listQuery is opts as URL parameters (the ones this package sets).
func listQuery(opts listOptions) url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("labelSelector", opts.LabelSelector)
	set("fieldSelector", opts.FieldSelector)
	set("resourceVersion", opts.ResourceVersion)
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
