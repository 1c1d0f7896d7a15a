#!/usr/bin/env bash
# Moves the bridge to another whatsmeow (docs/development/whatsmeow.md):
#   hack/whatsmeow-upgrade.sh v0.0.0-YYYYMMDDhhmmss-abcdef123456
# 1. requires that version in go.mod and tidies the module graph;
# 2. rebuilds third_party/whatsmeow with the patch series, naming every
#    rejected hunk (they stay beside their files as .rej to be redone);
# 3. builds everything and runs the tiers that exercise the engine: the
#    bridge's whatsmeow adapter, the simulator and the process tests.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
version=${1:?usage: hack/whatsmeow-upgrade.sh VERSION}
go mod edit -require="go.mau.fi/whatsmeow@$version"
go mod download "go.mau.fi/whatsmeow@$version"
if ! REJECTS=1 hack/whatsmeow-copy.sh; then
  echo "whatsmeow-upgrade: redo the rejected hunks above in third_party/whatsmeow, regenerate the patch (docs/development/whatsmeow.md), then run this again" >&2
  exit 1
fi
go mod tidy
go build ./...
go test -count=1 ./bridge/whatsapp/... ./bridge/wasim/... ./test/process/...
go test -count=1 -run '^TestWhatsmeowCopyIsThePatchedModule$' .
