// Package kubernetes holds end-to-end tests of the wave-orchestrator binary:
// the kubernetes backend against a real kube-apiserver and etcd
// (kube/kubetest; they skip without them) — launch, kill -9 of the
// launcher with adoption of running Jobs, attach, and doctor.
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package kubernetes
