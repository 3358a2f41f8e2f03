#!/usr/bin/env bash
# Config load time against size, up to the 2 MiB limit (core/config/limits.h): kforge's whole load
# (read, parse, resolve, check) against Python's tomllib parsing the same file, as a Python trainer would.
#
#   bash benchmarks/config_load.sh [--kforge PATH] [--repeats N]
#
# Each config is configs/train/debug.toml plus one [data.anneal_weights] dict of K entries (the shape
# that once made loading quadratic). kforge's time is `kforge run <cfg> --dry-run` minus the same
# command on debug.toml alone (process start and plugin loading); the peer's is tomllib.load in one
# /usr/bin/python3 process. CPU seconds, median of N runs (default 5). It reports, it does not pass or fail.
set -euo pipefail
cd "$(dirname "$0")/.."

KFORGE=build/bin/kforge
REPEATS=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kforge) KFORGE="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
PY=/usr/bin/python3
WORK=benchmarks/.work/config_load
mkdir -p "$WORK"

# median_cpu_seconds CMD...: the median CPU time (user + system) of REPEATS runs of CMD, its output discarded.
# CPU time, not wall time: it holds on a machine busy with other work.
median_cpu_seconds() {
  local TIMEFORMAT='%3U %3S'
  for _ in $(seq "$REPEATS"); do
    # The dry run refuses keys this kforge does not implement, after loading: its exit status is not the point.
    { time "$@" >/dev/null 2>&1 || true; } 2>&1
  done | awk '{ print $1 + $2 }' | sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }'
}

base=$(median_cpu_seconds "$KFORGE" run configs/train/debug.toml --dry-run)
echo "kforge run --dry-run on debug.toml alone: ${base} CPU s (subtracted below)"
printf '%10s %9s %18s %14s %8s\n' "bytes" "entries" "kforge load CPU s" "tomllib CPU s" "ratio"
for entries in 35000 70000 139000; do
  cfg=$WORK/anneal_$entries.toml
  { cat configs/train/debug.toml; echo "[data.anneal_weights]"
    seq 1000000 $((1000000 + entries - 1)) | sed 's/^/w/; s/$/ = 0.5/'; } >"$cfg"
  total=$(median_cpu_seconds "$KFORGE" run "$cfg" --dry-run)
  kforge=$(awk -v t="$total" -v b="$base" 'BEGIN { printf "%.3f", t - b }')
  peer=$("$PY" - "$cfg" "$REPEATS" <<'EOF'
import sys, time, tomllib
times = []
for _ in range(int(sys.argv[2])):
    start = time.process_time()
    with open(sys.argv[1], "rb") as f:
        tomllib.load(f)
    times.append(time.process_time() - start)
print(f"{sorted(times)[len(times) // 2]:.3f}")
EOF
)
  printf '%10d %9d %18.3f %14.3f %8.2f\n' "$(stat -c %s "$cfg")" "$entries" "$kforge" "$peer" \
    "$(awk -v k="$kforge" -v p="$peer" 'BEGIN { print k / p }')"
done
echo "ratio: kforge's whole load over tomllib's parse alone (below 1: kforge is faster)."
