#!/usr/bin/env bash
# Memory per rank under FSDP: the same model and per-rank batch on 1 rank, on 4 ranks as plain data
# parallelism (dp_shard = 1), and with FSDP over dp_shard = 2 and 4. Prints each rank's peak RSS
# (kforge logs it at the end of training) and the state each rank holds (parameters, gradients and
# AdamW moments: 4 x its parameter bytes). Reports, never asserts.
#
#   bash benchmarks/fsdp_memory.sh [--steps N] [--kforge PATH]
#
# Uses benchmarks/configs/bench_small.toml (dim 512, 8 layers, vocab 16384: 42M parameters) on
# random tokens, batch 2 x 256 per rank, 1 thread per rank, no eval and no checkpoint.
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=3
KFORGE=build/bin/kforge
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --kforge) KFORGE="$2"; shift 2 ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -x "$KFORGE" ]] || { echo "no kforge at $KFORGE (build it, or pass --kforge)" >&2; exit 2; }

WORK=benchmarks/.work-fsdp
rm -rf "$WORK"
mkdir -p "$WORK/data"
/usr/bin/python3 benchmarks/random_tokens.py 16384 400000 "$WORK/data/tokens.npy"

# name | ranks | overrides
runs=(
  "1 rank|1|--distributed.dp_shard=1"
  "4 ranks, DP (dp_shard=1)|4|--distributed.dp_replicate=4 --distributed.dp_shard=1"
  "2 ranks, FSDP (dp_shard=2)|2|--distributed.dp_shard=2"
  "4 ranks, FSDP (dp_shard=4)|4|--distributed.dp_shard=4"
)
printf "%-28s %16s %22s\n" "run" "state/rank (MB)" "peak RSS/rank (GiB)"
for spec in "${runs[@]}"; do
  IFS='|' read -r name ranks overrides <<<"$spec"
  dir="$WORK/run-$ranks-${overrides//[^a-z0-9]/}"
  # shellcheck disable=SC2086
  "$KFORGE" launch --nproc-per-node "$ranks" --log-dir "$dir/logs" -- run benchmarks/configs/bench_small.toml \
    --data.dataset_path="$WORK/data" --train.max_steps="$STEPS" --train.batch_size=2 --train.seq_len=256 \
    --train.num_threads=1 --eval.enabled=false --checkpoint.dir="$dir/ckpt" --checkpoint.interval=1000000 \
    --metrics.backends='["jsonl"]' --metrics.peak_tflops=1 $overrides >"$dir.out" 2>&1 ||
    { echo "$name: failed, see $dir.out" >&2; tail -5 "$dir.out" >&2; continue; }
  logs=$(cat "$dir.out" "$dir"/logs/*.log 2>/dev/null || true)
  rss=$(grep -o "peak resident memory of this rank: [0-9.]*" <<<"$logs" | awk '{print $NF}' | sort -n | tail -1 || true)
  held=$(grep -o "this rank holds [0-9.]* of [0-9.]* MB" <<<"$logs" | head -1 | awk '{print $4}' || true)
  [[ -n "$held" ]] || held=$(grep -o "[0-9]* trainable parameters" <<<"$logs" | head -1 | awk '{printf "%.2f", $1 * 4 / 1e6}')
  printf "%-28s %16.0f %22s\n" "$name" "$(echo "$held * 4" | bc -l)" "$rss"
done
