#!/usr/bin/env bash
# CTest entry skip_gate: run_gtest_shard.sh on skip_gate_fixture (its one argument) passes an entry whose skipped tests
# are all on the allow-list (printing their reasons), fails one with a skip off the list (naming it and the list),
# and lets a failure win over an allowed skip. The script runs from a copy next to an allow-list of each case's own.
set -uo pipefail
fixture=${1:?usage: skip_gate_test.sh <skip_gate_fixture>}
runner=$(dirname "$0")/run_gtest_shard.sh
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/support"
cp "$runner" "$tree/support/"
failures=0

# expect <case> <allow-list text> <gtest filter> <exit status> <text the output must hold>
expect() {
  printf '%s\n' "$2" >"$tree/skip_allowlist.txt"
  local out status
  out=$(bash "$tree/support/run_gtest_shard.sh" "$fixture" --gtest_filter="$3" 2>&1)
  status=$?
  if [[ $status -ne $4 || $out != *"$5"* ]]; then
    echo "FAIL $1: exit $status (expected $4), output lacks '$5' or differs:"
    echo "$out" | tail -n 5
    failures=$((failures + 1))
  else
    echo "ok $1"
  fi
}

header="# allow-list under test"
expect "an unlisted skip fails, naming the test and the list" "$header" "SkipGate.Skips:SkipGate.Passes" 1 \
  "skipped, and not on the skip allow-list: SkipGate.Skips; fix the test, or add it to $tree/skip_allowlist.txt"
expect "a listed skip passes with its reason" "$header
SkipGate.Skips no such device here" "SkipGate.Skips:SkipGate.Passes" 0 \
  "SkipGate.Skips skipped, allowed: no such device here"
suite="SkipGate.* a whole suite's reason"
expect "a pattern lists a suite" "$suite" "SkipGate.Skips" 0 "allowed: a whole suite's reason"
expect "another test's entry does not list it" "SkipGate.Passes not this one" "SkipGate.Skips" 1 \
  "not on the skip allow-list: SkipGate.Skips"
expect "a failure wins over an allowed skip" "$suite" "SkipGate.*" 1 "[  FAILED  ] SkipGate.Fails"
expect "no skip, no list needed" "$header" "SkipGate.Passes" 0 "[  PASSED  ] 1 test"
[[ $failures -eq 0 ]]
