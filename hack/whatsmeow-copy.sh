#!/usr/bin/env bash
# Rebuilds third_party/whatsmeow: the pinned whatsmeow from the Go module
# cache with the patch third_party/whatsmeow.patch applied and its protocol
# buffer files made to register at first use (hack/lazyproto; see
# third_party/PATCH.md). Run it after changing the pinned version in go.mod's
# require line; TestWhatsmeowCopyIsThePatchedModule (generated_test.go)
# fails when the copy and the module plus patch differ.
#
# Usage: hack/whatsmeow-copy.sh [output folder]   (default third_party/whatsmeow)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$repo/third_party/whatsmeow}
version=$(awk '$1 == "go.mau.fi/whatsmeow" && $2 ~ /^v/ {print $2; exit}' "$repo/go.mod")
module=$(cd "$repo" && go mod download -json "go.mau.fi/whatsmeow@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[[ -d $module ]] || { echo "whatsmeow-copy: module $version not found" >&2; exit 1; }

# Patched outside any git work tree: git apply inside one would take the
# patch's paths as relative to that tree's top.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What the build needs: Go sources (no tests), embedded files, go.mod/go.sum
# and the licence; not the .proto sources, CI files or editor settings.
(cd "$module" && find . -type f ! -name '*_test.go' ! -name '*.proto' \
  ! -path './.github/*' ! -name '.pre-commit-config.yaml' ! -name '.gitattributes' \
  ! -name '.editorconfig' ! -name '.gitignore' -print0 | tar --null -T - -cf -) | tar -C "$work" -xf -
chmod -R u+w "$work"
(cd "$work" && git apply -p1 "$repo/third_party/whatsmeow.patch")
# Fix 5: the protocol buffer files register at their first use, not at
# start-up (third_party/PATCH.md).
(cd "$repo" && go run ./hack/lazyproto "$work/proto")
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$work" "$out"
