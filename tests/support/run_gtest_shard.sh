#!/usr/bin/env bash
# Runs one CTest entry: a GoogleTest binary (or one shard of it, from GTEST_TOTAL_SHARDS and
# GTEST_SHARD_INDEX). Exits as the binary does; when no test failed but some skipped, 0 if each skipped test is on
# tests/skip_allowlist.txt (its reason printed), else 1 naming the others. A failure always wins over a skip.
set -uo pipefail
allowlist=$(dirname "$0")/../skip_allowlist.txt
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || exit "$rc"
# The summary lists each skipped test as "[  SKIPPED ] Suite.Name" (the run's own lines add " (N ms)").
mapfile -t skipped < <(sed -n 's/^\[  SKIPPED \] \([^ ]*\)$/\1/p' "$log" | sort -u)
unlisted=()
for name in "${skipped[@]}"; do
  reason=
  while read -r pattern why; do
    [[ -z $pattern || $pattern == \#* ]] && continue
    # shellcheck disable=SC2053  # the pattern is a glob on purpose
    if [[ $name == $pattern ]]; then reason=$why; break; fi
  done <"$allowlist"
  if [ -n "$reason" ]; then
    echo "run_gtest_shard: $name skipped, allowed: $reason"
  else
    unlisted+=("$name")
  fi
done
if [ ${#unlisted[@]} -gt 0 ]; then
  echo "run_gtest_shard: skipped, and not on the skip allow-list: ${unlisted[*]}; fix the test, or add it to" \
    "$(realpath "$allowlist") with the reason it cannot run here" >&2
  exit 1
fi
exit 0
