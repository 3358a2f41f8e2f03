#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install, build, fetch and tokenise Moby-Dick, then
# train the debug model (configs/train/debug.toml). Rerunning resumes from the last checkpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
bash scripts/fetch_data.sh
exec build/bin/kforge run configs/train/debug.toml "$@"
