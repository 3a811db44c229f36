#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Sums GoogleTest XML reports found under the given directories and prints
# "N passed, N failed, N skipped" (each test case counted once, by outcome).
set -euo pipefail
files=$(find "$@" -name '*.xml' 2>/dev/null | sort)
if [ -z "$files" ]; then
  echo "0 passed, 0 failed, 0 skipped"
  exit 0
fi
# shellcheck disable=SC2086
awk '
  /<testcase / { open = 1; failed = 0; skipped = ($0 ~ /result="skipped"/) }
  open && /<failure/ { failed = 1 }
  open && /<skipped/ { skipped = 1 }
  open && (/<testcase .*\/>/ || /<\/testcase>/) {
    if (failed) f++; else if (skipped) s++; else p++
    open = 0
  }
  END { printf "%d passed, %d failed, %d skipped\n", p, f, s }
' $files
