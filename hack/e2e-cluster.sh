#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, for the end-to-end
# test (test/e2e): Debian's containerd 1.6 and runc, the CNI bridge plugin,
# etcd, kube-apiserver, kubelet, kube-controller-manager, kube-scheduler,
# kube-proxy and CoreDNS from hack/e2e-binaries.sh, images imported offline
# (hack/e2e-images.sh). Needs root.
#
#   hack/e2e-cluster.sh up [--hold]   start it; with --hold, stay in the
#                                     foreground and tear it down when stdin
#                                     closes or a signal arrives
#   hack/e2e-cluster.sh down          stop it and undo every change to the host
#
# Everything lives in E2E_DIR (default <repo>/.e2e, git-ignored); the admin
# kubeconfig is E2E_DIR/pki/admin.kubeconfig. Pods get 10.222.0.0/16 on the
# bridge mbe2e0 (the host is 10.222.0.1, where the API server and the
# kubelet listen), Services 10.223.0.0/16, DNS 10.223.0.10. Pods cannot reach
# anything off this machine: no masquerade, no upstream DNS, and drop rules
# on every other interface.
#
# What the cluster changes outside E2E_DIR is recorded before it starts and
# restored by `down`, which then checks that it is all back as it was:
# iptables rules (ours, the kubelet's and kube-proxy's chains), sysctls (the
# kubelet's kernel tunables, ip_forward), mounts, network links, cgroups
# (kubepods), and the paths the kubelet, containerd and CNI hard-code
# (/var/lib/kubelet, /run/containerd, /run/netns, /var/lib/cni,
# /var/log/containers). `up` refuses to start while a previous run's
# leftovers remain, and tears down what it started when it fails.
#
# The settings that make it work on these machines (cgroup v1, no systemd,
# no CAP_SYS_RESOURCE): failCgroupV1: false, cgroupDriver: cgroupfs, runc,
# restrict_oom_score_adj. Kubelet 1.37 is the last that accepts containerd
# 1.6 (no RuntimeConfig RPC).
#
# Environment: E2E_DIR, E2E_BIN (default: hack/e2e-binaries.sh's folder),
# E2E_IMAGES (folder of docker-archives to import, default E2E_DIR/images),
# E2E_MAX_PODS (the kubelet's pod limit, default 30), E2E_VOLUMES (static
# 1Gi volumes, default 3; the fleet benchmark wants one per bridge).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
D=${E2E_DIR:-$repo/.e2e}
STATE=$D/state
NODE=e2e-node
BRIDGE=mbe2e0
GW=10.222.0.1
POD_CIDR=10.222.0.0/16
SVC_CIDR=10.223.0.0/16
API_VIP=10.223.0.1
DNS_IP=10.223.0.10
API_PORT=16443
ETCD_PORT=23790
ETCD_PEER_PORT=23800
TAG=msgbridge-e2e
# Ports of this machine the cluster listens on (the API server and kubelet
# on $GW, the rest on loopback).
PORTS="$API_PORT $ETCD_PORT $ETCD_PEER_PORT 10248 10249 10250 10256 10257 10259"
# Host paths the kubelet, containerd and CNI use whatever their settings.
HOST_PATHS="/var/lib/kubelet /var/lib/cni /var/log/containers /var/log/pods /run/containerd /run/netns
  /run/runc /run/kubernetes /var/lib/containerd /opt/containerd /etc/kubernetes"
# Sysctls the kubelet (kernel tunables), the CNI bridge plugin (ip_forward)
# and kube-proxy may change.
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
  kernel.keys.root_maxbytes net.ipv4.ip_forward net.ipv4.conf.all.route_localnet net.ipv4.conf.all.forwarding
  net.ipv6.conf.all.forwarding net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
  net.netfilter.nf_conntrack_tcp_timeout_close_wait"
PROGRAMS_UP="containerd etcd kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy"

T0=$(date +%s%N)
log() { printf '[e2e-cluster %6.1fs] %s\n' "$(( ($(date +%s%N) - T0) / 1000000 ))e-3" "$*" >&2; }
die() { log "error: $*"; exit 1; }
kubectl() { "$BIN/kubectl" --kubeconfig "$D/pki/admin.kubeconfig" "$@"; }

# waitfor SECONDS WHAT COMMAND...: retries COMMAND every 0.2 s.
waitfor() {
  local seconds=$1 what=$2 i
  shift 2
  for ((i = 0; i < seconds * 5; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "$what: not ready after ${seconds}s (logs in $D/logs)"
}

# ---------------------------------------------------------------- packages

# ensure_packages installs what Debian provides when missing.
ensure_packages() {
  local missing=() pair
  for pair in containerd:containerd runc:runc /usr/lib/cni/bridge:containernetworking-plugins \
    iptables:iptables nft:nftables conntrack:conntrack openssl:openssl curl:curl mount:mount; do
    if [[ ${pair%%:*} == /* ]]; then
      [[ -x ${pair%%:*} ]] || missing+=("${pair#*:}")
    else
      command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
    fi
  done
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# ---------------------------------------------------------------- host state

# snapshot DIR: what the host looks like, in files that compare with diff.
snapshot() {
  local dir=$1 p
  mkdir -p "$dir"
  for v in 4 6; do
    ipt_save "$v" >"$dir/iptables-v$v"
  done
  # All of netfilter: iptables-nft's tables (which outlive their rules) and
  # any native nftables table.
  nft list ruleset | sed 's/counter packets [0-9]* bytes [0-9]*/counter/' >"$dir/nftables"
  nft list tables | sort >"$dir/nft-tables"
  for s in $SYSCTLS; do
    printf '%s = %s\n' "$s" "$(sysctl -n "$s" 2>/dev/null || echo absent)"
  done >"$dir/sysctl"
  awk '{print $5}' /proc/self/mountinfo | sort >"$dir/mounts"
  ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort >"$dir/links"
  find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d 2>/dev/null | sort >"$dir/cgroups"
  for p in $HOST_PATHS; do
    if [[ -e $p ]]; then find "$p" -xdev 2>/dev/null; fi
  done | sort >"$dir/paths"
}

# ipt_save 4|6: the rules without counters or the save's timestamps.
ipt_save() {
  local cmd=iptables-save
  [[ $1 == 6 ]] && cmd=ip6tables-save
  "$cmd" 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]$//' || true
}

# leftovers: refuses to start over a previous run or another cluster.
leftovers() {
  local found=() p
  [[ -f $STATE/active ]] && found+=("$STATE/active (a previous run did not finish)")
  ip link show "$BRIDGE" >/dev/null 2>&1 && found+=("network link $BRIDGE")
  if ipt_save 4 | grep -qE "KUBE-|CNI-|$TAG"; then found+=("iptables KUBE-/CNI-/$TAG rules"); fi
  if ipt_save 6 | grep -qE "KUBE-|CNI-"; then found+=("ip6tables KUBE-/CNI- rules"); fi
  compgen -G "/sys/fs/cgroup/*/kubepods" >/dev/null && found+=("kubepods cgroups")
  [[ -e /var/lib/kubelet ]] && found+=("/var/lib/kubelet")
  compgen -G "/run/netns/cni-*" >/dev/null && found+=("/run/netns/cni-*")
  grep -q " $D/" /proc/self/mountinfo && found+=("mounts under $D")
  ip route show | grep -qE '^10\.22[23]\.' && found+=("a route to 10.222.0.0/15")
  for p in $PORTS; do
    ss -Hltn "sport = :$p" | grep -q . && found+=("a listener on port $p")
  done
  ((${#found[@]} == 0)) && return 0
  log "leftovers of a previous run (or another cluster) found:"
  printf '  %s\n' "${found[@]}" >&2
  die "refusing to start; run hack/e2e-cluster.sh down (E2E_DIR=$D), or remove them"
}

# ---------------------------------------------------------------- set-up

network_up() {
  local i r
  ip link add "$BRIDGE" type bridge
  ip addr add "$GW/16" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # Nothing from the pod or Service ranges may leave by another interface.
  # In mangle POSTROUTING the out-interface is the real one (after DNAT and
  # rerouting), unlike in OUTPUT.
  : >"$STATE/rules"
  while read -r i; do
    [[ $i == lo || $i == "$BRIDGE" ]] && continue
    echo "filter FORWARD -s $POD_CIDR -o $i" >>"$STATE/rules"
    for r in "-s $POD_CIDR" "-d $POD_CIDR" "-d $SVC_CIDR"; do
      echo "mangle POSTROUTING $r -o $i" >>"$STATE/rules"
    done
  done <"$STATE/before/links"
  while read -r table chain r; do
    # shellcheck disable=SC2086 # r is a list of arguments
    iptables -t "$table" -I "$chain" 1 $r -m comment --comment "$TAG" -j DROP
  done <"$STATE/rules"
}

pki() {
  local dir=$D/pki
  mkdir -p "$dir"
  key() { openssl ecparam -name prime256v1 -genkey -noout -out "$dir/$1.key"; }
  key ca
  openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=$TAG-ca" -days 2 -out "$dir/ca.crt" 2>/dev/null
  key sa
  openssl ec -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
  cert() { # NAME SUBJECT [SANS]
    key "$1"
    openssl req -new -key "$dir/$1.key" -subj "$2" -out "$dir/$1.csr" 2>/dev/null
    if [[ -n ${3:-} ]]; then
      printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$3"
    else
      printf 'extendedKeyUsage=clientAuth\n'
    fi >"$dir/$1.ext"
    openssl x509 -req -in "$dir/$1.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
      -extfile "$dir/$1.ext" -out "$dir/$1.crt" 2>/dev/null
  }
  cert apiserver /CN=kube-apiserver "IP:$GW,IP:$API_VIP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert kubelet-serving "/CN=$NODE" "IP:$GW,DNS:$NODE"
  cert admin "/O=system:masters/CN=$TAG-admin"
  cert kubelet "/O=system:nodes/CN=system:node:$NODE"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  cert controller-manager /CN=system:kube-controller-manager
  cert scheduler /CN=system:kube-scheduler
  cert kube-proxy /CN=system:kube-proxy
  for n in admin kubelet controller-manager scheduler kube-proxy; do
    cat >"$dir/$n.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://$GW:$API_PORT", certificate-authority: "$dir/ca.crt"}
users:
- name: $n
  user: {client-certificate: "$dir/$n.crt", client-key: "$dir/$n.key"}
contexts:
- name: e2e
  context: {cluster: e2e, user: $n}
current-context: e2e
EOF
  done
}

configs() {
  mkdir -p "$D/etc" "$D/cni/net.d"
  cat >"$D/etc/containerd.toml" <<EOF
version = 2
root = "$D/containerd/root"
state = "$D/containerd/state"
[grpc]
  address = "$D/run/containerd.sock"
[ttrpc]
  address = "$D/run/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$D/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:e2e"
  enable_selinux = false
  # No CAP_SYS_RESOURCE here: runc cannot set negative oom_score_adj.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$D/cni/net.d"
EOF
  cat >"$D/cni/net.d/10-e2e.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "e2e", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$D/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR", "rangeStart": "10.222.0.10", "gateway": "$GW"}]],
            "routes": [{"dst": "$SVC_CIDR"}]}}
]}
EOF
  # Pods get routes to the pod and Service ranges only, no default route.
  # No nameserver: pods with dnsPolicy Default get no upstream DNS.
  echo "# no upstream DNS in the e2e cluster" >"$D/etc/resolv.conf.host"
  cat >"$D/etc/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$D/run/containerd.sock
imageServiceEndpoint: unix://$D/run/containerd.sock
address: $GW
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $D/pki/kubelet-serving.crt
tlsPrivateKeyFile: $D/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $D/pki/ca.crt}
authorization: {mode: AlwaysAllow}
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
resolvConf: $D/etc/resolv.conf.host
podLogsDir: $D/kubelet/pod-logs
failSwapOn: false
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
rotateCertificates: false
serializeImagePulls: false
maxPods: ${E2E_MAX_PODS:-30}
EOF
  cat >"$D/etc/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $D/pki/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [$GW/32]
# 0: leave the host's conntrack table size and timeouts alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
EOF
}

# start NAME COMMAND...: a daemon in its own session (a terminal's signals
# do not reach it), its pid recorded for down.
start() {
  local name=$1
  shift
  setsid "$@" >"$D/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$D/run/$name.pid"
}

control_plane_up() {
  local ca=(--cacert "$D/pki/ca.crt" --cert "$D/pki/admin.crt" --key "$D/pki/admin.key")
  start etcd "$BIN/etcd" --name e2e --data-dir "$D/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync
  waitfor 30 etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"
  log "etcd healthy"
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address="$GW" --advertise-address="$GW" --secure-port="$API_PORT" \
    --tls-cert-file="$D/pki/apiserver.crt" --tls-private-key-file="$D/pki/apiserver.key" --client-ca-file="$D/pki/ca.crt" \
    --service-account-key-file="$D/pki/sa.pub" --service-account-signing-key-file="$D/pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range="$SVC_CIDR" --authorization-mode=Node,RBAC --allow-privileged=false \
    --kubelet-client-certificate="$D/pki/apiserver-kubelet-client.crt" --kubelet-client-key="$D/pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$D/pki/ca.crt" --kubelet-preferred-address-types=InternalIP \
    --enable-admission-plugins=NodeRestriction
  waitfor 120 kube-apiserver curl -sf "${ca[@]}" "https://$GW:$API_PORT/readyz"
  log "kube-apiserver ready"
}

node_up() {
  local pki=$D/pki
  start kubelet "$BIN/kubelet" --config="$D/etc/kubelet.yaml" --kubeconfig="$pki/kubelet.kubeconfig" \
    --root-dir="$D/kubelet/root" --cert-dir="$D/kubelet/certs" --hostname-override="$NODE" --node-ip="$GW" -v=1
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$pki/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$pki/controller-manager.kubeconfig" --authorization-kubeconfig="$pki/controller-manager.kubeconfig" \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" --use-service-account-credentials=true \
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" --leader-elect=false \
    --bind-address=127.0.0.1 --secure-port=10257 --service-cluster-ip-range="$SVC_CIDR" \
    --cluster-cidr="$POD_CIDR" --allocate-node-cidrs=false
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$pki/scheduler.kubeconfig" \
    --authentication-kubeconfig="$pki/scheduler.kubeconfig" --authorization-kubeconfig="$pki/scheduler.kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port=10259
  start kube-proxy "$BIN/kube-proxy" --config="$D/etc/kube-proxy.yaml"
  waitfor 120 "node $NODE" kubectl wait --for=condition=Ready "node/$NODE" --timeout=1s
  log "node Ready"
  waitfor 120 "the default ServiceAccount" kubectl get serviceaccount default -n default
  log "controllers up"
}

addons() {
  local i
  {
    cat <<EOF
# Static local volumes: the kubelet applies fsGroup to local volumes (not
# to hostPath ones), as a cloud disk's would be.
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: e2e-local
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
EOF
    for ((i = 0; i < ${E2E_VOLUMES:-3}; i++)); do
      mkdir -p "$D/pv/pv$i"
      cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: e2e-pv$i}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: e2e-local
  local: {path: "$D/pv/pv$i"}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$NODE]}]
EOF
    done
    sed "s/@DNS_IP@/$DNS_IP/" "$repo/hack/e2e/coredns.yaml"
  } >"$D/etc/addons.yaml"
  kubectl apply -f "$D/etc/addons.yaml" >/dev/null
  kubectl -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null
  log "CoreDNS ready"
}

up() {
  [[ $(id -u) == 0 ]] || die "needs root"
  BIN=${E2E_BIN:-$("$repo/hack/e2e-binaries.sh")}
  local images=${E2E_IMAGES:-$D/images} img
  compgen -G "$images/*.tar" >/dev/null || die "no images in $images (hack/e2e-images.sh builds them)"
  ensure_packages
  leftovers
  # Nothing runs from a previous run (checked above): start afresh, keeping
  # the images when they live here.
  find "$D" -mindepth 1 -maxdepth 1 ! -name images -exec rm -rf {} + 2>/dev/null || true
  mkdir -p "$STATE" "$D/run" "$D/logs"
  echo "$BIN" >"$STATE/bin"
  snapshot "$STATE/before"
  touch "$STATE/active"
  # From here on, a failure or a signal tears down what started.
  trap 'log "start-up failed: tearing down"; down || true' EXIT
  trap 'exit 1' INT TERM HUP
  network_up
  log "network ready"
  pki
  configs
  start containerd containerd --config "$D/etc/containerd.toml"
  waitfor 20 containerd ctr --address "$D/run/containerd.sock" version
  log "containerd up"
  for img in "$images"/*.tar; do
    ctr --address "$D/run/containerd.sock" -n k8s.io images import "$img" >/dev/null
  done
  log "images imported"
  control_plane_up
  node_up
  addons
  trap - EXIT
  log "cluster up: KUBECONFIG=$D/pki/admin.kubeconfig"
  echo "e2e-cluster: ready"
}

# hold waits for stdin to close or a signal, then tears down.
hold() {
  trap 'teardown_and_exit' INT TERM HUP
  while read -r _; do :; done
  teardown_and_exit
}

teardown_and_exit() {
  trap '' INT TERM HUP PIPE
  # Whoever held stdin may be gone, and its pipes with it.
  exec >>"$D/logs/down.log" 2>&1
  if down; then exit 0; fi
  exit 1
}

# ---------------------------------------------------------------- tear-down

alive() { [[ -f $D/run/$1.pid ]] && kill -0 "$(cat "$D/run/$1.pid")" 2>/dev/null; }

# stop NAME: SIGTERM to the recorded pid, SIGKILL after 10 s.
stop() {
  local pid i
  if ! alive "$1"; then
    rm -f "$D/run/$1.pid"
    return 0
  fi
  pid=$(cat "$D/run/$1.pid")
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  rm -f "$D/run/$1.pid"
}

# drain lets the kubelet stop every pod (CNI DEL, unmounts) while it can.
drain() {
  local i
  alive kube-apiserver && alive kubelet || return 0
  kubectl get namespaces -o name | grep -vE '/(default|kube-system|kube-public|kube-node-lease)$' |
    xargs -r "$BIN/kubectl" --kubeconfig "$D/pki/admin.kubeconfig" delete --wait=false >/dev/null 2>&1 || true
  kubectl delete deployments,statefulsets,daemonsets,replicasets --all -A --wait=false >/dev/null 2>&1 || true
  kubectl delete pods --all -A --grace-period=1 --timeout=60s >/dev/null 2>&1 || true
  for ((i = 0; i < 60; i++)); do
    [[ -z $(ctr --address "$D/run/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null) ]] && break
    sleep 1
  done
}

stop_containers() {
  local c=(ctr --address "$D/run/containerd.sock" -n k8s.io) t pid
  if alive containerd; then
    for t in $("${c[@]}" tasks ls -q 2>/dev/null); do
      "${c[@]}" tasks kill -s KILL "$t" >/dev/null 2>&1 || true
      "${c[@]}" tasks rm -f "$t" >/dev/null 2>&1 || true
    done
    for t in $("${c[@]}" containers ls -q 2>/dev/null); do "${c[@]}" containers rm "$t" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  # Shims outlive containerd; ours name its socket. Kill them by pid.
  for pid in $(pgrep -f -- "-address $D/run/containerd.sock" || true); do
    kill -9 "$pid" 2>/dev/null || true
  done
}

restore_mounts() {
  local m
  comm -13 "$STATE/before/mounts" <(awk '{print $5}' /proc/self/mountinfo | sort) | sort -r |
    while read -r m; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
    done
}

restore_links() {
  local l
  comm -13 "$STATE/before/links" <(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort) |
    while read -r l; do ip link del "$l" 2>/dev/null || true; done
}

restore_iptables() {
  local table chain r cmd tbl ch
  if [[ -f $STATE/rules ]]; then
    while read -r table chain r; do
      # shellcheck disable=SC2086 # r is a list of arguments
      while iptables -t "$table" -D "$chain" $r -m comment --comment "$TAG" -j DROP 2>/dev/null; do :; done
    done <"$STATE/rules"
  fi
  # The kubelet's (KUBE-FIREWALL, KUBE-KUBELET-CANARY...) and kube-proxy's
  # chains: none existed before (leftovers refuses to start otherwise).
  for cmd in iptables ip6tables; do
    for tbl in filter nat mangle raw; do
      "$cmd-save" -t "$tbl" 2>/dev/null | awk '/^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j (KUBE|CNI)-/' |
        sed 's/^-A/-D/' | while read -r r; do eval "$cmd -t $tbl $r" || true; done
      for ch in $("$cmd-save" -t "$tbl" 2>/dev/null | awk '/^:(KUBE|CNI)-/ {print substr($1, 2)}'); do "$cmd" -t "$tbl" -F "$ch"; done
      for ch in $("$cmd-save" -t "$tbl" 2>/dev/null | awk '/^:(KUBE|CNI)-/ {print substr($1, 2)}'); do "$cmd" -t "$tbl" -X "$ch"; done
    done
  done
}

# restore_nft_tables deletes the tables iptables-nft created for the rules
# removed above, once they hold no rule.
restore_nft_tables() {
  local fam name
  comm -13 "$STATE/before/nft-tables" <(nft list tables | sort) | while read -r _ fam name; do
    if nft list table "$fam" "$name" | grep -vqE '^\s*(table|chain|type|policy|\}|$)'; then
      log "table $fam $name still holds rules: left in place"
    else
      nft delete table "$fam" "$name"
    fi
  done
}

restore_sysctls() {
  local name value
  while read -r name _ value; do
    [[ $value == absent ]] && continue
    [[ $(sysctl -n "$name" 2>/dev/null) == "$value" ]] || sysctl -q -w "$name=$value"
  done <"$STATE/before/sysctl"
}

restore_cgroups() {
  local d
  comm -13 "$STATE/before/cgroups" <(find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d 2>/dev/null | sort) |
    while read -r d; do find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || log "cannot remove cgroup $d"; done
}

restore_paths() {
  local p
  for p in $HOST_PATHS; do
    if [[ -e $p ]]; then find "$p" -xdev 2>/dev/null; fi
  done | sort | comm -13 "$STATE/before/paths" - | sort -r | while read -r p; do rm -rf "$p"; done
}

# verify compares the host with the snapshot taken before the start.
verify() {
  local f bad=0
  snapshot "$STATE/after"
  for f in iptables-v4 iptables-v6 nftables nft-tables sysctl mounts links cgroups paths; do
    if ! diff -u "$STATE/before/$f" "$STATE/after/$f" >"$STATE/diff-$f" 2>&1; then
      log "not restored: $f"
      cat "$STATE/diff-$f" >&2
      bad=1
    fi
  done
  return $bad
}

down() {
  local p
  [[ $(id -u) == 0 ]] || die "needs root"
  if [[ ! -f $STATE/active ]]; then
    log "nothing to tear down in $D"
    return 0
  fi
  BIN=$(cat "$STATE/bin" 2>/dev/null || "$repo/hack/e2e-binaries.sh")
  log "tearing down"
  drain
  for p in kube-controller-manager kube-scheduler kubelet kube-proxy; do stop "$p"; done
  "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  stop kube-apiserver
  stop etcd
  stop_containers
  conntrack -D -s "$POD_CIDR" >/dev/null 2>&1 || true
  conntrack -D -d "$POD_CIDR" >/dev/null 2>&1 || true
  conntrack -D -d "$SVC_CIDR" >/dev/null 2>&1 || true
  restore_mounts
  restore_links
  restore_iptables
  restore_nft_tables
  restore_sysctls
  restore_cgroups
  restore_paths
  if ! verify; then
    log "the host is not as it was: see the differences above (kept in $STATE)"
    return 1
  fi
  rm -rf "$D/containerd" "$D/etcd" "$D/kubelet" "$D/pv" "$D/cni/ipam" "$STATE/active"
  log "down: the host is as it was"
}

case ${1:-} in
up)
  up
  if [[ ${2:-} == --hold ]]; then hold; fi
  ;;
down) down ;;
*)
  echo "usage: $0 up [--hold] | down" >&2
  exit 2
  ;;
esac
