#!/usr/bin/env bash
# hack/idle-rss.sh BIN...: starts each bridge binary N times (RUNS, default
# 3), all at once and unlinked, each on its own fresh DATA_DIR, waits SETTLE
# seconds (default 10) and prints its resident memory split as
# /proc/<pid>/smaps_rollup counts it: anonymous (heap, stacks, SQLite) and
# file-backed (the executable's own pages). Running the binaries side by
# side gives every one the same machine load and page cache: compare a
# release build of this tree with one of the previous release, e.g.
#
#   CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /tmp/new ./bridge/cmd/bridge
#   hack/idle-rss.sh /tmp/new /tmp/old
#
# The linked figures need the simulator: hack/perf-baseline.sh REF IdleRSS.
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,13p' "$0" >&2; exit 2; }
runs=${RUNS:-3} settle=${SETTLE:-10}
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

names=()
for bin in "$@"; do
  for run in $(seq 1 "$runs"); do
    dir="$tmp/$(basename "$bin")-$run"
    mkdir -p "$dir"
    LISTEN_ADDR=127.0.0.1:0 DATA_DIR="$dir" API_KEY=idle-rss-api-key-0123456789 \
      ADMIN_TOKEN=idle-rss-admin-token-0123456789 ENCRYPTION_KEY="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
      "$bin" >/dev/null 2>&1 &
    pids+=($!)
    names+=("$bin #$run")
  done
done
sleep "$settle"
printf '%-40s %9s %9s %9s\n' binary 'RSS MiB' 'anon MiB' 'file MiB'
for i in "${!pids[@]}"; do
  awk -v n="${names[$i]}" '/^Rss:/{r=$2} /^Anonymous:/{a=$2}
    END {printf "%-40s %9.1f %9.1f %9.1f\n", n, r/1024, a/1024, (r-a)/1024}' "/proc/${pids[$i]}/smaps_rollup"
done
