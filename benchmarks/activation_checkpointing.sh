#!/usr/bin/env bash
# Activation checkpointing ([train] activation_checkpointing): peak RSS and step time of none, selective and
# full on the debug and small shapes (benchmarks/configs/bench_{debug,small}.toml), one process, random tokens,
# no eval and no checkpoint. The step time is the median of train/step_time_sec over the steps after the first
# (metrics.jsonl); the peak RSS is the one kforge logs at the end. Reports, never asserts.
#
#   bash benchmarks/activation_checkpointing.sh [--steps N] [--batch B] [--seq S] [--threads T] [--shapes "debug small"] [--kforge PATH]
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=4
BATCH=4
SEQ=512
THREADS=0
SHAPES="debug small"
KFORGE=build/bin/kforge
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --batch) BATCH="$2"; shift 2 ;;
    --seq) SEQ="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --shapes) SHAPES="$2"; shift 2 ;;
    --kforge) KFORGE="$2"; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -x "$KFORGE" ]] || { echo "no kforge at $KFORGE (build it, or pass --kforge)" >&2; exit 2; }

WORK=benchmarks/.work/activation_checkpointing
rm -rf "$WORK"
mkdir -p "$WORK/data"
/usr/bin/python3 benchmarks/random_tokens.py 16384 400000 "$WORK/data/tokens.npy"

printf "%-6s %-10s %14s %16s\n" "shape" "mode" "step time (s)" "peak RSS (GiB)"
for shape in $SHAPES; do
  for mode in none selective full; do
    dir="$WORK/$shape-$mode"
    "$KFORGE" run "benchmarks/configs/bench_$shape.toml" --data.dataset_path="$WORK/data" --data.file_pattern='*.npy' \
      --train.max_steps="$STEPS" --train.batch_size="$BATCH" --train.seq_len="$SEQ" --train.num_threads="$THREADS" \
      --train.activation_checkpointing="\"$mode\"" --eval.enabled=false --checkpoint.dir="$dir/ckpt" \
      --checkpoint.interval=1000000 --metrics.run_dir="$dir" --metrics.backends='["jsonl"]' \
      --metrics.peak_tflops=1 >"$dir.out" 2>&1 ||
      { echo "$shape $mode: failed, see $dir.out" >&2; tail -5 "$dir.out" >&2; continue; }
    rss=$(grep -o "peak resident memory of this rank: [0-9.]*" "$dir.out" | awk '{print $NF}' | tail -1)
    step=$(/usr/bin/python3 - "$dir/metrics.jsonl" <<'EOF'
import json, statistics, sys
times = [r["train/step_time_sec"] for r in map(json.loads, open(sys.argv[1])) if "train/step_time_sec" in r]
print(f"{statistics.median(times[1:] or times):.3f}")
EOF
)
    printf "%-6s %-10s %14s %16s\n" "$shape" "$mode" "$step" "$rss"
  done
done
