package kube

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDoctorTellsAMissingGitCredentialsSecretWhenItMayReadItAndHowToCheckWhenNot(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	ns := kc.Namespace(t, "gitcred")
	applyManifest(t, kc, ns, "bob", nil)
	c := testClient(t, kc.UserConfig("bob"))
	o := Options{Namespace: ns, Image: "agents:1", ServiceAccount: runnerSA, GitCredentialsSecret: "wave-git"}
	ctx := context.Background()

	// The shipped Role reads no Secrets: the check says how to make it.
	ck := named(checkCluster(t, c, o), "git credentials")
	if len(ck) != 1 || ck[0].Status != CheckSkipped || !strings.Contains(ck[0].Fix, "kubectl get secret -n "+ns+" wave-git") {
		t.Fatalf("without read rights: %s", dump(ck))
	}

	// Granted get on that one Secret by name, doctor looks.
	admin := kc.AdminClient()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-git-creds", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"wave-git"}, Verbs: []string{"get"}}}}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "read-git-creds", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-git-creds"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "doctor finds the Secret missing", func() bool {
		ck = named(checkCluster(t, c, o), "git credentials")
		return len(ck) == 1 && ck[0].Status == CheckFailed && strings.Contains(ck[0].Msg, "does not exist")
	})
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "wave-git", Namespace: ns}, Type: corev1.SecretTypeBasicAuth,
		Data: map[string][]byte{"username": []byte("u"), "password": []byte("hunter2-token")}}
	if _, err := admin.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ck = named(checkCluster(t, c, o), "git credentials")
	if len(ck) != 1 || ck[0].Status != CheckOK || strings.Contains(dump(ck), "hunter2") {
		t.Fatalf("with the Secret there: %s", dump(ck))
	}
}
