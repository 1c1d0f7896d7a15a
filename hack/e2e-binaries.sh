#!/usr/bin/env bash
# Builds the programs of the end-to-end cluster that envtest does not have
# (kubelet, kube-controller-manager, kube-scheduler, kube-proxy, kubectl and a
# minimal CoreDNS) from the Go module proxy, and prints the folder that holds them
# together with envtest's kube-apiserver and etcd (linked, built by
# envtest-binaries.sh when missing).
#
# Results are cached under bin/e2e/<versions>/ (git-ignored) and reused; a
# warm call takes well under a second. Cold, on 2 cores, the Kubernetes
# programs take 10-25 minutes (they share most packages with kube-apiserver,
# so a warm Go build cache helps a lot) and CoreDNS 2-4 minutes.
#
# Environment: KUBE_VERSION (default v1.37.1; 1.37 is the last kubelet that
# accepts Debian 12's containerd 1.6), COREDNS_VERSION (default v1.15.0),
# E2E_CACHE (default <repo>/bin/e2e).
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.37.1}
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${E2E_CACHE:-$repo/bin/e2e}
out="$cache/k8s-$KUBE_VERSION-coredns-$COREDNS_VERSION"
kube_programs=(kubelet kube-controller-manager kube-scheduler kube-proxy kubectl)

log() { printf 'e2e-binaries: %s\n' "$*" >&2; }

complete() {
  local p
  for p in "${kube_programs[@]}" coredns kube-apiserver etcd; do
    [[ -x "$out/$p" ]] || return 1
  done
}
if complete; then
  echo "$out"
  exit 0
fi

# shellcheck source=lib/kube-module.sh
source "$repo/hack/lib/kube-module.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# One go build for the missing programs: their shared packages compile once.
build_kube() {
  local p missing=() pkgs=()
  for p in "${kube_programs[@]}"; do
    [[ -x "$out/$p" ]] || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  for p in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$p"); done
  log "building ${missing[*]} $KUBE_VERSION (10-25 minutes cold)"
  kube_module "$work/kube" "$KUBE_VERSION" "${pkgs[@]}"
  mkdir -p "$work/out"
  (cd "$work/kube" && go build -trimpath -ldflags "$(kube_ldflags "$KUBE_VERSION")" -o "$work/out/" "${pkgs[@]}")
  for p in "${missing[@]}"; do mv "$work/out/$p" "$out/$p"; done
}

# CoreDNS with only the plugins a cluster without upstream DNS needs (no
# forward, no cloud SDKs). Static: it runs in an image with nothing else.
build_coredns() {
  local dir="$work/coredns" go_version p
  go_version=$(go env GOVERSION)
  mkdir -p "$dir"
  log "building coredns $COREDNS_VERSION (2-4 minutes cold)"
  printf 'module example.com/coredns\n\ngo %s\n\nrequire github.com/coredns/coredns %s\n' "${go_version#go}" "$COREDNS_VERSION" >"$dir/go.mod"
  {
    printf 'package main\n\nimport (\n\t"github.com/coredns/coredns/coremain"\n\n'
    for p in cache errors health kubernetes loadbalance log ready; do
      printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$p"
    done
    printf ')\n\nfunc main() { coremain.Run() }\n'
  } >"$dir/main.go"
  (cd "$dir" && go mod tidy >&2 &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/coredns.tmp" .)
  mv "$out/coredns.tmp" "$out/coredns"
}

link_envtest() {
  local envtest
  envtest=$(KUBE_VERSION=$KUBE_VERSION "$repo/hack/envtest-binaries.sh")
  ln -sfn "$envtest/kube-apiserver" "$out/kube-apiserver"
  ln -sfn "$envtest/etcd" "$out/etcd"
}

link_envtest
build_kube
[[ -x "$out/coredns" ]] || build_coredns
log "ready in $out"
echo "$out"
