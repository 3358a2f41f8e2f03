#!/usr/bin/env bash
# Downstream-task scoring speed at KempnerForge's debug shape (benchmarks/configs/bench_debug.toml: dim 256, 4 layers,
# 32k vocabulary, max_seq_len 512, fp32): log-likelihood requests per second of `kforge eval --tasks` on a
# HellaSwag-like multiple-choice task and on a rolling task (benchmarks/downstream_tasks.py writes both).
#
#   bash benchmarks/downstream_eval.sh [--kforge PATH] [--docs N] [--batch B]
#
# It trains a SentencePiece tokenizer (vocab 2000) on the random words and a one-step checkpoint at the debug shape,
# then times one scoring run per task (wall seconds of the whole command, the checkpoint's load included).
# Shared-prefix scoring (one KV cache of a question's context for all its choices) is not implemented: every request
# runs its whole context. It reports, it does not pass or fail.
set -euo pipefail
cd "$(dirname "$0")/.."

KFORGE=build/bin/kforge
DOCS=100
BATCH=16
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kforge) KFORGE="$2"; shift 2 ;;
    --docs) DOCS="$2"; shift 2 ;;
    --batch) BATCH="$2"; shift 2 ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
WORK=benchmarks/.work/downstream_eval
rm -rf "$WORK" && mkdir -p "$WORK"
grep -m1 "model name" /proc/cpuinfo || true
/usr/bin/python3 benchmarks/downstream_tasks.py "$WORK" "$DOCS"
"$KFORGE" prepare-data --input "$WORK/corpus.txt" --output "$WORK/data" --train-tokenizer --vocab-size 2000 \
  >"$WORK/prepare.log" 2>&1
"$KFORGE" run benchmarks/configs/bench_debug.toml --data.dataset_path="$WORK/data/train" \
  --data.tokenizer_path="$WORK/data/tokenizer.model" --checkpoint.dir="$WORK/ckpt" --metrics.run_dir="$WORK/run" \
  --train.max_steps=1 >"$WORK/train.log" 2>&1

printf '%-8s %9s %10s %12s\n' "task" "requests" "seconds" "requests/s"
for task in choice rolling; do
  start=$(date +%s.%N)
  "$KFORGE" eval --checkpoint "$WORK/ckpt" --tasks "$task" --task-dir "$WORK/tasks" --batch-size "$BATCH" \
    --output "$WORK/$task.json" >/dev/null 2>"$WORK/$task.log"
  end=$(date +%s.%N)
  requests=$(grep -o '[0-9]*/[0-9]* requests' "$WORK/$task.log" | tail -1 | cut -d/ -f2 | cut -d' ' -f1)
  awk -v t="$task" -v n="$requests" -v a="$start" -v b="$end" \
    'BEGIN { printf "%-8s %9d %10.2f %12.1f\n", t, n, b - a, n / (b - a) }'
done
echo "requests: log-likelihood requests (choice: 4 a document; rolling: one a 512-token window)."
