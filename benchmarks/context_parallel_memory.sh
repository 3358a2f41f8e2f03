#!/usr/bin/env bash
# Context parallelism's reach: peak RSS per rank and step time against sequence length for cp = 1, 2 and 4 (one
# sequence per step, split over the cp ranks), and, with --cap GiB, which of them train under a per-process address
# space limit (ulimit -v) that one rank's long sequence exceeds. Reports, never asserts.
#
#   bash benchmarks/context_parallel_memory.sh [--seqs "1024 2048 4096"] [--cps "1 2 4"] [--steps N] [--cap GiB]
#                                              [--kforge PATH]
#
# A long-context shape: dim 256, 4 layers, 8 heads (4 kv), vocab 16384 (the logits dominate activations), fp32,
# 1 thread per rank, batch 1, no eval and no checkpoint; random tokens. Step time: the mean after 2 warm-up steps.
set -euo pipefail
cd "$(dirname "$0")/.."

SEQS="1024 2048 4096"
CPS="1 2 4"
STEPS=4
CAP=""
KFORGE=build/bin/kforge
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seqs) SEQS="$2"; shift 2 ;;
    --cps) CPS="$2"; shift 2 ;;
    --steps) STEPS="$2"; shift 2 ;;
    --cap) CAP="$2"; shift 2 ;;
    --kforge) KFORGE="$2"; shift 2 ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -x "$KFORGE" ]] || { echo "no kforge at $KFORGE (build it, or pass --kforge)" >&2; exit 2; }

WORK=benchmarks/.work-cp
rm -rf "$WORK"
mkdir -p "$WORK/data"
/usr/bin/python3 benchmarks/random_tokens.py 16384 400000 "$WORK/data/tokens.npy"
max_seq=0
for s in $SEQS; do (( s > max_seq )) && max_seq=$s; done

printf "%-8s %-4s %22s %16s %s\n" "seq" "cp" "peak RSS/rank (GiB)" "step time (s)" "${CAP:+under ulimit -v ${CAP} GiB}"
for seq in $SEQS; do
  for cp in $CPS; do
    dir="$WORK/run-$seq-$cp"
    limit=""
    [[ -n "$CAP" ]] && limit="ulimit -v $(( CAP * 1024 * 1024 ));"
    # shellcheck disable=SC2086
    if bash -c "$limit exec \"\$@\"" kforge "$KFORGE" launch --nproc-per-node "$cp" --log-dir "$dir/logs" -- \
      run benchmarks/configs/bench_small.toml --model.dim=256 --model.n_layers=4 --model.max_seq_len="$max_seq" \
      --data.dataset_path="$WORK/data" --train.max_steps="$STEPS" --train.batch_size=1 --train.seq_len="$seq" \
      --train.num_threads=1 --distributed.cp="$cp" --eval.enabled=false --checkpoint.dir="$dir/ckpt" \
      --checkpoint.interval=1000000 --metrics.run_dir="$dir/metrics" --metrics.backends='["jsonl"]' \
      --metrics.peak_tflops=1 >"$dir.out" 2>&1; then
      logs=$(cat "$dir.out" "$dir"/logs/*.log 2>/dev/null || true)
      rss=$(grep -o "peak resident memory of this rank: [0-9.]*" <<<"$logs" | awk '{print $NF}' | sort -n | tail -1)
      step=$(/usr/bin/python3 benchmarks/metric_mean.py "$(find "$dir/metrics" -name metrics.jsonl | head -1)" \
        train/step_time_sec)
      printf "%-8s %-4s %22s %16s %s\n" "$seq" "$cp" "$rss" "$step" "${CAP:+trains}"
    else
      why=$(grep -m1 -iho "out of memory\|bad_alloc\|cannot allocate memory" "$dir.out" "$dir"/logs/*.log 2>/dev/null |
        head -1 || true)
      printf "%-8s %-4s %22s %16s %s\n" "$seq" "$cp" "-" "-" "failed${why:+: $why}"
    fi
  done
done
