#!/usr/bin/env bash
# make run: the bridge on this machine, its data in ./data.
#
# Development credentials are generated once into data/dev-credentials.env
# (mode 0600) and reused afterwards, so the encrypted databases stay readable
# across runs. Any setting can be overridden from the environment, e.g.
#   LISTEN_ADDR=127.0.0.1:9090 make run
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

data=${DATA_DIR:-$repo/data}
creds="$data/dev-credentials.env"
mkdir -p "$data"
chmod 0700 "$data"

random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

if [[ ! -f "$creds" ]]; then
  (
    umask 077
    cat >"$creds" <<CREDS
# Development credentials of the local bridge, generated once by make run.
# Keep this file: ENCRYPTION_KEY unlocks the databases in this folder.
API_KEY=$(random_hex 24)
ADMIN_TOKEN=$(random_hex 24)
ENCRYPTION_KEY=$(random_hex 32)
CREDS
  )
  echo "Generated development credentials in $creds"
fi
chmod 0600 "$creds"

# Settings from the environment win over the file, as for the bridge itself.
set -a
# shellcheck source=/dev/null
source <(grep -E '^[A-Z_]+=' "$creds" | while IFS='=' read -r k v; do
  [[ -z "${!k:-}" ]] && printf '%s=%q\n' "$k" "$v"
done)
set +a
export DATA_DIR="$data"
export LISTEN_ADDR=${LISTEN_ADDR:-127.0.0.1:8080}

port=${LISTEN_ADDR##*:}
host=${LISTEN_ADDR%:*}
[[ -z "$host" || "$host" == "0.0.0.0" || "$host" == "[::]" ]] && host=127.0.0.1

# Compile first, saying so: on a cold machine this takes minutes, and a
# silent terminal looks like a hang.
bin="$repo/bin/bridge-run"
echo "Compiling the bridge (go build ./bridge/cmd/bridge into bin/bridge-run): minutes on a cold machine, seconds afterwards ..."
go build -tags "${BRIDGE_TAGS:-}" -ldflags "-X github.com/msgbridge/msgbridge/contract.Version=${VERSION:-dev}" -o "$bin" ./bridge/cmd/bridge

"$bin" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' INT TERM

# The banner shows the version as /health reports it (the bridge makes any
# VERSION semantic), so it waits for the bridge to answer.
version=""
while kill -0 "$pid" 2>/dev/null; do
  if health=$(curl -fsS --max-time 1 "http://$host:$port/health" 2>/dev/null); then
    version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' <<<"$health")
    break
  fi
  sleep 0.2
done
[[ -n "$version" ]] && cat <<INFO

  msgbridge bridge $version
  Dashboard:    http://localhost:$port/dashboard/
  Health:       http://localhost:$port/health
  Credentials:  $creds  (API_KEY, ADMIN_TOKEN, ENCRYPTION_KEY;
                the dashboard signs in with ADMIN_TOKEN)
  Data:         $data

INFO
status=0
wait "$pid" || status=$?
wait "$pid" 2>/dev/null || true # after a signal: until the bridge has stopped
exit "$status"
