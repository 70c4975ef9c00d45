#!/usr/bin/env bash
# Builds (once, cached) the kube-apiserver and installs etcd that the
# kubernetes backend's tests run against, then prints the two paths as
# KUBE_APISERVER=... and ETCD=... lines for the caller to export.
# With --controller-manager it also builds kube-controller-manager from the
# same tree and prints KUBETEST_CONTROLLER_MANAGER=...: the tests then run
# the real Job controller, garbage collector and TTL-after-finished
# controller instead of the harness's stand-ins. After the apiserver's
# build the second binary reuses Go's build cache (about 2 minutes here).
#
# kube-apiserver is built from the k8s.io/kubernetes module on the Go module
# proxy: that module's go.mod points its k8s.io/* staging modules at ./staging
# through a replace block and requires them at v0.0.0, so the block is dropped
# and the published v0.X.Y of each is required instead.
set -euo pipefail
K8S_VERSION="${KUBETEST_VERSION:-v1.34.4}"
STAGING_VERSION="v0.${K8S_VERSION#v1.}"
cache="${KUBETEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wave-orchestrator/kube}"
bin="$cache/kube-apiserver-$K8S_VERSION"
kcm="$cache/kube-controller-manager-$K8S_VERSION"
want_kcm=0
[ "${1:-}" = "--controller-manager" ] && want_kcm=1
export PATH="$PATH:/usr/local/go/bin"

log() { echo "kube-test-env: $*" >&2; }

if ! command -v etcd >/dev/null 2>&1; then
  log "installing etcd-server"
  if ! apt-get install -y etcd-server >/dev/null 2>&1; then
    apt-get update >/dev/null && apt-get install -y etcd-server >/dev/null
  fi
  # The Debian package starts a system etcd on 2379; the tests run their own.
  systemctl disable --now etcd >/dev/null 2>&1 || true
fi

# Two callers at once (CI jobs, or several test runs on one machine) build
# once: the second waits on the lock and finds the binary made.
mkdir -p "$cache"
exec 9>"$cache/build.lock"
if command -v flock >/dev/null 2>&1 && ! flock -n 9; then
  log "another build of the test binaries is under way; waiting for it"
  flock 9
fi
if [ ! -x "$bin" ] || { [ "$want_kcm" = 1 ] && [ ! -x "$kcm" ]; }; then
  work="$(mktemp -d "$cache/build.XXXXXX")"
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  log "building kube-apiserver $K8S_VERSION (several minutes, once)"
  src="$(cd "$work" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$src" ] || { log "k8s.io/kubernetes@$K8S_VERSION not downloaded"; exit 1; }
  cp -r "$src" "$work/k8s" && chmod -R u+w "$work/k8s"
  cd "$work/k8s"
  rm -f go.work go.work.sum
  export GOWORK=off
  # Drop the replace block and pin every k8s.io/* v0.0.0 requirement.
  awk '/^replace \($/{skip=1; next} skip&&/^\)$/{skip=0; next} !skip' go.mod > go.mod.new
  sed -E "s#^(\s*k8s\.io/[a-z0-9-]+) v0\.0\.0\$#\1 $STAGING_VERSION#" go.mod.new > go.mod
  rm -f go.mod.new go.sum
  GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || true
  if [ ! -x "$bin" ]; then
    GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$bin.tmp" ./cmd/kube-apiserver
    mv "$bin.tmp" "$bin"
  fi
  if [ "$want_kcm" = 1 ] && [ ! -x "$kcm" ]; then
    log "building kube-controller-manager $K8S_VERSION"
    GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$kcm.tmp" ./cmd/kube-controller-manager
    mv "$kcm.tmp" "$kcm"
  fi
fi
echo "KUBE_APISERVER=$bin"
echo "ETCD=$(command -v etcd)"
if [ "$want_kcm" = 1 ]; then
  echo "KUBETEST_CONTROLLER_MANAGER=$kcm"
fi
