#!/usr/bin/env bash
# Several bench CSVs as one bundle (docs/design.md, "README tables"): each CSV after a line
# "# run: RUN", so that a README or NOTES table reads one of them as BUNDLE.csv#RUN and an
# experiment's rounds and variants are one file of measured/, not one file a run.
#
#   bash common/csv_bundle.sh OUT.csv RUN=FILE.csv [RUN=FILE.csv ...]
#
# RUN: letters, digits, '.', '_' and '-'. OUT is written anew; a FILE that is itself a bundle, or
# a RUN named twice, is refused (exit 2).
set -u
if [ $# -lt 2 ]; then
    echo "usage: bash common/csv_bundle.sh OUT.csv RUN=FILE.csv [RUN=FILE.csv ...]" >&2
    exit 2
fi
out=$1
shift
seen=" "
tmp=$(mktemp)
for pair in "$@"; do
    run=${pair%%=*} file=${pair#*=}
    if [ "$run" = "$pair" ] || ! [[ $run =~ ^[A-Za-z0-9._-]+$ ]]; then
        echo "csv_bundle: '$pair' is not RUN=FILE (RUN of letters, digits, '.', '_', '-')" >&2
        rm -f "$tmp"; exit 2
    fi
    if [[ $seen == *" $run "* ]]; then echo "csv_bundle: run '$run' named twice" >&2; rm -f "$tmp"; exit 2; fi
    if [ ! -f "$file" ]; then echo "csv_bundle: no file $file" >&2; rm -f "$tmp"; exit 2; fi
    if head -n 1 "$file" | grep -q '^# run: '; then
        echo "csv_bundle: $file is a bundle itself" >&2; rm -f "$tmp"; exit 2
    fi
    seen="$seen$run "
    { echo "# run: $run"; cat "$file"; [ -z "$(tail -c 1 "$file")" ] || echo; } >>"$tmp"
done
mv "$tmp" "$out"
