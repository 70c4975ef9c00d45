package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
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

// ApplyManifest creates the ServiceAccounts, Roles and RoleBindings of
// the YAML file at path in ns (whatever namespace the file names; its
// Namespace objects stand for ns and are skipped), as `kubectl apply -n`
// would after a sed. Every User subject of its RoleBindings becomes user
// (the one change such a manifest asks of its reader); ServiceAccount
// subjects move to ns. edit, when set, changes each Role first. Any other
// kind fails t.
func (c *Cluster) ApplyManifest(t testing.TB, path, ns string, user rbacv1.Subject, edit func(*rbacv1.Role)) {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("kubetest: %s: %v", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("kubetest: %s: %v\n%s", path, err, doc)
		}
		switch o := obj.(type) {
		case *corev1.Namespace:
		case *corev1.ServiceAccount:
			o.Namespace = ns
			err = c.ensureServiceAccount(ctx, ns, o.Name)
		case *rbacv1.Role:
			o.Namespace = ns
			if edit != nil {
				edit(o)
			}
			_, err = c.client.RbacV1().Roles(ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			o.Namespace = ns
			for i := range o.Subjects {
				switch s := &o.Subjects[i]; s.Kind {
				case rbacv1.UserKind:
					*s = user
				case rbacv1.ServiceAccountKind:
					s.Namespace = ns
				}
			}
			_, err = c.client.RbacV1().RoleBindings(ns).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("kubetest: %s: unexpected %T", path, obj)
		}
		if err != nil {
			t.Fatalf("kubetest: %s: apply %T: %v", path, obj, err)
		}
	}
}
