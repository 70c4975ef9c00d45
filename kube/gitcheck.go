package kube

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gitCredentialsCheck says whether the git credentials Secret backlog
// workers' pods mount is there with its two keys. The launcher's Role
// grants no reading of Secrets (docs/kubernetes.md, RBAC), so it reads
// this one only when the API server says this user may read it by name;
// otherwise it says how to check and what a missing one does. The
// Secret's values are never read into a message.
func gitCredentialsCheck(ctx context.Context, c *Client, o Options) Check {
	ns, name := o.Namespace, o.GitCredentialsSecret
	ck := Check{Name: "git credentials", Status: CheckFailed}
	r, err := c.selfSubjectAccessReviews().Create(ctx, selfReview(&authzv1.ResourceAttributes{
		Namespace: ns, Verb: "get", Resource: "secrets", Name: name}), metav1.CreateOptions{})
	if err != nil {
		ck.Msg = fmt.Sprintf("secret %s/%s cannot be checked: %s", ns, name, oneLine(err.Error()))
		return ck
	}
	if !r.Status.Allowed {
		ck.Status = CheckSkipped
		ck.Msg = fmt.Sprintf("secret %s/%s (runtime.kubernetes.gitCredentialsSecret) not checked: the launcher may not read Secrets; a missing one keeps each backlog worker's pod from starting, and the run fails naming it", ns, name)
		ck.Fix = fmt.Sprintf("check it with kubectl get secret -n %s %s -o jsonpath='{.data}' (keys username and password), or grant get on it by resourceNames (docs/kubernetes.md)", ns, name)
		return ck
	}
	s, err := c.secrets(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		ck.Msg = fmt.Sprintf("secret %s/%s (runtime.kubernetes.gitCredentialsSecret) does not exist: no backlog worker's pod could start", ns, name)
		ck.Fix = fmt.Sprintf("kubectl create secret generic -n %s %s --type=kubernetes.io/basic-auth --from-literal=username=<user> --from-file=password=<token file>", ns, name)
	case err != nil:
		ck.Msg = fmt.Sprintf("secret %s/%s: %s", ns, name, oneLine(err.Error()))
	case len(s.Data["username"]) == 0 || len(s.Data["password"]) == 0:
		ck.Msg = fmt.Sprintf("secret %s/%s lacks username or password: the workers' git could not authenticate to origin", ns, name)
		ck.Fix = "give it both keys (a kubernetes.io/basic-auth Secret)"
	default:
		ck.Status, ck.Msg = CheckOK, fmt.Sprintf("secret %s/%s has username and password (mounted into backlog workers' pods)", ns, name)
	}
	return ck
}
