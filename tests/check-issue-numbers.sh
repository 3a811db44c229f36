#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# check-issue-numbers.sh: fails when the tree cites an issue by number
# ("issue" and "#" and digits). The tree speaks of the product: what a
# change was for belongs in its commit message, and an issue number means
# nothing to a reader of a release tarball. A test of `make check`; also
# runs by hand: tests/check-issue-numbers.sh [SRCDIR].
set -eu
root=${1:-${KVMMIO_SRCDIR:-$(dirname "$0")/..}}
cd "$root"
# The pattern is spelled in two pieces so that this file does not match it.
word='[Ii]ssue'
pattern="$word #[0-9]"
found=$(
    for d in README.md configure.ac Makefile.am .ci base bench capi docs examples fuzz hw include kvm \
        scripts tests vmm; do
        [ -e "$d" ] || continue
        # -I: text files only (the fuzz corpora are binary).
        grep -rnIE "$pattern" "$d" 2>/dev/null || true
    done
)
if [ -n "$found" ]; then
    echo "check-issue-numbers: the tree cites issues by number; say what is meant instead:" >&2
    echo "$found" >&2
    exit 1
fi
echo "check-issue-numbers: no issue numbers in the tree"
