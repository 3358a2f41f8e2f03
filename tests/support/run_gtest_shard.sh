#!/usr/bin/env bash
# Runs one CTest entry: a GoogleTest binary (or one shard of it, from GTEST_TOTAL_SHARDS and
# GTEST_SHARD_INDEX). Exits as the binary does, except 77 (the entry's SKIP_RETURN_CODE) when no
# test failed but one was skipped, so CTest reports the entry as skipped and the output names the
# skipped tests. A failure always wins over a skip.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ] && grep -q '^\[  SKIPPED \] [0-9]* test' "$log"; then
  exit 77
fi
exit "$rc"
