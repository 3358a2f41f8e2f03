#!/usr/bin/env bash
# Builds and runs the tests under a sanitizer, each in its own build dir:
#   scripts/sanitize.sh asan [ctest args...]  AddressSanitizer + UBSan, every test (build-asan/)
#   scripts/sanitize.sh tsan [ctest args...]  ThreadSanitizer, the launcher and async-checkpoint tests (build-tsan/;
#                                             KFORGE_TSAN_FILTER: their GoogleTest filter)
# LibTorch, Gloo and OpenBLAS are not instrumented: leak checking is off and scripts/sanitizers/*.supp
# silence findings inside them only. Extra arguments go to ctest (e.g. -R test_config). Env:
# KFORGE_SANITIZE_JOBS (build and ctest parallelism, default nproc), CXX (the compiler at the first configure),
# KFORGE_SANITIZE_TARGETS (space-separated targets to build instead: a subset, with ctest args that pick its tests;
# its test binaries then depend on no plugin, so it names the plugins its tests load), KFORGE_SANITIZE_OPT (the
# optimisation level, default -O1; -O0 compiles in about half the time, for a subset whose tests run little kforge
# code). A new build dir uses Ninja.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/sanitize.sh asan|tsan [ctest args...]}
shift
jobs=${KFORGE_SANITIZE_JOBS:-$(nproc)}
supp=$PWD/scripts/sanitizers
export CCACHE_DISABLE=1  # sanitizer objects would only evict the main build's cache

case "$kind" in
  asan)
    flags="-fsanitize=address,undefined -fno-omit-frame-pointer"
    targets=(all)
    ctest_args=()
    # verify_asan_link_order=0: the fault suite LD_PRELOADs its I/O shim, which then precedes the ASan runtime.
    export ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0:suppressions=$supp/asan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp:print_suppressions=0"
    ;;
  tsan)
    flags="-fsanitize=thread"
    # The host's own threads: the launcher (kforge launch and its ranks) and the asynchronous checkpoint writer.
    targets=(kforge test_distributed test_train test_cli)
    ctest_args=(-R "^test_(distributed|train|cli)\\.")
    export GTEST_FILTER=${KFORGE_TSAN_FILTER:-Launch.*:LaunchNan.*:LaunchDurability.*:StartUpSignal.*:AsyncCheckpoint.*}
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp:print_suppressions=0"
    ;;
  *)
    echo "sanitize.sh: unknown sanitizer '$kind' (use asan or tsan)" >&2
    exit 2
    ;;
esac

every_plugin=ON  # each test binary depends on every built-in plugin
if [[ -n ${KFORGE_SANITIZE_TARGETS:-} ]]; then
  read -r -a targets <<<"$KFORGE_SANITIZE_TARGETS"
  every_plugin=OFF
fi
# A new build dir uses Ninja, which builds a target's objects while the libraries it links are still building.
if command -v ninja >/dev/null; then export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}; fi
build_dir=build-$kind
start=$(date +%s)
# -g1 (and -O1 by default): line tables for the stack traces at a fraction of the compile time of -O2 -g.
# The flags go in CMAKE_CXX_FLAGS only, which every link line starts with: a target can then drop them
# (the SentencePiece shim, loaded uninstrumented into its own namespace), which the *_LINKER_FLAGS,
# placed after a target's own options, would undo.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${KFORGE_SANITIZE_OPT:--O1} -g1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS="$flags" -UCMAKE_EXE_LINKER_FLAGS -UCMAKE_SHARED_LINKER_FLAGS -UCMAKE_MODULE_LINKER_FLAGS \
  -DKFORGE_TESTS_DEPEND_ON_PLUGINS=$every_plugin >/dev/null
# One build of every known target, so independent targets compile side by side (help lists "... name" in a Make
# tree, "name: kind" in a Ninja one).
listed=$(cmake --build "$build_dir" --target help)
known=()
for target in "${targets[@]}"; do
  if [[ $target == all ]] || grep -Eq -- "^(\.\.\. )?$target(:|\$)" <<<"$listed"; then
    known+=("$target")
  else
    echo "sanitize.sh: no target $target in this tree, skipped" >&2
  fi
done
if [[ ${#known[@]} -eq 0 ]]; then
  echo "sanitize.sh: none of the targets '${targets[*]}' is in this tree (cmake --build $build_dir --target help)" >&2
  exit 2
fi
cmake --build "$build_dir" -j "$jobs" --target "${known[@]}"
built=$(date +%s)
echo "sanitize.sh: $kind build took $((built - start)) s"
status=0
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" "${ctest_args[@]}" "$@" || status=$?
echo "sanitize.sh: $kind tests took $(($(date +%s) - built)) s (ctest exit $status)"
exit $status
