// Package kubetest owns the Kubernetes test harness: a real etcd and
// kube-apiserver started on 127.0.0.1 for a test binary (Start, Shared),
// with static-token users and real ServiceAccount tokens, and a Node that
// plays the parts of a cluster this machine lacks for Jobs — the Job
// controller, the garbage collector and a kubelet that runs each pod's
// container as a local process and reports its status as a kubelet
// would. It knows Kubernetes, not wave-orchestrator.
//
// The binaries come from scripts/kube-test-env.sh (or $KUBE_APISERVER and
// $ETCD). Without them the tests skip, unless $CI or $KUBETEST_REQUIRED
// is set, when they fail. $KUBETEST_CONTROLLER_MANAGER runs the real
// kube-controller-manager's Job, garbage-collector and TTL controllers in
// place of the Node's; $KUBETEST_EXISTING_CLUSTER uses the cluster of
// $KUBECONFIG instead of starting one (tests that need a Node skip there).
package kubetest
