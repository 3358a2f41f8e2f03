#!/usr/bin/env bash
# Downstream-task scoring speed at KempnerForge's debug shape (benchmarks/configs/bench_debug.toml: dim 256, 4 layers,
# 32k vocabulary, max_seq_len 512, fp32): log-likelihood requests per second of `kforge eval --tasks` on a
# HellaSwag-like multiple-choice task and on a rolling task (benchmarks/downstream_tasks.py writes both).
#
#   bash benchmarks/downstream_eval.sh [--kforge PATH] [--docs N] [--batch B]
#
# It trains a SentencePiece tokenizer (vocab 2000) on the random words and a one-step checkpoint at the debug shape,
# then times one scoring run per task and mode (wall seconds of the whole command, the checkpoint's load included):
# "shared" (the default: a question's context decoded once, its KV cache forked for the 4 choices) and "whole"
# (--no-shared-prefix: every choice runs with its whole context, as lm-eval-harness runs a Hugging Face model), and
# prints the ratio of their requests per second. Rolling windows share no context: both modes run them whole. The peer
# (benchmarks/peer_scorer.py: PyTorch eager, lm-eval-harness's whole-sequence batches, the same requests, threads and
# batch) is timed on its scoring loop alone, without its start-up. It fails when the two modes' log-likelihoods differ
# by more than 1e-5 relative; it reports speed, it does not judge it.
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
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
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

printf '%-8s %-7s %9s %10s %12s\n' "task" "mode" "requests" "seconds" "requests/s"
for task in choice rolling; do
  for mode in shared whole; do
    flag=$([[ $mode == whole ]] && echo --no-shared-prefix || true)
    start=$(date +%s.%N)
    "$KFORGE" eval --checkpoint "$WORK/ckpt" --tasks "$task" --task-dir "$WORK/tasks" --batch-size "$BATCH" $flag \
      --output "$WORK/$task.$mode.json" --log-samples "$WORK/$task.$mode.jsonl" >/dev/null 2>"$WORK/$task.$mode.log"
    end=$(date +%s.%N)
    requests=$(grep -o '[0-9]*/[0-9]* requests' "$WORK/$task.$mode.log" | tail -1 | cut -d/ -f2 | cut -d' ' -f1)
    awk -v t="$task" -v m="$mode" -v n="$requests" -v a="$start" -v b="$end" \
      'BEGIN { printf "%-8s %-7s %9d %10.2f %12.1f\n", t, m, n, b - a, n / (b - a) }' | tee -a "$WORK/rates.txt"
  done
  read -r n seconds < <(/usr/bin/python3 benchmarks/peer_scorer.py benchmarks/configs/bench_debug.toml \
    "$WORK/$task.whole.jsonl" "$BATCH" "$(nproc)")
  awk -v t="$task" -v n="$n" -v s="$seconds" \
    'BEGIN { printf "%-8s %-7s %9d %10.2f %12.1f\n", t, "peer", n, s, n / s }' | tee -a "$WORK/rates.txt"
  awk -v t="$task" '$1 == t { rate[$2] = $5 } END { printf "%-8s requests/s shared / whole: %.2f, shared / peer: %.2f\n", t, rate["shared"] / rate["whole"], rate["shared"] / rate["peer"] }' \
    "$WORK/rates.txt"
  /usr/bin/python3 - "$WORK/$task.shared.jsonl" "$WORK/$task.whole.jsonl" <<'EOF'
import json, sys
shared, whole = ([json.loads(line) for line in open(path)] for path in sys.argv[1:3])
worst = max(abs(a["loglikelihood"] - b["loglikelihood"]) / abs(b["loglikelihood"]) for a, b in zip(shared, whole))
print(f"{'':8} largest relative log-likelihood difference, shared vs whole: {worst:.3g} (bound 1e-5)")
sys.exit(0 if len(shared) == len(whole) and worst <= 1e-5 else 1)
EOF
done
echo "requests: log-likelihood requests (choice: 4 a document; rolling: one a 512-token window)."
