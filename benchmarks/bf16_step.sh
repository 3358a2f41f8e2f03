#!/usr/bin/env bash
# bf16 against fp32 ([train] mixed_precision): the median step time of each on the debug and small shapes
# (benchmarks/configs/bench_{debug,small}.toml), alternated over --rounds so that both meet the same machine state,
# and their ratio; with --emulated also bf16 through LibTorch's own bf16 GEMMs (linear_backend = "aten",
# sdpa_backend = "math": what kforge ran before its bf16 projection, slow on a CPU without bf16 instructions, so
# --emulated-steps of it only). One process, random tokens, no eval, no checkpoint. Reports, never asserts.
# --isa avx2 runs this CPU's AVX2 code paths only (benchmarks/isa_cap.sh).
#
#   bash benchmarks/bf16_step.sh [--steps N] [--rounds R] [--threads T] [--shapes "debug small"] [--emulated]
#                                [--emulated-steps N] [--kforge PATH] [--isa native|avx2]
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=8
ROUNDS=2
THREADS=2
SHAPES="debug small"
EMULATED=0
EMULATED_STEPS=3
KFORGE=build/bin/kforge
ISA=native
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --shapes) SHAPES="$2"; shift 2 ;;
    --emulated) EMULATED=1; shift ;;
    --emulated-steps) EMULATED_STEPS="$2"; shift 2 ;;
    --kforge) KFORGE="$2"; shift 2 ;;
    --isa) ISA="$2"; shift 2 ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -x "$KFORGE" ]] || { echo "no kforge at $KFORGE (build it, or pass --kforge)" >&2; exit 2; }
(( STEPS >= 2 && EMULATED_STEPS >= 2 )) || { echo "--steps and --emulated-steps must be >= 2 (the first is dropped)" >&2; exit 2; }
source benchmarks/isa_cap.sh
cap_isa "$ISA"

WORK=benchmarks/.work/bf16_step
rm -rf "$WORK"
mkdir -p "$WORK/data"
/usr/bin/python3 benchmarks/random_tokens.py 16384 400000 "$WORK/data/tokens.npy"
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
[[ "$flags" == *" avx512_bf16 "* ]] && isa="with bf16 instructions (avx512_bf16)" || isa="without bf16 instructions"
echo "== $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $isa$(isa_cap_note "$ISA"); $THREADS threads; load $(cut -d" " -f1-3 /proc/loadavg)"

# median_step SHAPE NAME STEPS ARGS...: runs kforge and prints the median train/step_time_sec after the first step.
median_step() {
  local shape="$1" name="$2" steps="$3" dir="$WORK/$1-$2"
  shift 3
  rm -rf "$dir"
  OMP_NUM_THREADS="$THREADS" "$KFORGE" run "benchmarks/configs/bench_$shape.toml" --data.dataset_path="$WORK/data" \
    --data.file_pattern='*.npy' --train.max_steps="$steps" --train.num_threads="$THREADS" --eval.enabled=false \
    --checkpoint.dir="$dir/ckpt" --checkpoint.interval=1000000 --metrics.run_dir="$dir" --metrics.log_interval=1 \
    --metrics.backends='["jsonl"]' "$@" >"$dir.out" 2>&1 || { echo "$shape $name: failed, see $dir.out" >&2; exit 1; }
  /usr/bin/python3 - "$dir/metrics.jsonl" <<'PY'
import json, statistics, sys
times = [r["train/step_time_sec"] for r in map(json.loads, open(sys.argv[1])) if "train/step_time_sec" in r]
print(f"{statistics.median(times[1:]):.3f}")
PY
}

printf "%-6s %-6s %10s %10s %12s\n" "shape" "round" "fp32 (s)" "bf16 (s)" "bf16 / fp32"
for shape in $SHAPES; do
  for round in $(seq "$ROUNDS"); do
    fp32=$(median_step "$shape" fp32 "$STEPS" --train.mixed_precision=fp32)
    bf16=$(median_step "$shape" bf16 "$STEPS" --train.mixed_precision=bf16)
    printf "%-6s %-6s %10s %10s %12s\n" "$shape" "$round" "$fp32" "$bf16" \
      "$(/usr/bin/python3 -c "print(f'{$bf16 / $fp32:.2f}x')")"
  done
  if (( EMULATED )); then
    emulated=$(median_step "$shape" emulated "$EMULATED_STEPS" --train.mixed_precision=bf16 --model.linear_backend=aten \
      --model.sdpa_backend=math)
    printf "%-6s %-6s %10s %10s %12s\n" "$shape" "emul." "$fp32" "$emulated" \
      "$(/usr/bin/python3 -c "print(f'{$emulated / $fp32:.2f}x')")"
  fi
done
