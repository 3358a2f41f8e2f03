#!/usr/bin/env bash
# A cluster of N nodes on this machine for the multi-node tests: each node a network + UTS + mount namespace.
#
#   scripts/cluster.sh up N [--hosts-map-node] [--slurm]  # nodes node1..nodeN at 10.78.0.11.. on the bridge br-kf
#   scripts/cluster.sh exec I CMD...             # runs CMD on node I (its network, hostname and /etc files)
#   scripts/cluster.sh down                      # removes every node and the bridge; safe to run again
#
# Node I is the network namespace kf-nodeI with eth0 at 10.78.0.1I/24 (on the bridge br-kf, 10.78.0.1) and its own
# /etc/hosts and /etc/nsswitch.conf (`hosts: files`: a DNS lookup from a namespace stalls ~20 s). Its hosts file maps
# its own hostname to 127.0.1.1, as Debian's default /etc/hosts does on many clusters (so a process that trusts the
# hostname advertises loopback), and every other node to its address; --hosts-map-node maps the node's own name to
# its bridge address too. The bridge addresses exist only inside this machine; nothing is routed anywhere else.
# --slurm also starts a Slurm cluster from Debian's packages (scripts/setup.sh installs them; recipe and pitfalls in
# ../shared/docs/local-slurm.md): one munged, slurmctld as host kfctl (10.78.0.1, the bridge) and a slurmd per node
# with 2 CPUs, partition "debug"; clients need SLURM_CONF=$KFORGE_CLUSTER_DIR/slurm/slurm.conf (`up` prints it).
# Needs root (ip netns, unshare). The state lives in KFORGE_CLUSTER_DIR (default /run/kforge-cluster); `down` stops
# every process in a node's network namespace and the daemons it started, by pid.
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

# Starts munged, slurmctld (root network namespace, hostname kfctl) and one slurmd per node; waits (at most 30 s) until
# every node is idle.
start_slurm() {
  local n=$1 S="$STATE/slurm" i
  mkdir -p "$S/munge/etc" "$S/munge/run" "$S/munge/lib" "$S/state" "$S/spool" "$S/log" "$S/run" "$S/etc"
  chmod 700 "$S/munge/etc" && chmod 755 "$S/munge/run"
  mungekey -c -k "$S/munge/etc/munge.key" && chmod 400 "$S/munge/etc/munge.key"
  munged -S "$S/munge/run/munge.socket" --key-file="$S/munge/etc/munge.key" --pid-file="$S/run/munged.pid" \
    --log-file="$S/log/munged.log" --seed-file="$S/munge/lib/munge.seed" --force
  {
    echo "ClusterName=kf"
    echo "SlurmctldHost=kfctl($SUBNET.1)"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    # A requeued job may start again cred_expire + 1 s later (default 120), and the scheduler looks every second.
    echo "AuthInfo=socket=$S/munge/run/munge.socket,cred_expire=10"
    echo "SchedulerParameters=sched_interval=1"
    echo "StateSaveLocation=$S/state"
    echo "SlurmdSpoolDir=$S/spool/%n"
    echo "SlurmctldPidFile=$S/run/slurmctld.pid"
    echo "SlurmdPidFile=$S/run/slurmd.%n.pid"
    echo "SlurmctldLogFile=$S/log/slurmctld.log"
    echo "SlurmdLogFile=$S/log/slurmd.%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "MpiDefault=none"
    echo "SwitchType=switch/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    echo "SlurmdTimeout=30"
    echo "KillWait=5"
    for ((i = 1; i <= n; i++)); do echo "NodeName=node$i NodeAddr=$(node_addr "$i") CPUs=2 State=UNKNOWN"; done
    echo "PartitionName=debug Nodes=node[1-$n] Default=YES MaxTime=INFINITE State=UP"
  } >"$S/slurm.conf"
  # slurmctld's own view: kfctl and every node at its bridge address.
  mkdir -p "$STATE/kfctl"
  {
    echo "127.0.0.1 localhost"
    echo "$SUBNET.1 kfctl"
    for ((i = 1; i <= n; i++)); do echo "$(node_addr "$i") node$i"; done
  } >"$STATE/kfctl/hosts"
  echo "hosts: files" >"$STATE/kfctl/nsswitch.conf"
  setsid unshare --uts --mount --propagation private sh -c 'hostname kfctl && mount --bind "$1/hosts" /etc/hosts &&
    mount --bind "$1/nsswitch.conf" /etc/nsswitch.conf && exec slurmctld -D -i -f "$2"' sh "$STATE/kfctl" \
    "$S/slurm.conf" >"$S/log/slurmctld.out" 2>&1 </dev/null &
  for ((i = 1; i <= n; i++)); do
    setsid "$0" exec "$i" slurmd -D -f "$S/slurm.conf" >"$S/log/slurmd.node$i.out" 2>&1 </dev/null &
  done
  local tries
  for ((tries = 0; tries < 60; tries++)); do
    [[ $(SLURM_CONF="$S/slurm.conf" sinfo -h -o '%t' -p debug 2>/dev/null | sort -u) == idle ]] && break
    sleep 0.5
  done
  ((tries < 60)) || die "Slurm did not come up within 30 s (logs in $S/log)"
  echo "cluster.sh: Slurm up: export SLURM_CONF=$S/slurm.conf"
}

up() {
  local n=${1:-} map_node=0 slurm=0 flag
  for flag in "${@:2}"; do
    case $flag in
      --hosts-map-node) map_node=1 ;;
      --slurm) slurm=1 ;;
      *) die "unknown flag '$flag' (usage: cluster.sh up N [--hosts-map-node] [--slurm])" ;;
    esac
  done
  [[ $n =~ ^[0-9]+$ && $n -ge 1 && $n -le $MAX_NODES ]] ||
    die "usage: cluster.sh up N [--hosts-map-node] [--slurm] (N in 1..$MAX_NODES, got '${n}')"
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
  if [[ $slurm == 1 ]]; then start_slurm "$n"; fi
}

# Sends `signal` to the pids given; true while one of them is still alive.
signal_pids() {
  local signal=$1 alive=1 pid
  shift
  for pid in "$@"; do kill "-$signal" "$pid" 2>/dev/null && alive=0; done
  return $alive
}

# What runs in the nodes' network namespaces (slurmd, job steps, tasks) and the daemons in $STATE/slurm/run/*.pid: TERM,
# then KILL after at most 5 s.
stop_processes() {
  local pids=() i f tries
  for ((i = 1; i <= MAX_NODES; i++)); do
    [[ -e /run/netns/kf-node$i ]] && mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "kf-node$i" 2>/dev/null)
  done
  for f in "$STATE"/slurm/run/*.pid; do [[ -f $f ]] && pids+=("$(cat "$f")"); done
  ((${#pids[@]})) || return 0
  signal_pids TERM "${pids[@]}" || return 0
  for ((tries = 0; tries < 50; tries++)); do
    signal_pids 0 "${pids[@]}" || return 0
    sleep 0.1
  done
  signal_pids KILL "${pids[@]}" || true
}

down() {
  local i
  stop_processes
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
