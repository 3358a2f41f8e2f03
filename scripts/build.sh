#!/usr/bin/env bash
# Configures and builds kforge (host, SDK, built-in plugins and tests) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${KFORGE_BUILD_DIR:-build}
# Ninja for a new build tree: it compiles a target's sources while the libraries they link are still being built,
# where Make waits for them, so both cores stay busy. A tree configured before keeps its generator.
generator=()
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
