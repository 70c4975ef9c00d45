package kubetest

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BindServiceAccount creates ServiceAccount ns/sa (if missing) and a Role
// named after it holding rules, bound to it: the account may do exactly
// that in ns.
func (c *Cluster) BindServiceAccount(t testing.TB, ns, sa string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	if err := c.ensureServiceAccount(ctx, ns, sa); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa}, Rules: rules}
	if _, err := c.client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubetest: create role %s/%s: %v", ns, sa, err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}}
	if _, err := c.client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubetest: create role binding %s/%s: %v", ns, sa, err)
	}
}
