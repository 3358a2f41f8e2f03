#!/usr/bin/env bash
# kforge prepare-data throughput: MB/s of text and tokens/s, per thread count, on Moby-Dick concatenated
# COPIES times (plain, and gzip- and zstd-compressed with --compressed).
#
#   bash benchmarks/prepare_data.sh [--kforge PATH] [--tokenizer FILE] [--text FILE] [--copies N]
#                                   [--threads "1 2"] [--repeats N] [--compressed]
#
# --tokenizer is any file kforge's Tokenizer loads (a SentencePiece .model; a BPE tokenizer.json or
# .tiktoken where supported); without it an 8000-piece SentencePiece BPE model is trained on the text
# once (benchmarks/.work/prepare_data/spm8k/tokenizer.model). --text defaults to data/raw/moby-dick.txt
# (scripts/fetch_data.sh). Each run writes one train split (--eval-fraction 0, so a single pass over the
# input) of 50M-token shards; the numbers are kforge's own "throughput" line: text bytes (decompressed)
# and tokens over the wall time of reading, encoding and writing, which excludes loading the tokenizer;
# the best of --repeats runs (default 3), which discounts other work on the machine. MB/s/thread is MB/s
# divided by the threads; MB/CPU s is text per CPU second of the whole process during the pass (every
# thread: reader, encoders, writer), the per-core rate even on a busy machine. It reports, it does not
# pass or fail.
set -euo pipefail
cd "$(dirname "$0")/.."

KFORGE=build/bin/kforge
TOKENIZER=
TEXT=data/raw/moby-dick.txt
COPIES=20
THREADS="1 $(nproc)"
COMPRESSED=0
REPEATS=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kforge) KFORGE="$2"; shift 2 ;;
    --tokenizer) TOKENIZER="$2"; shift 2 ;;
    --text) TEXT="$2"; shift 2 ;;
    --copies) COPIES="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    --compressed) COMPRESSED=1; shift ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -f "$TEXT" ]] || { echo "no text at $TEXT: run scripts/fetch_data.sh, or pass --text FILE" >&2; exit 1; }
WORK=benchmarks/.work/prepare_data
mkdir -p "$WORK"

if [[ -z "$TOKENIZER" ]]; then
  TOKENIZER=$WORK/spm8k/tokenizer.model
  if [[ ! -f "$TOKENIZER" ]]; then
    "$KFORGE" prepare-data --input "$TEXT" --output "$WORK/spm8k" --train-tokenizer --vocab-size 8000 \
      --eval-fraction 0 --quiet >/dev/null
  fi
fi
corpus=$WORK/corpus_x$COPIES.txt
if [[ ! -f "$corpus" ]]; then
  for _ in $(seq "$COPIES"); do cat "$TEXT"; done >"$corpus"
fi
inputs=("$corpus")
if [[ $COMPRESSED == 1 ]]; then
  [[ -f "$corpus.gz" ]] || gzip -6 -c "$corpus" >"$corpus.gz"
  [[ -f "$corpus.zst" ]] || zstd -q -3 -c "$corpus" >"$corpus.zst"
  inputs+=("$corpus.gz" "$corpus.zst")
fi

echo "tokenizer $TOKENIZER; text $corpus ($(stat -c %s "$corpus") bytes); $(nproc) cores"
printf '%-24s %7s %9s %12s %12s %12s\n' "input" "threads" "MB/s" "MB/s/thread" "MB/CPU s" "tokens/s"
for input in "${inputs[@]}"; do
  for t in $THREADS; do
    best=
    for _ in $(seq "$REPEATS"); do
      out=$("$KFORGE" prepare-data --input "$input" --output "$WORK/out" --tokenizer "$TOKENIZER" --eval-fraction 0 \
        --threads "$t" --overwrite --quiet)
      # throughput  X MB of text in S s: R MB/s, T tokens/s, C MB per CPU second (N threads)
      read -r mbs tps cpu < <(sed -n 's/^throughput .*: \([0-9.]*\) MB\/s, \([0-9]*\) tokens\/s, \([0-9.]*\) MB per CPU.*/\1 \2 \3/p' <<<"$out")
      if [[ -z "$best" ]] || awk -v a="$mbs" -v b="$best" 'BEGIN { exit !(a > b) }'; then
        best=$mbs best_tps=$tps best_cpu=$cpu
      fi
    done
    printf '%-24s %7d %9.2f %12.2f %12.2f %12.0f\n' "$(basename "$input")" "$t" "$best" \
      "$(awk -v m="$best" -v t="$t" 'BEGIN { print m / t }')" "$best_cpu" "$best_tps"
  done
done
