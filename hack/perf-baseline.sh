#!/usr/bin/env bash
# hack/perf-baseline.sh REF[,REF...] BENCH [go test flags...]: runs the
# bridge's benchmark BENCH (test/process) with a baseline in the same run:
# the bridge built from REF (a commit, tag or branch; the previous release)
# in a throwaway worktree, both builds (production and -tags wasim); several
# REFs, comma-separated, give a baseline each (named baseline-REF). The
# machine is shared: compare the figures within one run, not across runs.
#
#   hack/perf-baseline.sh main AcceptedSends -benchtime=20000x -count=2
#   RELEASE=1 hack/perf-baseline.sh 36f6f31,4c7fd2a AcceptedSends -benchtime=20000x
#   hack/perf-baseline.sh main StartupToFirstAnswer -benchtime=15x
#   hack/perf-baseline.sh main IdleRSS -benchtime=3x
#   ROUNDS=3 RELEASE=1 hack/perf-baseline.sh 5d0d044 IncomingBurst -benchtime=5000x
#
# RELEASE=1 builds both trees as the image does (-trimpath, stripped)
# instead of with their symbols; PEER_WUZAPI_BIN adds wuzapi to the
# start-up benchmark.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

[[ $# -ge 2 ]] || { sed -n '2,10p' "$0" >&2; exit 2; }
refs=$1 bench=$2
shift 2

tmp=$(mktemp -d)
cleanup() {
  for worktree in "$tmp"/src-*; do
    [[ -d $worktree ]] && git worktree remove --force "$worktree" >/dev/null 2>&1 || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

ldflags="-X github.com/msgbridge/msgbridge/contract.Version=baseline"
flags=()
if [[ ${RELEASE:-} == 1 ]]; then
  ldflags="-s -w $ldflags"
  flags=(-trimpath)
fi
bins=() simbins=()
IFS=, read -ra reflist <<<"$refs"
for ref in "${reflist[@]}"; do
  worktree="$tmp/src-$ref"
  git worktree add --detach "$worktree" "$ref" >/dev/null
  echo "baseline: $ref = $(git -C "$worktree" log -1 --format='%h %s')" >&2
  # Static, as the image and test/process build this tree's binaries.
  (cd "$worktree" && CGO_ENABLED=0 go build "${flags[@]}" -ldflags "$ldflags" -o "$tmp/bridge-$ref" ./bridge/cmd/bridge)
  (cd "$worktree" && CGO_ENABLED=0 go build "${flags[@]}" -tags wasim -ldflags "$ldflags" -o "$tmp/bridge-wasim-$ref" ./bridge/cmd/bridge)
  bins+=("$tmp/bridge-$ref") simbins+=("$tmp/bridge-wasim-$ref")
done

join() { local IFS=:; echo "$*"; }
# ROUNDS=n runs the candidates n times in turn (this tree, each baseline,
# then again): -count=n would run all of one candidate's rounds back to
# back, so a change in the machine's load falls on one side.
for ((round = 1; round <= ${ROUNDS:-1}; round++)); do
  BASELINE_BRIDGE_BIN=$(join "${bins[@]}") BASELINE_SIM_BRIDGE_BIN=$(join "${simbins[@]}") BASELINE_REFS=$refs \
    BRIDGE_RELEASE_BUILD=${RELEASE:-} go test -count=1 -timeout 30m -run=NONE -bench="$bench" "$@" ./test/process
done
