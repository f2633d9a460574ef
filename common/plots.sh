#!/usr/bin/env bash
# The README charts (make plots): for each chapter, the measured/*.svg that its README shows or
# links, each drawn by build/bin/from_csv (--plot-from, no GPU and no chapter needed) from the CSV
# of the same name beside it; no other chart. The list is read from the README itself each time,
# so a chart that is added, moved or dropped there is drawn, moved or dropped here without a
# second list to keep in step. measured/ also holds CSVs that no chart shows (other runs, other
# tables: some with no "kernel" column at all, such as 08's PyTorch timings); they are not drawn.
#   bash common/plots.sh [--out DIR] [--list] CHAPTER...
#   --out DIR  write DIR/NN_topic/measured/NAME.svg instead of over the committed chart (the test
#              in tests/run.sh draws there and compares with the committed files)
#   --list     print the charts' paths (NN_topic/measured/NAME.svg), one a line; draw nothing
# FROM_CSV names the drawing program (default build/bin/from_csv: make build/bin/from_csv).
# Prints each chart written. Exit 0, or 2 when a README names a chart without its CSV or the
# program is missing, or 1 when a chart could not be drawn.
set -u
FROM_CSV=${FROM_CSV:-${BUILD:-build}/bin/from_csv}
out="" list=0
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --list) list=1; shift ;;
    -*) echo "plots: unknown option $1 (bash common/plots.sh [--out DIR] [--list] CHAPTER...)" >&2; exit 2 ;;
    *) break ;;
    esac
done

# The charts chapter $1's README names: every path that reads measured/....svg relative to the
# chapter (a path into another chapter's measured/ is that chapter's own business).
charts_of() {
    [ -f "$1/README.md" ] || return 0
    grep -oE '[A-Za-z0-9_./-]*measured/[A-Za-z0-9_./-]+\.svg' "$1/README.md" |
        sed 's|^\./||' | grep '^measured/' | sort -u | sed "s|^|$1/|"
}

rc=0
for ch in "$@"; do
    ch=${ch%/}
    for svg in $(charts_of "$ch"); do
        if [ $list = 1 ]; then echo "$svg"; continue; fi
        csv=${svg%.svg}.csv
        if [ ! -f "$csv" ]; then
            echo "plots: $ch/README.md shows $svg, but $csv is not there" >&2
            rc=2; continue
        fi
        if [ ! -x "$FROM_CSV" ]; then echo "plots: $FROM_CSV not built (make $FROM_CSV)" >&2; rc=2; continue; fi
        dest=${out:+$out/}$svg
        mkdir -p "$(dirname "$dest")"
        if "$FROM_CSV" --plot-from "$csv" --plot "$dest"; then echo "$dest"
        else [ $rc != 0 ] || rc=1; fi
    done
done
exit $rc
