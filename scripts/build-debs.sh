#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# kvmmio's Debian packages, built from the release tarball's tree:
#   scripts/build-debs.sh BUILD OUT [--check] [--arch ARCH]
#     BUILD    a configured build directory of this checkout (make distdir
#              runs there)
#     OUT      where the .deb, .changes and .buildinfo files go (made anew)
#     --check  what CI runs instead of make distcheck: also fail when a file
#              git tracks is missing from the tarball (tests/check-dist-files.sh),
#              compile with -Werror (and without -g: no debug packages),
#              fail on any lintian error, and run make installcheck against
#              the packages' own files (every installed header compiles on
#              its own; the examples build with pkg-config and run)
#     --arch ARCH  cross-build for the Debian architecture ARCH (e.g.
#              arm64; dpkg-buildpackage -a, without its build-dependency
#              check: the caller provides the compiler, headers and
#              libraries, as the board rehearsal's namespace does, and
#              DPKG_ADMINDIR for dpkg-shlibdeps); with --check, lintian
#              only (installcheck runs programs, which a cross build's
#              host cannot)
# The packages (debian/control): kvmmio (program, manual page, the
# kvmmio@.service template), libkvmmio3 (the shared library, named after
# its soname) and libkvmmio-dev (headers, pkg-config files, static
# library), for this host's architecture unless --arch names another. The build runs with
# DEB_BUILD_OPTIONS=nocheck: the test suite runs from the checkout (make
# check), not again inside the package build. Needs build-essential, debhelper
# and, with --check, lintian (scripts/install-deps.sh installs them).
set -euo pipefail
usage='usage: build-debs.sh BUILD OUT [--check] [--arch ARCH]'
build=${1:?$usage}
out=${2:?$usage}
shift 2
check=0 arch=''
while (($#)); do
  case $1 in
  --check) check=1; shift ;;
  --arch) arch=${2:?--arch needs a Debian architecture, e.g. arm64}; shift 2 ;;
  *) echo "build-debs: unknown argument $1 ($usage)" >&2; exit 2 ;;
  esac
done
[[ -z $arch || $arch =~ ^[a-z0-9]+$ ]] || { echo "build-debs: --arch $arch: not a Debian architecture name" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")
[ -n "$version" ] || { echo "build-debs: $build/Makefile names no PACKAGE_VERSION: is it a configured build directory?" >&2; exit 2; }
for tool in dpkg-buildpackage dh; do
  command -v $tool >/dev/null || { echo "build-debs: no $tool: apt-get install build-essential debhelper (or scripts/install-deps.sh)" >&2; exit 2; }
done
[ $check = 0 ] || command -v lintian >/dev/null || { echo "build-debs: no lintian: apt-get install lintian" >&2; exit 2; }

# The packages follow the release: debian/changelog's version is
# configure.ac's, and the library package is named after the soname
# (libkvmmio.so.KVMMIO_ABI), so a release that forgets either fails here.
changelog_version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
[ "$changelog_version" = "$version" ] ||
  { echo "build-debs: debian/changelog is at $changelog_version, configure.ac at $version: add a debian/changelog entry (dch -v $version)" >&2; exit 1; }
abi=$(sed -n 's/^KVMMIO_ABI = //p' "$build/Makefile")
grep -qx "Package: libkvmmio$abi" "$src/debian/control" ||
  { echo "build-debs: the soname is libkvmmio.so.$abi but debian/control has no package libkvmmio$abi: rename the library package (and its .install file)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
tree=$out/kvmmio-$version
# The tarball's tree, as make dist would pack it.
make -s -C "$build" distdir distdir="$tree" >/dev/null
[ $check = 0 ] || "$src/tests/check-dist-files.sh" "$src" "$tree"

jobs=$(nproc)
options="nocheck parallel=$jobs"
flags=()
if [ $check = 1 ]; then
  # dpkg-buildflags reads DEB_<FLAG>_APPEND/_STRIP: the warnings as errors,
  # as every other build CI makes; no -g (and so no -dbgsym packages):
  # it cost a third of a file's compile time at -O2 and checks nothing.
  options+=" noddebs"
  flags=(DEB_CXXFLAGS_APPEND=-Werror DEB_CFLAGS_APPEND=-Werror DEB_CXXFLAGS_STRIP=-g DEB_CFLAGS_STRIP=-g)
fi
cross=()
[[ -z $arch || $arch == "$(dpkg --print-architecture)" ]] || cross=(-a"$arch" -d)
echo "build-debs: dpkg-buildpackage -b ${cross[*]} in $tree (DEB_BUILD_OPTIONS='$options')"
(cd "$tree" && env DEB_BUILD_OPTIONS="$options" DEB_BUILD_PROFILES=nocheck "${flags[@]}" \
  dpkg-buildpackage -b -us -uc "${cross[@]}") >"$out/build.log" 2>&1 ||
  { tail -n 40 "$out/build.log"; echo "build-debs: dpkg-buildpackage failed (log: $out/build.log)" >&2; exit 1; }

debs=("$out"/*.deb)
changes=("$out"/*.changes)
if [ $check = 1 ]; then
  # Errors fail; warnings and informational tags are printed.
  lintian --fail-on error "${changes[@]}" 2>&1 | grep -v '^running with root privileges' ||
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "build-debs: lintian found errors" >&2; exit 1; }
  # The packages' files, unpacked, as an embedder's system would have them:
  # make installcheck with that as DESTDIR (the tree dh configured has the
  # packages' prefix and multiarch libdir).
  if [[ ${#cross[@]} -eq 0 ]]; then
    root=$out/root
    for deb in "${debs[@]}"; do dpkg-deb -x "$deb" "$root"; done
    make -s -C "$tree" installcheck DESTDIR="$root"
    rm -rf "$root"
  fi
fi
rm -rf "$tree"
for deb in "${debs[@]}"; do
  echo "build-debs: ${deb##*/}: $(dpkg-deb -f "$deb" Installed-Size) KiB installed, $(dpkg-deb -c "$deb" | grep -vc '/$') files"
done
