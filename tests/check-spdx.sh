#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# check-spdx.sh: fails when a source or script file lacks its SPDX licence
# line (LICENSE: BSD-2-Clause) in its first three lines. A test of `make
# check`; also runs by hand: tests/check-spdx.sh [SRCDIR]. Generated files
# (configure, Makefile.in, build-aux/, m4/) are not the project's and are
# not looked at.
set -eu

tag='SPDX-License-Identifier: BSD-2-Clause'

# files ROOT: the project's source and script files under ROOT.
files() {
    (
        cd "$1"
        for d in base bench capi examples fuzz hw include kvm scripts tests vmm; do
            [ -d "$d" ] || continue
            find "$d" -type f \( -name '*.cc' -o -name '*.h' -o -name '*.h.in' -o -name '*.S' -o -name '*.inc' \
                -o -name '*.sh' -o -name '*.test' -o -name '*.py' -o -name '*.am' \) -print
        done
        # scripts and hooks without an extension: every executable file there
        find scripts tests/arm64/l2-hooks -type f -perm -u+x ! -name '*.*' -print 2>/dev/null || true
        for f in configure.ac Makefile.am kvmmio.pc.in kvmmio-c.pc.in libkvmmio.map docs/kvmmio.1 .ci/run; do
            [ -f "$f" ] && echo "$f"
        done
    ) | sort -u
}

# check_tree ROOT: one line per file without the tag; fails if any.
check_tree() {
    bad=0
    for f in $(files "$1"); do
        head -n 3 "$1/$f" | grep -q "$tag" || { echo "$f: no '$tag' in its first 3 lines"; bad=1; }
    done
    return $bad
}

src=${1:-${KVMMIO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}}

# Self-test: a file without the line must be caught.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/base"
printf '// %s\nint a;\n' "$tag" >"$scratch/base/good.cc"
printf '// no licence line\nint b;\n' >"$scratch/base/planted.cc"
if check_tree "$scratch" >"$scratch/out" 2>&1 || ! grep -q planted "$scratch/out" ||
    grep -q good "$scratch/out"; then
    echo "check-spdx: the planted file without a licence line was not caught; the check is broken"
    exit 1
fi

if ! check_tree "$src"; then
    echo "check-spdx: FAIL: add '$tag' to the files above (see LICENSE)"
    exit 1
fi
echo "check-spdx: $(files "$src" | wc -l) source and script files carry the SPDX line"
