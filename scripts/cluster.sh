#!/usr/bin/env bash
# A cluster of N nodes on this machine for the multi-node tests: each node a network + UTS + mount namespace.
#
#   scripts/cluster.sh up N [--hosts-map-node]   # nodes node1..nodeN at 10.78.0.11.. on the bridge br-kf
#   scripts/cluster.sh exec I CMD...             # runs CMD on node I (its network, hostname and /etc files)
#   scripts/cluster.sh down                      # removes every node and the bridge; safe to run again
#
# Node I is the network namespace kf-nodeI with eth0 at 10.78.0.1I/24 (on the bridge br-kf, 10.78.0.1) and its own
# /etc/hosts and /etc/nsswitch.conf (`hosts: files`: a DNS lookup from a namespace stalls ~20 s). Its hosts file maps
# its own hostname to 127.0.1.1, as Debian's default /etc/hosts does on many clusters (so a process that trusts the
# hostname advertises loopback), and every other node to its address; --hosts-map-node maps the node's own name to
# its bridge address too. The bridge addresses exist only inside this machine; nothing is routed anywhere else.
# Needs root (ip netns, unshare). The state lives in KFORGE_CLUSTER_DIR (default /run/kforge-cluster).
set -euo pipefail

STATE=${KFORGE_CLUSTER_DIR:-/run/kforge-cluster}
BRIDGE=br-kf
SUBNET=10.78.0
MAX_NODES=8  # addresses .11 .. .18

node_addr() { echo "$SUBNET.$((10 + $1))"; }

die() {
  echo "cluster.sh: $*" >&2
  exit 2
}

# Writes node I's private hosts and nsswitch files under $STATE/nodeI/.
write_node_files() {
  local i=$1 n=$2 map_node=$3 dir="$STATE/node$1" j
  mkdir -p "$dir"
  {
    echo "127.0.0.1 localhost"
    if [[ $map_node == 1 ]]; then echo "$(node_addr "$i") node$i"; else echo "127.0.1.1 node$i"; fi
    for ((j = 1; j <= n; j++)); do [[ $j == "$i" ]] || echo "$(node_addr "$j") node$j"; done
    echo "$SUBNET.1 kfctl"
  } >"$dir/hosts"
  echo "hosts: files" >"$dir/nsswitch.conf"
}

up() {
  local n=${1:-}
  local map_node=0
  [[ ${2:-} == --hosts-map-node ]] && map_node=1
  [[ $n =~ ^[0-9]+$ && $n -ge 1 && $n -le $MAX_NODES ]] || die "usage: cluster.sh up N [--hosts-map-node] (N in 1..$MAX_NODES, got '${n}')"
  [[ $(id -u) == 0 ]] || die "needs root (ip netns, unshare)"
  down
  mkdir -p "$STATE"
  echo "$n" >"$STATE/nodes"
  ip link add "$BRIDGE" type bridge
  ip addr add "$SUBNET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  local i
  for ((i = 1; i <= n; i++)); do
    ip netns add "kf-node$i"
    ip link add "kf-veth$i" type veth peer name eth0 netns "kf-node$i"
    ip link set "kf-veth$i" master "$BRIDGE" up
    ip -n "kf-node$i" addr add "$(node_addr "$i")/24" dev eth0
    ip -n "kf-node$i" link set lo up
    ip -n "kf-node$i" link set eth0 up
    write_node_files "$i" "$n" "$map_node"
  done
  echo "cluster.sh: $n node(s) up: $(for ((i = 1; i <= n; i++)); do printf 'node%d=%s ' "$i" "$(node_addr "$i")"; done)"
}

down() {
  local i
  for ((i = 1; i <= MAX_NODES; i++)); do
    ip netns del "kf-node$i" 2>/dev/null || true
    ip link del "kf-veth$i" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -rf "$STATE"
}

# Node I's network namespace, a fresh UTS and mount namespace with its hostname and /etc files, then CMD.
node_exec() {
  local i=${1:-}
  shift || true
  [[ -f $STATE/nodes && $i =~ ^[0-9]+$ && $i -ge 1 && $i -le $(cat "$STATE/nodes") ]] ||
    die "node '$i' is not up (cluster.sh up N first)"
  [[ $# -gt 0 ]] || die "usage: cluster.sh exec I CMD..."
  # nsenter --net, not `ip netns exec`, which remounts /sys (hiding the cgroup tree slurmd needs).
  exec nsenter --net="/run/netns/kf-node$i" unshare --uts --mount --propagation private \
    sh -c 'hostname "$1" && mount --bind "$2/hosts" /etc/hosts && mount --bind "$2/nsswitch.conf" /etc/nsswitch.conf &&
           shift 2 && exec "$@"' sh "node$i" "$STATE/node$i" "$@"
}

case ${1:-} in
  up) up "${@:2}" ;;
  down) down ;;
  exec) node_exec "${@:2}" ;;
  *) die "usage: cluster.sh up N [--hosts-map-node] | exec I CMD... | down" ;;
esac
