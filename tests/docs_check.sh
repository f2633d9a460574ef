#!/usr/bin/env bash
# The repository's documents, checked without a GPU (make test runs this; it runs alone too):
#   1. every relative link of every tracked Markdown file resolves: the file or folder exists,
#      and a #fragment into a Markdown file names one of its headings (GitHub's anchors);
#   2. no README table typed by hand holds a measured number (those are printed from CSVs);
#   3. measured/ holds evidence, not an archive: at most MEASURED_MAX files under all measured/
#      folders together (their README.md indexes included), and every one but the indexes cited
#      by a lesson or a page of notes (a README.md or NOTES.md outside measured/, or a page of
#      docs/) by its path or its folder's, in a link, a table marker or the text.
#
#   bash tests/docs_check.sh [--max N] [FILE.md ...]
#   bash tests/docs_check.sh --tables FILE.md ...
#
# Prints PASS or FAIL lines (tests/run.sh counts them); exit 1 when one fails. Given files, only
# their links are checked, or with --tables only their tables (the negative tests of run.sh).
set -u
cd "$(dirname "$0")/.."
MEASURED_MAX=150
if [ "${1:-}" = --max ]; then MEASURED_MAX=$2; shift 2; fi
tables_only=0
if [ "${1:-}" = --tables ]; then tables_only=1; shift; fi
status=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; status=1; }

# The files of the tree as it stands: tracked and not deleted, or new and not ignored (a fresh
# clone: the tracked files); a tree outside git: every file but build/.
if git ls-files --error-unmatch Makefile >/dev/null 2>&1; then
    tracked() { git ls-files --cached --others --exclude-standard "$@" | sort -u |
                while IFS= read -r f; do [ -e "$f" ] && echo "$f"; done; }
else # (a copy without git: every file but build/, that matches a pattern as git's pathspecs do)
    tracked() {
        local f p
        find . -path ./build -prune -o -type f -print | sed 's|^\./||' | sort | while IFS= read -r f; do
            [ $# = 0 ] && { echo "$f"; continue; }
            for p in "$@"; do
                # shellcheck disable=SC2053
                if [[ $f == $p ]]; then echo "$f"; break; fi
            done
        done
    }
fi

# ---- 1. links -------------------------------------------------------------------------------
# Links are [text](target) and <img src="target">, outside fenced code and `code spans`. A target
# with a scheme (https:, mailto:) is not checked; a target alone "#x" is a heading of the file.
# Anchors are GitHub's (common/md_anchors.awk).
anchors_of() { # file.md: one anchor a line
    awk -f common/md_anchors.awk "$1" | cut -f4
}
links_of() { # file.md: one target a line, as "LINE<TAB>TARGET"
    awk '/^[ \t]*```/ { fence = !fence; next }
         fence { next }
         {
             line = $0
             gsub(/``[^`]*``/, "", line); gsub(/`[^`]*`/, "", line)
             while (match(line, /\]\([^) \t]+/)) {
                 print NR "\t" substr(line, RSTART + 2, RLENGTH - 2)
                 line = substr(line, RSTART + RLENGTH)
             }
             line = $0
             while (match(line, /<img[^>]*src="[^"]+"/)) {
                 t = substr(line, RSTART, RLENGTH); sub(/.*src="/, "", t); sub(/"$/, "", t)
                 print NR "\t" t
                 line = substr(line, RSTART + RLENGTH)
             }
         }' "$1"
}
# normpath a/./b/../c -> a/c, in bash (a process a link would cost seconds over the tree)
normpath() {
    local IFS=/ part
    local -a out=()
    for part in $1; do
        case $part in
        "" | .) ;;
        ..) if [ ${#out[@]} -gt 0 ] && [ "${out[-1]}" != .. ]; then unset 'out[-1]'; else out+=(..); fi ;;
        *) out+=("$part") ;;
        esac
    done
    echo "${1%%[!/]*}${out[*]}"
}
declare -A ANCHORS=()
anchor_ok() { # file.md anchor
    local f=$1 a=$2
    if [ -z "${ANCHORS[$f]+x}" ]; then ANCHORS[$f]=" $(anchors_of "$f" | tr '\n' ' ')"; fi
    [[ ${ANCHORS[$f]} == *" $a "* ]]
}
if [ $# -gt 0 ]; then mds=("$@"); else mapfile -t mds < <(tracked '*.md'); fi
[ $tables_only = 1 ] && mds=()
nlinks=0
for md in "${mds[@]}"; do
    [ -f "$md" ] || continue
    dir=$(dirname "$md")
    bad=""
    while IFS=$'\t' read -r line target; do
        [ -n "$target" ] || continue
        case $target in *://* | mailto:* | data:*) continue ;; esac
        nlinks=$((nlinks + 1))
        path=${target%%#*}
        frag=""
        [[ $target == *#* ]] && frag=${target#*#}
        if [ -z "$path" ]; then file=$md
        else
            case $path in /*) file=${path#/} ;; *) file=$(normpath "$dir/$path") ;; esac
            file=${file%/}
            if [ ! -e "$file" ]; then bad="$bad $md:$line: $target (no $file);"; continue; fi
        fi
        if [ -n "$frag" ] && [[ $file == *.md ]] && [ -f "$file" ] && ! anchor_ok "$file" "$frag"; then
            bad="$bad $md:$line: $target (no heading #$frag in $file);"
        fi
    done < <(links_of "$md")
    if [ -n "$bad" ]; then fail "links: $md:$bad"; fi
done
[ $status = 0 ] && [ $tables_only = 0 ] && pass "links: the $nlinks relative links of ${#mds[@]} Markdown files resolve"
[ $# -gt 0 ] && [ $tables_only = 0 ] && exit $status

# ---- 2. measured numbers in README tables come from CSVs ----------------------------------------
# A table row typed by hand in a README (outside the <!-- table: --> blocks that make tables
# prints) must not hold what looks like a measurement: a time or a rate with its unit (µs, ms,
# TFLOPS, GB/s), a percentage with decimals, a ratio written 1.023x, or a fraction with three
# decimals. Configurations, register counts and bounds stay by hand.
hand=""
readmes=("$@")
[ $# -gt 0 ] || mapfile -t readmes < <(tracked '*README.md' | grep -v '/measured/')
for md in "${readmes[@]}"; do
    hits=$(awk '/^<!-- table: / { block = 1 } /^<!-- \/table -->/ { block = 0; next }
                /^[ \t]*```/ { fence = !fence }
                !block && !fence && /^\|/ && !/^\| *:?---/ &&
                /[0-9] ?(µs|us|ms|TFLOPS|GB\/s|TB\/s)([^A-Za-z]|$)|[0-9]\.[0-9]+ ?%|[0-9]\.[0-9][0-9]+x|(^|[^0-9.])[0-9]\.[0-9][0-9][0-9]([^0-9]|$)/ {
                    printf " %d", NR }' "$md")
    [ -z "$hits" ] || hand="$hand $md (lines$hits);"
done
if [ -z "$hand" ]; then pass "tables: no README table typed by hand holds a measured number"
else fail "tables: README table rows typed by hand that hold measured numbers (generate them from a CSV, make tables):$hand"; fi
[ $tables_only = 1 ] && exit $status

# ---- 3. measured/ ---------------------------------------------------------------------------
mapfile -t all_measured < <(tracked | grep -E '(^|/)measured/')
mapfile -t measured < <(printf '%s\n' "${all_measured[@]}" | grep -vE '(^|/)measured/README\.md$')
n=${#all_measured[@]}
if [ "$n" -le "$MEASURED_MAX" ]; then pass "measured: $n files under measured/ folders (at most $MEASURED_MAX)"
else fail "measured: $n files under measured/ folders, more than $MEASURED_MAX: an experiment not kept becomes one summary, its raw runs stay in git history"; fi
# Every path a lesson, a page of notes or of docs names, resolved from its folder and from the top.
cited=$(for md in $(tracked '*README.md' '*NOTES.md' 'docs/*.md' | grep -v '/measured/'); do
    dir=$(dirname "$md")
    # a path ends at a comma, but NAME.{csv,md} keeps its braces (both names)
    grep -oE '[A-Za-z0-9_./-]*measured/([A-Za-z0-9_.×/-]|\{[^}]*\})*' "$md" | sed 's/[.]*$//' |
        while read -r p; do
            if [[ $p =~ ^(.*)\{([^}]*)\}(.*)$ ]]; then
                IFS=, read -ra alts <<<"${BASH_REMATCH[2]}"
                for a in "${alts[@]}"; do echo "${BASH_REMATCH[1]}$a${BASH_REMATCH[3]}"; done
            else echo "$p"; fi
        done | while read -r p; do
            normpath "$dir/$p"
            normpath "$p"
        done
done | sort -u)
uncited=""
for f in "${measured[@]}"; do
    hit=0
    d=$f
    while :; do
        if grep -qxF "$d" <<<"$cited"; then hit=1; break; fi
        [[ $d == */* ]] || break
        d=${d%/*}
        [[ ${d##*/} == measured ]] && break # the measured/ folder itself cites nothing
    done
    [ $hit = 1 ] || uncited="$uncited $f"
done
if [ -z "$uncited" ]; then pass "measured: each of the ${#measured[@]} files besides the indexes is cited by a README, NOTES.md or docs page"
else fail "measured: cited by no README, NOTES.md or docs page:$uncited"; fi
exit $status
