#!/usr/bin/env bash
# Configures and builds kforge (host, SDK, built-in plugins and tests) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${KFORGE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
