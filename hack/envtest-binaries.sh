#!/usr/bin/env bash
# Builds a real kube-apiserver and etcd from the Go module proxy for envtest and
# prints the folder that holds them (use it as KUBEBUILDER_ASSETS).
#
# The usual setup-envtest download is not reachable from our machines, and
# `go install` refuses both programs because their go.mod files carry replace
# directives. So each is built from a throwaway module that copies those
# replace lines from the release's own go.mod. Results are cached under
# bin/envtest/<versions>/ (git-ignored) and reused; a warm call takes well under
# a second.
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

go_version=$(go env GOVERSION)
go_version=${go_version#go}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# tools_file DIR PACKAGE: a build-tagged import so that `go mod tidy` keeps the require.
tools_file() {
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$2" >"$1/tools.go"
}

build_kube_apiserver() {
  local dir="$work/kube" minor major
  mkdir -p "$dir"
  log "building kube-apiserver $KUBE_VERSION (about 5 minutes cold)"
  go mod download k8s.io/kubernetes@"$KUBE_VERSION"
  local upstream
  upstream=$(go mod download -json k8s.io/kubernetes@"$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    printf 'module example.com/kbuild\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\n' "$go_version" "$KUBE_VERSION"
    # Copy the release's replace block: k8s.io/kubernetes pins its staging
    # modules to ./staging/...; point each at its published version instead.
    awk '/^replace \(/{on=1; next} on && /^\)/{on=0} on' "$upstream" |
      awk -v v="v0.${KUBE_VERSION#v1.}" 'NF>=3 && $2=="=>" {printf "replace %s => %s %s\n", $1, $1, v}'
  } >"$dir/go.mod"
  tools_file "$dir" k8s.io/kubernetes/cmd/kube-apiserver
  major=1
  minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
  (cd "$dir" && go mod tidy >&2 &&
    go build -trimpath -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION \
      -X k8s.io/component-base/version.gitMajor=$major \
      -X k8s.io/component-base/version.gitMinor=$minor" \
      -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
}

build_etcd() {
  local dir="$work/etcd"
  mkdir -p "$dir"
  log "building etcd $ETCD_VERSION"
  printf 'module example.com/ebuild\n\ngo %s\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$go_version" "$ETCD_VERSION" >"$dir/go.mod"
  tools_file "$dir" go.etcd.io/etcd/server/v3
  (cd "$dir" && go mod tidy >&2 &&
    go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$out/etcd.tmp" "$out/etcd"
}

[[ -x "$out/etcd" ]] || build_etcd
[[ -x "$out/kube-apiserver" ]] || build_kube_apiserver
log "ready in $out"
echo "$out"
