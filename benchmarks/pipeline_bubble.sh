#!/usr/bin/env bash
# Pipeline bubble on one host: the small shape (8 blocks, fp32) with 4 micro-batches of 1 x 512 tokens a step, on
# 1 rank x 1 thread, and at pp = 2 and pp = 4 (1 thread per rank; pp = 4 over-subscribes a 2-core host) with each
# built-in schedule (interleaved 1F1B over 2 chunks per rank), and 1F1B at pp = 2 with the blocks split 5 + 3 (the last
# stage also runs the 16k-vocabulary head, about two blocks' work). Prints each run's mean step time and tokens/s (steps
# after the first two), the measured bubble (kforge's pp/bubble: the share of the step the stages waited for each
# other, mean over stages), the bubble the schedule's order leaves on paper (kforge's start-up log: forward 1,
# backward 2) and the theoretical (p - 1) / (m + p - 1) of GPipe and 1F1B. Reports, never asserts.
#
#   bash benchmarks/pipeline_bubble.sh [--steps N] [--kforge PATH]
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=8
KFORGE=build/bin/kforge
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --kforge) KFORGE="$2"; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -x "$KFORGE" ]] || { echo "no kforge at $KFORGE (build it, or pass --kforge)" >&2; exit 2; }

WORK=benchmarks/.work-bubble
rm -rf "$WORK"
mkdir -p "$WORK/data"
/usr/bin/python3 benchmarks/random_tokens.py 16384 400000 "$WORK/data/tokens.npy" >/dev/null
MICRO=4

# name | ranks | overrides
runs=(
  "1 rank|1|"
  "pp=2 gpipe|2|--distributed.pp=2 --distributed.pp_schedule=gpipe"
  "pp=2 1f1b|2|--distributed.pp=2 --distributed.pp_schedule=1f1b"
  "pp=2 1f1b blocks 5+3|2|--distributed.pp=2 --distributed.pp_schedule=1f1b --distributed.pp_layer_split=[5,3]"
  "pp=2 interleaved x2|2|--distributed.pp=2 --distributed.pp_schedule=interleaved_1f1b --distributed.virtual_stages=2"
  "pp=4 gpipe|4|--distributed.pp=4 --distributed.pp_schedule=gpipe"
  "pp=4 1f1b|4|--distributed.pp=4 --distributed.pp_schedule=1f1b"
  "pp=4 interleaved x2|4|--distributed.pp=4 --distributed.pp_schedule=interleaved_1f1b --distributed.virtual_stages=2"
)

# Mean of a metric over the steps after the first two, from a run's metrics.jsonl.
mean_of() { /usr/bin/python3 benchmarks/metric_mean.py "$1" "$2" 4; }

printf "%-22s %9s %9s %10s %10s %14s\n" "run" "s/step" "tok/s" "bubble" "planned" "(p-1)/(m+p-1)"
for spec in "${runs[@]}"; do
  IFS='|' read -r name ranks overrides <<<"$spec"
  dir="$WORK/${name//[^a-zA-Z0-9]/}"
  # shellcheck disable=SC2086
  "$KFORGE" launch --nproc-per-node "$ranks" --log-dir "$dir/logs" -- run benchmarks/configs/bench_small.toml \
    --data.dataset_path="$WORK/data" --train.max_steps="$STEPS" --train.batch_size=1 \
    --train.grad_accum_steps="$MICRO" --distributed.dp_shard=1 --train.num_threads=1 --eval.enabled=false \
    --checkpoint.dir="$dir/ckpt" --checkpoint.interval=1000000 --metrics.run_dir="$dir/run" \
    --metrics.backends='["jsonl"]' --metrics.log_interval=1 $overrides >"$dir.out" 2>&1 ||
    { echo "$name: failed, see $dir.out" >&2; tail -5 "$dir.out" >&2; exit 1; }
  metrics=$(find "$dir/run" -name metrics.jsonl | head -1)
  step=$(mean_of "$metrics" train/step_time_sec)
  bubble=$(mean_of "$metrics" pp/bubble)
  theory=- planned=-
  if [[ $ranks -gt 1 ]]; then
    theory=$(printf "%.3f" "$(echo "($ranks - 1) / ($MICRO + $ranks - 1)" | bc -l)")
    planned=$(sed -n 's/.*the order leaves a \([0-9.]*\)% bubble.*/\1/p' "$dir.out" | head -1)
    planned=$(printf "%.3f" "$(echo "$planned / 100" | bc -l)")
  fi
  printf "%-22s %9s %9.0f %10s %10s %14s\n" "$name" "$step" "$(echo "$MICRO * 512 / $step" | bc -l)" "$bubble" \
    "$planned" "$theory"
done
