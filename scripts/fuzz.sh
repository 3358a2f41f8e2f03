#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, KFORGE_FUZZ=ON) in build-fuzz/ and runs each on its corpus:
#   scripts/fuzz.sh [--smoke | --seconds N | --runs N] [target...]
# --smoke: 5 s per target (CI); --seconds N: N s per target (default 60); --runs N: N executions per target.
# Targets default to all (config npy_header safetensors checkpoint_metadata tokenizer_model plugin_info
# listing_cache hf_tokenizer_json tiktoken_file hf_config csv image_manifest video_manifest run_record
# arrow_stream). Each first replays fuzz/regressions/<target>/ (inputs that once crashed), then fuzzes with
# fuzz/corpus/<target>/ as seeds; new inputs go to build-fuzz/corpus/<target>/, crashes to
# build-fuzz/artifacts/<target>/. Exits non-zero when any target crashed (its log says which input).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time=60)
while [[ $# -gt 0 && $1 == --* ]]; do
  case "$1" in
    --smoke) limit=(-max_total_time=5); shift ;;
    --seconds) limit=(-max_total_time="${2:?--seconds needs a number}"); shift 2 ;;
    --runs) limit=(-runs="${2:?--runs needs a number}"); shift 2 ;;
    *) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(config npy_header safetensors checkpoint_metadata tokenizer_model plugin_info listing_cache
    hf_tokenizer_json tiktoken_file hf_config csv image_manifest video_manifest run_record arrow_stream)
fi
build_dir=build-fuzz
export CCACHE_DISABLE=1  # instrumented objects would only evict the main build's cache
# A new build dir uses Ninja, which builds a target's objects while the libraries it links are still building.
if command -v ninja >/dev/null; then export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}; fi

start=$(date +%s)
cmake -S . -B "$build_dir" -DCMAKE_CXX_COMPILER="${CXX:-clang++}" -DKFORGE_FUZZ=ON -DKFORGE_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
echo "fuzz.sh: build took $(($(date +%s) - start)) s"

# LibTorch and SentencePiece are not instrumented and leak by design; a slow input over 30 s is a finding.
export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
failed=()
for target in "${targets[@]}"; do
  binary=$build_dir/fuzz/fuzz_$target
  regressions=(fuzz/regressions/"$target"/*)
  if [[ -e ${regressions[0]} ]] &&
    ! "$binary" -rss_limit_mb=4096 "${regressions[@]}" >"$build_dir/fuzz/$target.regressions.log" 2>&1; then
    echo "fuzz.sh: $target fails on a saved regression input; see $build_dir/fuzz/$target.regressions.log" >&2
    failed+=("$target")
    continue
  fi
  mkdir -p "$build_dir/corpus/$target" "$build_dir/artifacts/$target"
  log=$build_dir/fuzz/$target.log
  if ! "$binary" "${limit[@]}" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build_dir/artifacts/$target/" "$build_dir/corpus/$target" "fuzz/corpus/$target" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz.sh: $target crashed; the input is in $build_dir/artifacts/$target/, the log in $log" >&2
    failed+=("$target")
    continue
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  echo "fuzz.sh: $target: $runs executions ($speed/s), no crash"
done
echo "fuzz.sh: done in $(($(date +%s) - start)) s${failed[*]:+; failed: ${failed[*]}}"
[[ ${#failed[@]} -eq 0 ]]
