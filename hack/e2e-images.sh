#!/usr/bin/env bash
# Builds the end-to-end cluster's images without a container engine, as
# docker-archives in OUTDIR (ctr images import loads them):
#
#   msgbridge.tar        localhost/msgbridge:e2e        the Dockerfile's image: /manager and /bridge
#   msgbridge-wasim.tar  localhost/msgbridge-wasim:e2e  the same with a bridge built with -tags wasim
#   pause.tar            localhost/pause:e2e            the pod sandbox (test/e2e/cmd/pause)
#   coredns.tar          localhost/coredns:e2e          cluster DNS (from hack/e2e-binaries.sh)
#
# The programs are built like the Dockerfile builds them (static, -trimpath,
# the version stamped) and laid out like its final stage (test/e2e/image;
# a test keeps the two in step). The wasim bridge dials the simulator at
# WASIM_ADDR with root key WASIM_ROOT_KEY (both required), linked in as
# defaults because the operator writes its pods' environment.
#
# usage: WASIM_ADDR=host:port WASIM_ROOT_KEY=<64 hex> hack/e2e-images.sh OUTDIR [E2E_BIN]
set -euo pipefail

out=${1:?usage: e2e-images.sh OUTDIR [E2E_BIN]}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${2:-$("$repo/hack/e2e-binaries.sh")}
: "${WASIM_ADDR:?set WASIM_ADDR to the simulator address the pods dial}"
: "${WASIM_ROOT_KEY:?set WASIM_ROOT_KEY to the simulator root public key}"
version=${VERSION:-$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/prod" "$work/wasim"

ldflags="-s -w -X github.com/msgbridge/msgbridge/contract.Version=$version"
cd "$repo"
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$work/prod/" . ./bridge/cmd/bridge ./test/e2e/cmd/pause ./test/e2e/cmd/mkimage
mv "$work/prod/msgbridge" "$work/prod/manager"
CGO_ENABLED=0 go build -trimpath -tags wasim \
  -ldflags "$ldflags -X main.linkedWasimAddr=$WASIM_ADDR -X main.linkedWasimRootKey=$WASIM_ROOT_KEY" \
  -o "$work/wasim/bridge" ./bridge/cmd/bridge

mkimage() { "$work/prod/mkimage" "$@"; }
mkimage -out "$out/msgbridge.tar" -ref localhost/msgbridge:e2e msgbridge \
  -manager "$work/prod/manager" -bridge "$work/prod/bridge" -version "$version"
mkimage -out "$out/msgbridge-wasim.tar" -ref localhost/msgbridge-wasim:e2e msgbridge \
  -manager "$work/prod/manager" -bridge "$work/wasim/bridge" -version "$version-wasim"
mkimage -out "$out/pause.tar" -ref localhost/pause:e2e program -name pause -binary "$work/prod/pause" -user 65535:65535
mkimage -out "$out/coredns.tar" -ref localhost/coredns:e2e program -name coredns -binary "$bin/coredns" -user 65532:65532
ls -la "$out" >&2
