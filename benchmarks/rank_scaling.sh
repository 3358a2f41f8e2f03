#!/usr/bin/env bash
# Rank scaling on one host: the small shape's global batch (4 x 512 tokens, fp32) on 1 rank x 2 threads, on
# 2 ranks x 1 thread as plain data parallelism, and on 2 ranks x 1 thread as FSDP (dp_shard = 2), alternated for
# --rounds rounds so drift hits all alike. Prints each run's mean step time (kforge's train/step_time_sec, steps
# after the first two) and each layout's tokens/s against the one-rank run (issue target: >= 0.9), and for a
# multi-rank run the share of rank 0's step spent inside collectives (kforge's dist/collective_seconds: the
# all-reduces, gathers and reduce-scatters it waited for, a slower rank included). Gloo on 127.0.0.1 is the transport.
# Reports, never asserts.
# --moe: the small shape with 8 experts (top 2) on 1 rank x 2 threads, and expert-parallel on 2 ranks (ep = 2) and on
# 4 ranks (ep = 4, over-subscribing a 2-core host) x 1 thread, every rank on the whole batch; also prints the share of
# the step the token exchanges take (kforge's ep/exchange_seconds).
# --tp: the small shape on 1 rank x 2 threads, on 2 ranks x 1 thread as FSDP (dp_shard = 2, each rank half the batch)
# and as tensor parallelism (tp = 2, both ranks on the whole batch); also prints the share of the step the tp
# all-reduces take (kforge's tp/exchange_seconds).
#
#   bash benchmarks/rank_scaling.sh [--moe | --tp] [--rounds N] [--steps N] [--kforge PATH]
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=2
STEPS=10
KFORGE=build/bin/kforge
MOE=0
TP=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --steps) STEPS="$2"; shift 2 ;;
    --kforge) KFORGE="$2"; shift 2 ;;
    --moe) MOE=1; shift ;;
    --tp) TP=1; shift ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -x "$KFORGE" ]] || { echo "no kforge at $KFORGE (build it, or pass --kforge)" >&2; exit 2; }

WORK=benchmarks/.work-scaling
rm -rf "$WORK"
mkdir -p "$WORK/data"
/usr/bin/python3 benchmarks/random_tokens.py 16384 400000 "$WORK/data/tokens.npy" >/dev/null

# name | ranks | threads per rank | per-rank batch | overrides
layouts=(
  "1 rank x 2 threads|1|2|4|"
  "2 ranks x 1 thread, DP|2|1|2|--distributed.dp_replicate=2 --distributed.dp_shard=1"
  "2 ranks x 1 thread, FSDP|2|1|2|--distributed.dp_shard=2"
)
shape=()
exchange_metric=ep/exchange_seconds
if [[ $TP == 1 ]]; then
  exchange_metric=tp/exchange_seconds
  layouts=(
    "1 rank x 2 threads|1|2|4|"
    "2 ranks x 1 thread, FSDP|2|1|2|--distributed.dp_shard=2"
    "2 ranks x 1 thread, tp=2|2|1|4|--distributed.tp=2 --distributed.dp_shard=1"
  )
elif [[ $MOE == 1 ]]; then
  shape=(--model.num_experts=8 --model.moe_top_k=2)
  layouts=(
    "1 rank x 2 threads|1|2|4|"
    "2 ranks x 1 thread, ep=2|2|1|4|--distributed.ep=2 --distributed.dp_shard=1"
    "4 ranks x 1 thread, ep=4|4|1|4|--distributed.ep=4 --distributed.dp_shard=1"
  )
fi

# Mean of a metric over the steps after the first two, from a run's metrics.jsonl.
mean_of() { /usr/bin/python3 benchmarks/metric_mean.py "$1" "$2" 3; }

declare -A total waited
for ((round = 1; round <= ROUNDS; round++)); do
  for spec in "${layouts[@]}"; do
    IFS='|' read -r name ranks threads batch overrides <<<"$spec"
    dir="$WORK/r$round-${name//[^a-zA-Z0-9]/}"
    # shellcheck disable=SC2086
    "$KFORGE" launch --nproc-per-node "$ranks" --log-dir "$dir/logs" -- run benchmarks/configs/bench_small.toml \
      --data.dataset_path="$WORK/data" --train.max_steps="$STEPS" --train.batch_size="$batch" \
      --train.num_threads="$threads" --eval.enabled=false --checkpoint.dir="$dir/ckpt" \
      --checkpoint.interval=1000000 --metrics.run_dir="$dir/run" --metrics.backends='["jsonl"]' \
      --metrics.log_interval=1 "${shape[@]}" $overrides >"$dir.out" 2>&1 ||
      { echo "$name: failed, see $dir.out" >&2; tail -5 "$dir.out" >&2; exit 1; }
    metrics=$(find "$dir/run" -name metrics.jsonl | head -1)
    step=$(mean_of "$metrics" train/step_time_sec)
    exchange=$(mean_of "$metrics" "$exchange_metric")
    collective=$(mean_of "$metrics" dist/collective_seconds)
    printf "round %d  %-28s %8s s/step" "$round" "$name" "$step"
    [[ $collective != nan ]] && printf "  (collectives %s s, %.0f%%)" "$collective" "$(echo "100 * $collective / $step" | bc -l)"
    [[ $exchange != nan ]] && printf "  (exchanges %s s, %.0f%%)" "$exchange" "$(echo "100 * $exchange / $step" | bc -l)"
    echo
    total[$name]=$(echo "${total[$name]:-0} + $step" | bc -l)
    [[ $collective != nan ]] && waited[$name]=$(echo "${waited[$name]:-0} + $collective" | bc -l)
  done
done
one=${total["1 rank x 2 threads"]}
echo
printf "%-28s %10s %16s %12s\n" "layout" "s/step" "tok/s vs 1 rank" "collectives"
for spec in "${layouts[@]}"; do
  IFS='|' read -r name _ <<<"$spec"
  share=-
  [[ -n ${waited[$name]:-} ]] && share=$(printf "%.0f%%" "$(echo "100 * ${waited[$name]} / ${total[$name]}" | bc -l)")
  printf "%-28s %10.3f %16.2f %12s\n" "$name" "$(echo "${total[$name]} / $ROUNDS" | bc -l)" \
    "$(echo "$one / ${total[$name]}" | bc -l)" "$share"
done
