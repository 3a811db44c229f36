#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# check-budget-docs.sh: fails when the table of CI's time budget in
# docs/arm64-platform.md differs from the budgets .ci/run and scripts/test.sh
# check against (scripts/phase-budget.sh). A test of `make check`; the
# table in the page is what `bash scripts/phase-budget.sh --table` prints.
set -eu
src=${KVMMIO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
page=$src/docs/arm64-platform.md
want=$(bash "$src/scripts/phase-budget.sh" --table)
# The page's table: the lines of the first Markdown table after the heading.
have=$(awk '/^### CI.s time budget/ { on = 1; next }
            on && /^\|/ { print; seen = 1; next }
            on && seen { exit }' "$page")
if [ "$have" != "$want" ]; then
    echo "FAIL: the budget table in docs/arm64-platform.md (\"CI's time budget\") is not scripts/phase-budget.sh's:"
    echo "--- the page"; echo "$have"
    echo "--- bash scripts/phase-budget.sh --table (paste this into the page)"; echo "$want"
    exit 1
fi
echo "PASS: docs/arm64-platform.md's budget table matches scripts/phase-budget.sh ($(echo "$want" | wc -l) lines)"
