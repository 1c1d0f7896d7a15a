#!/usr/bin/env bash
# Builds a real kube-apiserver and etcd from the Go module proxy for envtest and
# prints the folder that holds them (use it as KUBEBUILDER_ASSETS).
#
# The usual setup-envtest download is not reachable from our machines, and
# `go install` refuses both programs because their go.mod files carry replace
# directives. So each is built from a throwaway module (lib/kube-module.sh).
# Results are cached under bin/envtest/<versions>/ (git-ignored) and reused; a
# warm call takes well under a second.
#
# Environment: KUBE_VERSION (default v1.37.1), ETCD_VERSION (default v3.7.0),
# ENVTEST_CACHE (default <repo>/bin/envtest).
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.37.1}
ETCD_VERSION=${ETCD_VERSION:-v3.7.0}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${ENVTEST_CACHE:-$repo/bin/envtest}
out="$cache/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION"

log() { printf 'envtest-binaries: %s\n' "$*" >&2; }

if [[ -x "$out/kube-apiserver" && -x "$out/etcd" ]]; then
  echo "$out"
  exit 0
fi

# shellcheck source=lib/kube-module.sh
source "$repo/hack/lib/kube-module.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

build_kube_apiserver() {
  log "building kube-apiserver $KUBE_VERSION (about 5 minutes cold)"
  kube_module "$work/kube" "$KUBE_VERSION" k8s.io/kubernetes/cmd/kube-apiserver
  (cd "$work/kube" && go build -trimpath -ldflags "$(kube_ldflags "$KUBE_VERSION")" \
    -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
}

build_etcd() {
  local dir="$work/etcd" go_version
  go_version=$(go env GOVERSION)
  mkdir -p "$dir"
  log "building etcd $ETCD_VERSION"
  printf 'module example.com/ebuild\n\ngo %s\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "${go_version#go}" "$ETCD_VERSION" >"$dir/go.mod"
  tools_file "$dir" go.etcd.io/etcd/server/v3
  (cd "$dir" && go mod tidy >&2 &&
    go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$out/etcd.tmp" "$out/etcd"
}

[[ -x "$out/etcd" ]] || build_etcd
[[ -x "$out/kube-apiserver" ]] || build_kube_apiserver
log "ready in $out"
echo "$out"
