#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# check-exports.sh: libkvmmio.so exports what its public headers mark
# KVMMIO_EXPORT and hides what the library keeps to itself
# (kvmmio/base/export.h; docs/embedding.md, "Versions and the ABI"). A test
# of `make check` (and so of distcheck); skips where no shared library is
# built. Also runs by hand: tests/check-exports.sh [SRCDIR [BUILDDIR]].
#
#  1. every C function of kvmmio/kvmmio.h is exported;
#  2. every public class or struct (`class KVMMIO_EXPORT Name`) whose code
#     the library holds, and every public free function, has its symbols
#     exported;
#  3. no class of the library's private headers (capi/*.h, hw/*/*.h) has a
#     symbol exported;
#  4. everything exported is in the version node of the ABI, KVMMIO_N
#     (libkvmmio.map), and the soname is libkvmmio.so.N, N being KVMMIO_ABI
#     of the build's kvmmio/version.h (configure.ac's libtool version).
# Before it trusts a clean answer on 2 and 3 it makes sure the names it
# looks for are in the library's objects (libkvmmio-core.a, where hidden
# symbols keep their names): a check that finds nothing to look at proves
# nothing.
set -eu

src=${1:-${KVMMIO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}}
build=${2:-${KVMMIO_BUILDDIR:-.}}
so=$build/.libs/libkvmmio.so
core=$build/.libs/libkvmmio-core.a
if [ ! -e "$so" ]; then
    echo "SKIP: no $so (configured --disable-shared): nothing is exported"
    exit 77
fi
[ -e "$core" ] || { echo "check-exports.sh: FAIL: $core is missing"; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Defined symbols: the shared library's exported ones, and every one of the
# library's objects, demangled.
# (nm prints each with its version, NAME@@KVMMIO_N: check 4 reads those.)
nm -D --defined-only "$so" | awk '{print $3}' >"$scratch/versioned"
sed 's/@.*//' "$scratch/versioned" | grep -v '^KVMMIO_[0-9.]*$' >"$scratch/raw"
c++filt <"$scratch/raw" >"$scratch/exported"
# Not libstdc++'s std::construct_at<T> instances, whose names spell T's
# constructor in their return type (decltype (::new ... T(...))): an
# unoptimised build (-O0, the coverage build) emits them, and they are
# libstdc++'s code, local to the library, not T's.
nm -C --defined-only "$core" 2>/dev/null | awk 'NF >= 3 && $2 ~ /^[TtWwVvBbDdRr]$/ {sub(/^[^ ]+ [^ ]+ /, ""); print}' |
    grep -v '^decltype (::new' | sort -u >"$scratch/objects"
bad=0
fail() { echo "check-exports.sh: FAIL: $*"; bad=1; }

# 1. The C API.
grep -o 'KVMMIO_EXPORT [^(]*kvmmio_[a-z0-9_]*(' "$src/include/kvmmio/kvmmio.h" |
    sed 's/.*\(kvmmio_[a-z0-9_]*\)($/\1/' | sort -u >"$scratch/c_api"
n_c=$(wc -l <"$scratch/c_api")
[ "$n_c" -gt 20 ] || fail "only $n_c C functions found in kvmmio.h: the pattern is broken"
for f in $(cat "$scratch/c_api"); do
    grep -qx "$f" "$scratch/raw" || fail "the C function $f (kvmmio.h) is not exported"
done

# has_symbols FILE NAME: FILE has a symbol of class or function NAME in a
# kvmmio namespace (its members, its vtable or typeinfo, or NAME itself).
has_symbols() {
    grep -Eq "(^|[ (<,])kvmmio::([A-Za-z0-9_]+::)*$2(::|\\(| *$)" "$1"
}

# 2. Public classes and free functions with code in the library.
sed -n 's/^\(class\|struct\) KVMMIO_EXPORT \([A-Za-z0-9_]*\).*/\2/p' \
    $(find "$src/include/kvmmio" -name '*.h' ! -name kvmmio.h) | sort -u >"$scratch/public"
sed -n 's/^KVMMIO_EXPORT [^(]*[ *&]\([a-z_][a-z0-9_]*\)(.*/\1/p' \
    $(find "$src/include/kvmmio" -name '*.h' ! -name kvmmio.h) | sort -u >>"$scratch/public"
checked=0
for name in $(sort -u "$scratch/public"); do
    has_symbols "$scratch/objects" "$name" || continue  # all inline: nothing to export
    checked=$((checked + 1))
    has_symbols "$scratch/exported" "$name" || fail "the public $name has code in the library but none of it is exported"
done
[ "$checked" -gt 40 ] || fail "only $checked public classes and functions have code in $core: the pattern is broken"

# 3. Private classes.
# (`struct MmioTransport::QueueState {` defines a member, not a class: skipped.)
sed -n 's/^\(class\|struct\) \([A-Za-z0-9_]*\)\( final\)\{0,1\} *\(: \|{\).*/\2/p' \
    $(find "$src/capi" "$src/hw" -name '*.h') | sort -u >"$scratch/private"
present=0
for name in $(cat "$scratch/private"); do
    has_symbols "$scratch/objects" "$name" && present=$((present + 1))
    if has_symbols "$scratch/exported" "$name"; then
        fail "the private $name (capi/ or hw/ header) has symbols exported:"
        grep -E "kvmmio::([A-Za-z0-9_]+::)*$name(::|\\(| *$)" "$scratch/exported" | head -3 | sed 's/^/    /'
    fi
done
[ "$present" -ge 3 ] || fail "only $present private classes have symbols in $core: the check would see nothing"

# 4. The version node and the soname.
abi=$(sed -n 's/^#define KVMMIO_ABI \([0-9][0-9]*\)$/\1/p' "$build/include/kvmmio/version.h" 2>/dev/null || true)
if [ -z "$abi" ]; then
    fail "no KVMMIO_ABI in $build/include/kvmmio/version.h (configure writes it)"
else
    node=KVMMIO_$abi
    soname=$(objdump -p "$so" | awk '$1 == "SONAME" {print $2}')
    [ "$soname" = "libkvmmio.so.$abi" ] || fail "the soname is $soname, not libkvmmio.so.$abi (KVMMIO_ABI)"
    # The node's own definition is the one line without an @.
    grep -qx "$node" "$scratch/versioned" || fail "libkvmmio.so defines no version node $node: libkvmmio.map's must be KVMMIO_ABI's"
    others=$(grep -v "@@$node\$" "$scratch/versioned" | grep -vx "$node" || true)
    [ -z "$others" ] || fail "exported outside the node $node: $(echo "$others" | head -3 | tr '\n' ' ')"
fi

[ "$bad" = 0 ] || exit 1
echo "check-exports.sh: $(wc -l <"$scratch/raw") symbols exported in $node ($soname): the $n_c C functions, the $checked public classes and functions with code; none of the $present private classes with code"
