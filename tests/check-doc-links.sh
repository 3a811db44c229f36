#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# check-doc-links.sh: fails when README.md or a page of docs/ points to a
# file that is not there: a relative Markdown link, or a docs/NAME.md named
# in the README's text. A test of `make check`; under `make distcheck` it
# runs in the unpacked tarball, so a page left out of the distribution
# fails the release. Also runs by hand: tests/check-doc-links.sh [SRCDIR].
#
# Before it trusts a clean answer, the check plants a missing page in a
# scratch tree and makes sure it is caught.
set -eu

# targets FILE: the relative link targets of one Markdown file, one a line,
# without #anchors; external links (scheme:) and pure anchors left out.
targets() {
    {
        grep -o '](\([^)]*\))' "$1" | sed 's/^](\(.*\))$/\1/'
        case ${1##*/} in
        README.md) grep -o 'docs/[A-Za-z0-9_.-]*\.\(md\|png\|1\)' "$1" ;;
        esac
    } | sed 's/#.*//; s/ .*//' | grep -v '^[a-z][a-z+.-]*:' | grep -v '^$' | sort -u || true
}

# check_tree ROOT: one line per missing target; fails if any.
check_tree() {
    (
        cd "$1"
        bad=0
        for f in README.md docs/*.md; do
            [ -f "$f" ] || { echo "$f: missing"; bad=1; continue; }
            dir=$(dirname "$f")
            for t in $(targets "$f"); do
                case $t in
                docs/*) [ "$f" = README.md ] && p=$t || p=$dir/$t ;;
                *) p=$dir/$t ;;
                esac
                [ -e "$p" ] || { echo "$f links $t, which is not in the tree (EXTRA_DIST? dist_kvmmiodocs_DATA?)"; bad=1; }
            done
        done
        exit $bad
    )
}

src=${1:-${KVMMIO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}}

# Self-test: a README linking a page that is not there must fail.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/docs"
printf 'See [usage](docs/usage.md) and docs/planted.md.\n' >"$scratch/README.md"
printf '# usage\n[back](../README.md)\n' >"$scratch/docs/usage.md"
if check_tree "$scratch" >"$scratch/out" 2>&1 || ! grep -q planted "$scratch/out"; then
    echo "check-doc-links: the planted missing page was not caught; the check is broken"
    exit 1
fi

if ! check_tree "$src"; then
    echo "check-doc-links: FAIL: the documentation points to files that are not there"
    exit 1
fi
echo "check-doc-links: README.md and docs/*.md: every linked file is present"
