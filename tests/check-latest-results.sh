#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# docs/benchmarks.md's "Latest results" and docs/results/latest/report.txt
# are what the kept run's records make (scripts/latest-results.sh --check):
# a change to the report that is not carried into the docs fails here.
KVMMIO_BUILD=${KVMMIO_BUILDDIR:?} exec bash "${KVMMIO_SRCDIR:?}/scripts/latest-results.sh" --check
