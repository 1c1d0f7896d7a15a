#!/usr/bin/env bash
# Copies the manifests the Helm chart renders from config/ (the generated CRD,
# the generated manager ClusterRole and the leader-election Role) into
# charts/msgbridge/files/.
#
# Helm reads only files inside the chart, so the chart cannot point at
# config/ directly. config/ stays the one source: `make manifests` runs this
# after controller-gen, and controllers/ship_test.go fails when the copies
# drift from config/.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
chart_files="$repo/charts/msgbridge/files"

mkdir -p "$chart_files/crds" "$chart_files/rbac"
rm -f "$chart_files"/crds/*.yaml
cp "$repo"/config/crd/bases/*.yaml "$chart_files/crds/"
cp "$repo/config/rbac/role.yaml" "$repo/config/rbac/leader_election_role.yaml" "$chart_files/rbac/"
