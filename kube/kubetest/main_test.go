package kubetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

var cluster kubetest.Shared

func TestMain(m *testing.M) {
	if os.Getenv("KUBETEST_HELPER") == "whoami" {
		os.Exit(whoAmIHelper())
	}
	os.Exit(cluster.Run(m))
}

// identityReport is what the whoami helper, run as a pod's process,
// finds out about itself.
type identityReport struct {
	User, Namespace, SecretsError string
	Env                           []string
}

// whoAmIHelper plays a program in a pod: it loads its client config the
// usual way, asks who it is, tries something its ServiceAccount may not
// do, and writes the findings as its termination message.
func whoAmIHelper() int {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil)
	cfg, err := cc.ClientConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var r identityReport
	r.Namespace, _, _ = cc.Namespace()
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ssr, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r.User = ssr.Status.UserInfo.Username
	if _, err := cs.CoreV1().Secrets(r.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
		r.SecretsError = err.Error()
	}
	for _, kv := range os.Environ() {
		r.Env = append(r.Env, strings.SplitN(kv, "=", 2)[0])
	}
	sort.Strings(r.Env)
	data, _ := json.Marshal(r)
	if err := os.WriteFile(os.Getenv("TERMINATION_PATH"), data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}
