# Sourced by the scripts that build Kubernetes programs from the Go module
# proxy (envtest-binaries.sh, e2e-binaries.sh).
#
# `go install k8s.io/kubernetes/cmd/...@vX` is refused because the release's
# go.mod carries replace directives (its staging modules point at
# ./staging/...). So each build uses a throwaway module that requires
# k8s.io/kubernetes and copies those replace lines, pointing each staging
# module at its published version instead.

# kube_module DIR KUBE_VERSION PACKAGE...: writes DIR/go.mod and a tools.go
# importing the packages, then tidies the module.
kube_module() {
  local dir=$1 version=$2 go_version upstream
  shift 2
  go_version=$(go env GOVERSION)
  go_version=${go_version#go}
  mkdir -p "$dir"
  go mod download k8s.io/kubernetes@"$version"
  upstream=$(go mod download -json k8s.io/kubernetes@"$version" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    printf 'module example.com/kbuild\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\n' "$go_version" "$version"
    awk '/^replace \(/{on=1; next} on && /^\)/{on=0} on' "$upstream" |
      awk -v v="v0.${version#v1.}" 'NF>=3 && $2=="=>" {printf "replace %s => %s %s\n", $1, $1, v}'
  } >"$dir/go.mod"
  tools_file "$dir" "$@"
  (cd "$dir" && go mod tidy >&2)
}

# tools_file DIR PACKAGE...: build-tagged imports so that `go mod tidy` keeps
# the requires.
tools_file() {
  local dir=$1 p
  shift
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for p in "$@"; do printf '\t_ "%s"\n' "$p"; done
    printf ')\n'
  } >"$dir/tools.go"
}

# kube_ldflags KUBE_VERSION: what `kubectl version` and the API server's
# /version report, as release builds set it.
kube_ldflags() {
  local version=$1
  printf -- '-s -w -X k8s.io/component-base/version.gitVersion=%s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=%s' \
    "$version" "$(echo "$version" | cut -d. -f2)"
}
