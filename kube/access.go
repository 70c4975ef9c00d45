package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CheckStatus is how one cluster check came out.
type CheckStatus string

// Check outcomes. A skipped check could not be made with this user's
// rights; it is not a failure.
const (
	CheckOK      CheckStatus = "ok"
	CheckFailed  CheckStatus = "error"
	CheckSkipped CheckStatus = "skip"
)

// Check is one thing `doctor` and the launch preflight verify on the
// cluster, with the fix when it failed.
type Check struct {
	Name   string // cluster, image, namespace, permission, service account, runner
	Status CheckStatus
	Msg    string
	Fix    string
	// Permission is the one a failed permission or runner check is about.
	Permission *Permission
}

// String is the check on one line: name, what was found, the fix.
func (c Check) String() string {
	s := c.Name + ": " + c.Msg
	if c.Fix != "" {
		s += "; " + c.Fix
	}
	return s
}

// Failed keeps the failed checks.
func Failed(cs []Check) []Check {
	var out []Check
	for _, c := range cs {
		if c.Status == CheckFailed {
			out = append(out, c)
		}
	}
	return out
}

// Permission is one verb on one resource in the lane's namespace.
type Permission struct {
	Verb, Group, Resource, Subresource string
	// For says what needs it, for the message when it is missing.
	For string
}

// String names the permission the way RBAC spells it: "create
// jobs.batch", "get pods/attach", "patch leases.coordination.k8s.io".
func (p Permission) String() string {
	r := p.Resource
	if p.Group != "" {
		r += "." + p.Group
	}
	if p.Subresource != "" {
		r += "/" + p.Subresource
	}
	return p.Verb + " " + r
}

func (p Permission) attributes(ns string) *authzv1.ResourceAttributes {
	return &authzv1.ResourceAttributes{Namespace: ns, Verb: p.Verb, Group: p.Group,
		Resource: p.Resource, Subresource: p.Subresource}
}

// RBACManifest is where the Roles granting both sets live.
const RBACManifest = "docs/kubernetes/rbac.yaml"

// DefaultCheckTimeout bounds all of CheckCluster: an unreachable cluster
// must not hold `doctor` up.
const DefaultCheckTimeout = 10 * time.Second

// CheckCluster checks what a launch on the cluster needs: the image set,
// the API server reachable, the namespace there, every permission of
// LauncherPermissions granted to this user, the pods' ServiceAccount
// there and, when this user may ask, its permission to renew Leases.
// Nothing is created. timeout (DefaultCheckTimeout when 0) bounds it all.
// When the server cannot be reached no other cluster check is made; when
// the namespace is missing, nothing in it is looked for.
func CheckCluster(ctx context.Context, c *Client, o Options, timeout time.Duration) []Check {
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	checks := []Check{imageCheck(o)}
	reach := reachable(ctx, c, timeout)
	checks = append(checks, reach)
	if reach.Status != CheckOK {
		return checks
	}
	ns := namespaceCheck(ctx, c, o.Namespace)
	checks = append(checks, ns)
	checks = append(checks, permissionChecks(ctx, c, o.Namespace)...)
	if ns.Status == CheckFailed {
		// What lives in the namespace is missing with it.
		return checks
	}
	checks = append(checks, serviceAccountCheck(ctx, c, o))
	if o.GitCredentialsSecret != "" {
		checks = append(checks, gitCredentialsCheck(ctx, c, o))
	}
	return append(checks, runnerChecks(ctx, c, o)...)
}

func imageCheck(o Options) Check {
	if strings.TrimSpace(o.Image) == "" {
		return Check{Name: "image", Status: CheckFailed, Msg: "runtime.kubernetes.image is not set",
			Fix: "set it to an image holding wave-orchestrator at " + o.binary() + " and the agent CLIs (docs/kubernetes.md)"}
	}
	return Check{Name: "image", Status: CheckOK,
		Msg: fmt.Sprintf("%s, wave-orchestrator expected at %s in it (the image is not pulled here)", o.Image, o.binary())}
}

// where names the server and the kubeconfig context for messages.
func (c *Client) where() string {
	if c.Context == "" {
		return c.Config.Host
	}
	return fmt.Sprintf("%s (kubeconfig context %q)", c.Config.Host, c.Context)
}

func reachable(ctx context.Context, c *Client, timeout time.Duration) Check {
	v, err := c.serverVersion(ctx)
	ck := Check{Name: "cluster", Status: CheckFailed}
	switch {
	case err == nil:
		ck.Status, ck.Msg = CheckOK, fmt.Sprintf("%s answers, Kubernetes %s", c.where(), v.GitVersion)
	case apierrors.IsUnauthorized(err):
		ck.Msg = fmt.Sprintf("%s refused this client's credentials (401 Unauthorized)", c.where())
		ck.Fix = "renew the kubeconfig's credentials, or pick another context (runtime.kubernetes.context)"
	case apierrors.IsForbidden(err):
		// /version is normally public; a server that hides it still
		// answered.
		ck.Status, ck.Msg = CheckOK, fmt.Sprintf("%s answers (its version is not readable)", c.where())
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		ck.Msg = fmt.Sprintf("%s did not answer within %s", c.where(), timeout)
		ck.Fix = "check that the cluster is up and reachable from here, and that runtime.kubernetes.kubeconfig/context (or $KUBECONFIG) point at it"
	default:
		ck.Msg = fmt.Sprintf("cannot reach %s: %s", c.where(), oneLine(err.Error()))
		ck.Fix = "check that the cluster is up and reachable from here, and that runtime.kubernetes.kubeconfig/context (or $KUBECONFIG) point at it"
	}
	return ck
}

func namespaceCheck(ctx context.Context, c *Client, ns string) Check {
	n, err := c.namespaces().Get(ctx, ns, metav1.GetOptions{})
	ck := Check{Name: "namespace", Status: CheckFailed}
	switch {
	case err == nil && n.Status.Phase == corev1.NamespaceTerminating:
		ck.Msg = fmt.Sprintf("namespace %s is being deleted", ns)
		ck.Fix = "wait until it is gone and create it again, or set runtime.kubernetes.namespace"
	case err == nil:
		ck.Status, ck.Msg = CheckOK, fmt.Sprintf("namespace %s exists", ns)
	case apierrors.IsNotFound(err):
		ck.Msg = fmt.Sprintf("namespace %s does not exist", ns)
		ck.Fix = fmt.Sprintf("create it (kubectl create namespace %s) or set runtime.kubernetes.namespace", ns)
	case apierrors.IsForbidden(err):
		// A namespaced Role cannot grant reading the namespace itself.
		ck.Status = CheckSkipped
		ck.Msg = fmt.Sprintf("namespace %s cannot be checked: this user may not get namespaces (a Role in the namespace cannot grant it; the permission checks below still tell)", ns)
	default:
		ck.Msg = fmt.Sprintf("namespace %s: %s", ns, oneLine(err.Error()))
	}
	return ck
}

// selfReview asks whether this user may do what a names.
func selfReview(a *authzv1.ResourceAttributes) *authzv1.SelfSubjectAccessReview {
	return &authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: a}}
}

// canI asks the API server whether this user may do p in ns.
func canI(ctx context.Context, c *Client, ns string, p Permission) (bool, error) {
	r, err := c.selfSubjectAccessReviews().Create(ctx, selfReview(p.attributes(ns)), metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("access review %s in namespace %s: %w", p, ns, err)
	}
	return r.Status.Allowed, nil
}

// whoAmI names this client's user for messages ("" when the server
// will not say).
func whoAmI(ctx context.Context, c *Client) string {
	r, err := c.selfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return ""
	}
	return r.Status.UserInfo.Username
}

// permissionChecks reviews every launcher permission (in parallel: a
// remote cluster is a round trip each): one failed check per missing
// permission, or one ok check for all.
func permissionChecks(ctx context.Context, c *Client, ns string) []Check {
	perms := LauncherPermissions()
	allowed := make([]bool, len(perms))
	errs := make([]error, len(perms))
	var user string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); user = whoAmI(ctx, c) }()
	for i, p := range perms {
		wg.Add(1)
		go func() { defer wg.Done(); allowed[i], errs[i] = canI(ctx, c, ns, p) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		first, _, _ := strings.Cut(err.Error(), "\n")
		return []Check{{Name: "permission", Status: CheckFailed, Msg: "cannot be checked: " + oneLine(first),
			Fix: "SelfSubjectAccessReviews are open to every authenticated user on a standard cluster; check the credentials"}}
	}
	who := "this user"
	if user != "" {
		who = fmt.Sprintf("user %q", user)
	}
	var out []Check
	for i, p := range perms {
		if !allowed[i] {
			out = append(out, Check{Name: "permission", Status: CheckFailed, Permission: &p,
				Msg: fmt.Sprintf("%s cannot %s in namespace %s (needed to %s)", who, p, ns, p.For),
				Fix: fmt.Sprintf("bind %s to the launcher's Role in %s (docs/kubernetes.md)", who, RBACManifest)})
		}
	}
	if len(out) == 0 {
		out = append(out, Check{Name: "permission", Status: CheckOK,
			Msg: fmt.Sprintf("%s has all %d permissions the launcher needs in namespace %s", who, len(perms), ns)})
	}
	return out
}

// serviceAccount is the pods' ServiceAccount: the configured one, else
// the namespace's default.
func (o Options) serviceAccount() string {
	if o.ServiceAccount == "" {
		return "default"
	}
	return o.ServiceAccount
}

func serviceAccountCheck(ctx context.Context, c *Client, o Options) Check {
	ns, sa := o.Namespace, o.serviceAccount()
	_, err := c.serviceAccounts(ns).Get(ctx, sa, metav1.GetOptions{})
	ck := Check{Name: "service account", Status: CheckFailed}
	switch {
	case err == nil:
		ck.Status, ck.Msg = CheckOK, fmt.Sprintf("%s/%s exists (the pods run as it)", ns, sa)
	case apierrors.IsNotFound(err):
		ck.Msg = fmt.Sprintf("%s/%s does not exist: admission refuses every pod of the lane, so no agent would start", ns, sa)
		ck.Fix = fmt.Sprintf("create it (%s has one, with the runner's Role) or set runtime.kubernetes.serviceAccount", RBACManifest)
	case apierrors.IsForbidden(err):
		ck.Status = CheckSkipped
		ck.Msg = fmt.Sprintf("%s/%s cannot be checked: this user may not get serviceaccounts in namespace %s", ns, sa, ns)
	default:
		ck.Msg = fmt.Sprintf("%s/%s: %s", ns, sa, oneLine(err.Error()))
	}
	return ck
}

// runnerChecks reviews the ServiceAccount's own permissions, which takes
// a (Local)SubjectAccessReview: with neither right it only says what the
// account needs.
func runnerChecks(ctx context.Context, c *Client, o Options) []Check {
	ns, sa := o.Namespace, o.serviceAccount()
	local, _ := canI(ctx, c, ns, Permission{Verb: "create", Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"})
	cluster := false
	if !local {
		cluster, _ = canI(ctx, c, "", Permission{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"})
	}
	var out []Check
	for _, p := range RunnerPermissions() {
		ck := Check{Name: "runner", Permission: &p}
		switch {
		case !local && !cluster:
			ck.Status = CheckSkipped
			ck.Msg = fmt.Sprintf("service account %s/%s needs %s in namespace %s (to %s); not checked: this user may not create subject access reviews", ns, sa, p, ns, p.For)
		default:
			ok, err := saCan(ctx, c, local, ns, sa, p)
			switch {
			case err != nil:
				ck.Status, ck.Msg = CheckFailed, oneLine(err.Error())
			case ok:
				ck.Status, ck.Msg = CheckOK, fmt.Sprintf("service account %s/%s may %s in namespace %s", ns, sa, p, ns)
			default:
				ck.Status = CheckFailed
				ck.Msg = fmt.Sprintf("service account %s/%s cannot %s in namespace %s: its runner could not %s, so every run would be lost", ns, sa, p, ns, p.For)
				ck.Fix = fmt.Sprintf("apply the runner's Role and RoleBinding of %s", RBACManifest)
			}
		}
		out = append(out, ck)
	}
	return out
}

// saCan asks whether ServiceAccount ns/sa may do p, as the API server
// would authorize its token (user and groups).
func saCan(ctx context.Context, c *Client, local bool, ns, sa string, p Permission) (bool, error) {
	spec := authzv1.SubjectAccessReviewSpec{
		ResourceAttributes: p.attributes(ns),
		User:               "system:serviceaccount:" + ns + ":" + sa,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	var st authzv1.SubjectAccessReviewStatus
	if local {
		r, err := c.localSubjectAccessReviews(ns).Create(ctx,
			&authzv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("access review of service account %s/%s: %w", ns, sa, err)
		}
		st = r.Status
	} else {
		r, err := c.subjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("access review of service account %s/%s: %w", ns, sa, err)
		}
		st = r.Status
	}
	return st.Allowed, nil
}

// oneLine keeps a message on its line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
