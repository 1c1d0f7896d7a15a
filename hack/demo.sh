#!/usr/bin/env bash
# make demo: the WhatsApp network simulator and a bridge connected to it, so
# that a person can pair, send and inject faults with curl alone
# (bridge/wasim/README.md lists the simulator's control API).
#
#   simulator control API  http://127.0.0.1:7780
#   bridge                 http://127.0.0.1:8080 (data in ./data/demo)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

control=127.0.0.1:7780
go build -o bin/wasim ./bridge/wasim/cmd/wasim
bin/wasim -listen "$control" -addr 127.0.0.1:7781 &
sim_pid=$!
trap 'kill $sim_pid 2>/dev/null || true' EXIT

info=""
for _ in $(seq 1 100); do
  info=$(curl -fsS "http://$control/v1/info" 2>/dev/null) && break
  sleep 0.1
done
[[ -n $info ]] || { echo "demo: the simulator did not start" >&2; exit 1; }
json_field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" <<<"$info"; }

export WASIM_ADDR WASIM_ROOT_KEY
WASIM_ADDR=$(json_field addr)
WASIM_ROOT_KEY=$(json_field root_public_key)
# The simulator keeps its phones in memory only, so a bridge's link from an
# earlier run names a device the new simulator never saw: the default demo
# folder starts empty on every run (a DATA_DIR of your own is left alone).
if [[ -z ${DATA_DIR:-} ]]; then
  rm -rf "$repo/data/demo"
fi
export DATA_DIR=${DATA_DIR:-$repo/data/demo}
echo "demo: simulator at $WASIM_ADDR, control API http://$control"
BRIDGE_TAGS=wasim hack/run-bridge.sh
