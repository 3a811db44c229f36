#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Sums GoogleTest JSON reports (--gtest_output=json:..., and the platform
# scenarios' files in the same shape, tests/arm64/lib.sh) found under the
# given directories and prints "N passed, N failed, N skipped": each test
# case counted once, by outcome (a disabled case counts as skipped).
#   summarize-gtest.sh --failures DIR...: instead, one line per failed case,
#   "FAILED Suite.Case (file.json): " and the first eight lines of its
#   first failure joined (at most 600 characters): the place, the
#   comparison, both values and the test's own message (an ASSERT_EQ's
#   "<< why"), so a CI log that keeps only part of the output still names
#   it and its cause (the L1's result files are gone with CI's root).
set -euo pipefail
failures=0
if [ "${1:-}" = --failures ]; then failures=1; shift; fi
mapfile -t files < <(find "$@" -name '*.json' 2>/dev/null | sort)
if ((${#files[@]} == 0)); then
  [ $failures = 1 ] || echo "0 passed, 0 failed, 0 skipped"
  exit 0
fi
if [ $failures = 1 ]; then
  for f in "${files[@]}"; do
    jq -r --arg file "${f##*/}" '.testsuites[]? | .testsuite[]?
        | select((.failures // []) != [])
        | "FAILED \(.classname).\(.name) (\($file)): "
          + (.failures[0].failure | split("\n")[0:8] | map(select(. != "")) | join(" | ") | .[0:600])' "$f"
  done
  exit 0
fi
jq -rs '[.[] | .testsuites[]? | .testsuite[]?
         | if (.failures // []) != [] then "failed"
           elif .result == "SKIPPED" or .status == "NOTRUN" then "skipped"
           else "passed" end] as $o
        | "\($o | map(select(. == "passed")) | length) passed, \($o | map(select(. == "failed")) | length) failed, \($o | map(select(. == "skipped")) | length) skipped"' \
  "${files[@]}"
