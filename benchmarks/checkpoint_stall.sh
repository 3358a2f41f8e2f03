#!/usr/bin/env bash
# Checkpoint stall: how long the step loop stops for one save, checkpoint.async_mode "disabled"
# (write, fsync, commit) against "async" (the staging copy only; a writer thread does the rest).
#
#   bash benchmarks/checkpoint_stall.sh [--shape small] [--steps N] [--interval K] [--batch B] [--kforge PATH]
#
# Runs `kforge run benchmarks/configs/bench_<shape>.toml` once per mode with a save every K steps
# and reads each save's "the step loop stalled X ms" line; prints every stall, the median per mode
# and the ratio. The checkpoint directory is on the same disk as the repository (benchmarks/.work).
# It reports, it does not pass or fail.
set -euo pipefail
cd "$(dirname "$0")/.."

SHAPE=small
STEPS=12
INTERVAL=4
BATCH=4
KFORGE=build/bin/kforge
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shape) SHAPE="$2"; shift 2 ;;
    --steps) STEPS="$2"; shift 2 ;;
    --interval) INTERVAL="$2"; shift 2 ;;
    --batch) BATCH="$2"; shift 2 ;;
    --kforge) KFORGE="$2"; shift 2 ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
PY=/usr/bin/python3
cfg="benchmarks/configs/bench_${SHAPE}.toml"
WORK=benchmarks/.work/stall
rm -rf "$WORK"
mkdir -p "$WORK/data"
vocab=$("$PY" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["model"]["vocab_size"])' "$cfg")
seq=$("$PY" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["train"]["seq_len"])' "$cfg")
"$PY" benchmarks/random_tokens.py "$vocab" $(( (STEPS + 2) * BATCH * (seq + 1) * 2 )) "$WORK/data/tokens.npy"

echo "== $SHAPE: $STEPS steps, batch $BATCH, a save every $INTERVAL steps, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in disabled async; do
  "$KFORGE" run "$cfg" --train.max_steps="$STEPS" --train.batch_size="$BATCH" --data.dataset_path="$WORK/data" \
    --checkpoint.dir="$WORK/ckpt_$mode" --checkpoint.interval="$INTERVAL" --checkpoint.keep_last_n=2 \
    --checkpoint.async_mode="$mode" --metrics.run_dir="$WORK/run_$mode" > "$WORK/$mode.log" 2>&1 \
    || { echo "kforge failed ($mode); see $WORK/$mode.log" >&2; tail -20 "$WORK/$mode.log" >&2; exit 1; }
done
"$PY" - "$WORK" "$(du -sh "$WORK/ckpt_disabled/latest/" | cut -f1)" <<'PYEOF'
import re, statistics, sys
work, size = sys.argv[1], sys.argv[2]
stalls = {}
for mode in ("disabled", "async"):
    text = open(f"{work}/{mode}.log").read()
    stalls[mode] = [float(x) for x in re.findall(r"the step loop stalled ([0-9.]+) ms", text)]
    print(f"{mode:>8}: {len(stalls[mode])} saves, stalls (ms) {stalls[mode]}, median {statistics.median(stalls[mode]):.1f}")
ratio = statistics.median(stalls["disabled"]) / statistics.median(stalls["async"])
print(f"checkpoint size {size}; sync / async median stall: {ratio:.1f}x")
PYEOF
