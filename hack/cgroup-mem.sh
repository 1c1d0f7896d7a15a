#!/usr/bin/env bash
# hack/cgroup-mem.sh BIN...: memory as a pod is charged for it. Starts RUNS
# (default 10) unlinked bridges of each binary, interleaved (A B A B ...),
# one after the other and then side by side, each on its own fresh DATA_DIR
# and in its own memory cgroup under this shell's, and prints for each:
#
#   usage    the cgroup's memory usage: what limits and the OOM killer read
#            (v2 memory.current, v1 memory.usage_in_bytes)
#   ws       the working set the kubelet evicts by: usage minus the
#            inactive page cache (memory.stat inactive_file, v1
#            total_inactive_file)
#   cpu      CPU time the process used between the two readings (idle work)
#
# once when /health first says the stores are open ("start") and again
# SETTLE seconds (default 60) after its exec, then each binary's median. The
# executable's own pages are page cache charged to whichever cgroup first
# read them, usually none of these: that is what a pod on a node pays too.
#
#   CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /tmp/new ./bridge/cmd/bridge
#   hack/cgroup-mem.sh /tmp/old /tmp/new
#
# Needs write access to the cgroup tree (root, or a delegated cgroup); on
# cgroup v2 the parent (CGROUP_PARENT, default this shell's cgroup) must list
# memory in cgroup.subtree_control.
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,24p' "$0" >&2; exit 2; }
runs=${RUNS:-10} settle=${SETTLE:-60} port=${PORT_BASE:-39100}

if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then # v2
  parent=${CGROUP_PARENT:-/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)}
  usage_file=memory.current inactive_key=inactive_file
  grep -qw memory "$parent/cgroup.subtree_control" ||
    { echo "cgroup-mem: $parent does not delegate memory to its children; set CGROUP_PARENT" >&2; exit 2; }
else # v1: the memory hierarchy
  parent=${CGROUP_PARENT:-/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)}
  usage_file=memory.usage_in_bytes inactive_key=total_inactive_file
fi

tmp=$(mktemp -d)
pids=() groups=() names=() started=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for cg in "${groups[@]}"; do
    for _ in 1 2 3 4 5; do rmdir "$cg" 2>/dev/null && break; sleep 0.2; done
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

# memory CGROUP: "usage working-set" in bytes.
memory() {
  local usage inactive
  usage=$(<"$1/$usage_file")
  inactive=$(awk -v k="$inactive_key" '$1 == k {print $2}' "$1/memory.stat")
  echo "$usage" $((usage > inactive ? usage - inactive : 0))
}

# cpu_ms PID: user and system CPU time the process used so far.
ticks=$(getconf CLK_TCK)
cpu_ms() { sed 's/.*) //' "/proc/$1/stat" | awk -v t="$ticks" '{print int(($12 + $13) * 1000 / t)}'; }

# ready PORT: /health answers and no longer says the stores are starting.
ready() {
  local body
  body=$(curl -fsS --max-time 1 "http://127.0.0.1:$1/health" 2>/dev/null) && [[ $body != *'"whatsapp":"starting"'* ]]
}

declare -A first_reading
for _ in $(seq 1 "$runs"); do
  for bin in "$@"; do
    i=${#pids[@]}
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
    cg="$parent/cgroup-mem-$$-$i" dir="$tmp/$i"
    mkdir -p "$cg" "$dir"
    groups+=("$cg")
    started+=("$(date +%s.%N)")
    (
      echo "$BASHPID" >"$cg/cgroup.procs"
      LISTEN_ADDR=127.0.0.1:$port DATA_DIR=$dir API_KEY=$(random_hex 16) ADMIN_TOKEN=$(random_hex 16) \
        ENCRYPTION_KEY=$(random_hex 32) exec "$bin" >"$tmp/$i.log" 2>&1
    ) &
    pids+=($!)
    names+=("$(basename "$bin")")
    until ready "$port"; do
      kill -0 "${pids[$i]}" 2>/dev/null || { echo "cgroup-mem: $bin exited:" >&2; cat "$tmp/$i.log" >&2; exit 1; }
      sleep 0.05
    done
    first_reading[$i]="$(memory "$cg") $(cpu_ms "${pids[$i]}")"
    port=$((port + 1))
  done
done

mib() { awk -v b="$1" 'BEGIN {printf "%.2f", b / 1048576}'; }
printf '%-24s %10s %10s %10s %10s %12s\n' binary 'start MiB' 'start ws' "${settle}s MiB" "${settle}s ws" 'idle cpu ms'
for i in "${!pids[@]}"; do
  wait_until=$(awk -v s="${started[$i]}" -v d="$settle" 'BEGIN {printf "%.3f", s + d}')
  now=$(date +%s.%N)
  sleep "$(awk -v w="$wait_until" -v n="$now" 'BEGIN {d = w - n; printf "%.3f", (d > 0 ? d : 0)}')"
  read -r usage0 ws0 cpu0 <<<"${first_reading[$i]}"
  read -r usage1 ws1 <<<"$(memory "${groups[$i]}")"
  cpu1=$(cpu_ms "${pids[$i]}")
  printf '%-24s %10s %10s %10s %10s %12s\n' "${names[$i]}" "$(mib "$usage0")" "$(mib "$ws0")" \
    "$(mib "$usage1")" "$(mib "$ws1")" $((cpu1 - cpu0))
done | tee "$tmp/table"
echo
# Medians, not means: the first bridge to read a page of the executable (or
# of a library file) is charged for it, which can add MiBs to one bridge.
echo "median (min-max) of $runs per binary:"
awk '{print $1}' "$tmp/table" | sort -u | while read -r name; do
  printf '%-24s' "$name"
  for c in 2 3 4 5 6; do
    awk -v n="$name" -v c="$c" '$1 == n {print $c}' "$tmp/table" | sort -g |
      awk '{v[NR] = $1} END {printf " %s (%s-%s)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR]}'
  done
  echo
done
