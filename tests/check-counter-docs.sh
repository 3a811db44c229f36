#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# check-counter-docs.sh: fails when docs/usage.md's counter tables differ
# from the counter tables in the code (vmm/cli/counter_docs.h). A test of
# `make check`; `make counter-docs` brings the document up to date.
set -eu
src=${KVMMIO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${KVMMIO_BUILDDIR:-.}
exec "$build/vmm/counter_docs" --check "$src/docs/usage.md"
