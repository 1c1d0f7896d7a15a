#!/usr/bin/env bash
# Rebuilds third_party/whatsmeow: the whatsmeow that go.mod requires, from the
# Go module cache, with the series third_party/whatsmeow-patches/*.patch applied
# in order (one behaviour fix each; third_party/PATCH.md). Nothing else differs:
# TestWhatsmeowCopyIsThePatchedModule (generated_test.go) fails when the copy is
# anything but the module plus the series.
#
# Usage: hack/whatsmeow-copy.sh [output folder]   (default third_party/whatsmeow)
# With REJECTS=1 a patch that does not apply leaves its rejected hunks as
# <file>.rej in the output and the script names them (hack/whatsmeow-upgrade.sh).
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
failed=0
for patch in "$repo"/third_party/whatsmeow-patches/*.patch; do
  if [[ ${REJECTS:-0} == 1 ]]; then
    if ! (cd "$work" && git apply -p1 --reject "$patch" 2>/dev/null); then
      failed=1
      echo "whatsmeow-copy: $(basename "$patch") does not apply; rejected hunks:" >&2
      (cd "$work" && find . -name '*.rej' -newer "$patch" -print | sed 's/^/  /') >&2
    fi
  else
    (cd "$work" && git apply -p1 "$patch") || { echo "whatsmeow-copy: $(basename "$patch") does not apply to $version (REJECTS=1 hack/whatsmeow-copy.sh names the hunks)" >&2; exit 1; }
  fi
done
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$work" "$out"
trap - EXIT
exit $failed
