#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/latest-results.sh: docs/benchmarks.md's "Latest results", made from
# the run kept in docs/results/latest/ and nothing else, so that what the
# section says is what that run's records say:
#   RUN                 the run's date, command, commit and machine (text)
#   raw/NAME.jsonl      its raw records (bench/net-compare.sh's, and the
#                       micro records with the kvm-bench JSON files they name)
#   startup.txt         bench/startup.sh's tables of the same run
#   report.txt          bench/net_report's report of raw/*.jsonl (made here)
# The section, between its two marker lines in docs/benchmarks.md, is RUN,
# the report's claims and failed runs, and the start-up tables.
#
#   scripts/latest-results.sh [--check]
#     remakes report.txt and the section (--check: changes nothing, and
#     exits 1 naming what is not what the records make)
#   scripts/latest-results.sh --keep RESULTS_DIR --run-text FILE
#     replaces the kept run with the one scripts/main.sh left in
#     RESULTS_DIR (its raw.jsonl files and the files they name, its
#     startup.txt), RUN from FILE, then remakes as above
# Needs bench/net_report: $KVMMIO_BUILD (default build/) or PATH.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
kept=$src/docs/results/latest doc=$src/docs/benchmarks.md
begin='<!-- latest-results: made by scripts/latest-results.sh from docs/results/latest; edit those, not this -->'
end='<!-- latest-results: end -->'
check=0 keep='' run_text=''
while (($#)); do
  case $1 in
    --check) check=1 ;;
    --keep) keep=${2:?--keep needs a RESULTS_DIR}; shift ;;
    --run-text) run_text=${2:?--run-text needs a FILE}; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "latest-results.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
report=${KVMMIO_BUILD:-$src/build}/bench/net_report
[ -x "$report" ] || report=$(command -v net_report) ||
  { echo "latest-results.sh: no bench/net_report: build it (make bench) or set KVMMIO_BUILD" >&2; exit 2; }

if [ -n "$keep" ]; then
  if [ -z "$run_text" ] || [ ! -s "$run_text" ]; then
    echo "latest-results.sh: --keep needs --run-text FILE (the run's date, command, commit, machine)" >&2
    exit 2
  fi
  raws=$(find "$keep" -name raw.jsonl -size +0 | sort)
  [ -n "$raws" ] || { echo "latest-results.sh: no raw.jsonl under $keep" >&2; exit 2; }
  startup=$(find "$keep" -path '*/startup/startup.txt' | head -n 1)
  rm -rf "$kept" && mkdir -p "$kept/raw"
  for r in $raws; do
    # One name per raw file, from its place in the results directory
    # (arm64-gicv3/net-compare/raw.jsonl: arm64-gicv3-net-compare.jsonl);
    # the micro records' files beside it, renamed the same way.
    name=$(realpath --relative-to="$keep" "$(dirname "$r")" | tr / -)
    for f in $(jq -r 'select(.kind == "micro") | .file' "$r"); do
      cp "$(dirname "$r")/$f" "$kept/raw/$name-$f"
    done
    jq -c --arg n "$name-" 'if .kind == "micro" then .file = $n + .file else . end' "$r" >"$kept/raw/$name.jsonl"
  done
  [ -z "$startup" ] || cp "$startup" "$kept/startup.txt"
  cp "$run_text" "$kept/RUN"
fi
if [ ! -s "$kept/RUN" ] || ! compgen -G "$kept/raw/*.jsonl" >/dev/null; then
  echo "latest-results.sh: no kept run in $kept (--keep one)" >&2
  exit 2
fi
if [ "$(grep -cxF "$begin" "$doc")" != 1 ] || [ "$(grep -cxF "$end" "$doc")" != 1 ]; then
  echo "latest-results.sh: $doc needs its two marker lines once each" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# From inside the kept directory, so that the report names the records by
# their paths there, the same on every machine.
args=()
for r in "$kept"/raw/*.jsonl; do args+=(--raw "raw/${r##*/}"); done
(cd "$kept" && "$report" "${args[@]}" --out "$tmp/report" --title "Latest results" >/dev/null)
{
  echo "$begin"
  echo
  cat "$kept/RUN"
  echo
  echo "The claims and the failed runs, from its report"
  echo "([results/latest/report.txt](results/latest/report.txt), all of it):"
  echo
  sed -n '/^kvmmio.s claims in this run/,$p' "$tmp/report/report.txt" | sed 's/^/    /; s/^    $//'
  if [ -s "$kept/startup.txt" ]; then
    echo
    echo "Start-up, the same run (bench/startup.sh):"
    echo
    sed 's/^/    /' "$kept/startup.txt"
  fi
  echo
  echo "$end"
} >"$tmp/section"
# The document with the section between the markers replaced.
awk -v b="$begin" -v e="$end" -v f="$tmp/section" '
  $0 == b { while ((getline l < f) > 0) print l; skip = 1; found++; next }
  $0 == e { skip = 0; next }
  !skip' "$doc" >"$tmp/doc"

if ((check)); then
  status=0
  cmp -s "$tmp/report/report.txt" "$kept/report.txt" ||
    { echo "latest-results.sh: docs/results/latest/report.txt is not what net_report makes of the kept records: run scripts/latest-results.sh"; status=1; }
  cmp -s "$tmp/doc" "$doc" ||
    { echo "latest-results.sh: docs/benchmarks.md's \"Latest results\" is not what the kept run makes: run scripts/latest-results.sh"; status=1; }
  exit $status
fi
cp "$tmp/report/report.txt" "$kept/report.txt"
cp "$tmp/doc" "$doc"
echo "latest-results.sh: remade docs/results/latest/report.txt and docs/benchmarks.md's \"Latest results\""
