#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# check-dist-files.sh SRCDIR DISTDIR: fails when a file the repository tracks
# is missing from the release tarball's tree. make distcheck runs it on its
# distdir (Makefile.am's distcheck-hook) before it builds the tarball, so a
# test, script or page added to git but not to EXTRA_DIST or a _SOURCES list
# fails there, by name, instead of in someone's build of the release.
# Files only a checkout needs (CI's entry point, .gitignore) are listed below.
# Where SRCDIR is not a git checkout (distcheck run from a tarball) there is
# nothing to compare with: it says so and passes.
set -eu
src=${1:?usage: check-dist-files.sh SRCDIR DISTDIR}
dist=${2:?usage: check-dist-files.sh SRCDIR DISTDIR}

checkout_only='^(\.ci/|\.gitignore$)'

if ! command -v git >/dev/null || ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    echo "check-dist-files: $src is not a git checkout: nothing to compare the tarball with"
    exit 0
fi

tracked=$(git -C "$src" ls-files | grep -Ev "$checkout_only")
missing=$(echo "$tracked" | while IFS= read -r f; do [ -e "$dist/$f" ] || echo "$f"; done)
if [ -n "$missing" ]; then
    echo "check-dist-files: tracked by git but not in the tarball (add them to EXTRA_DIST or a _SOURCES list in Makefile.am):"
    echo "$missing" | sed 's/^/  /'
    exit 1
fi
echo "check-dist-files: every tracked file is in the tarball ($(echo "$tracked" | wc -l) files)"
