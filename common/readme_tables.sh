#!/usr/bin/env bash
# The README tables that come from measured CSVs (docs/design.md, "README tables").
#
#   bash common/readme_tables.sh [--check] [--base DIR] BINARY README...
#
# A generated table sits in a README between markers:
#
#   <!-- table: measured/h100.csv --shape 2^28 --columns kernel,dtype,time,tput,pct -->
#   | kernel | dtype | time (us) | GB/s | % memcpy |
#   ...
#   <!-- /table -->
#
# The marker's first word is the CSV (several: comma-separated; NAME=CSV names one), relative to
# the README's folder (or to DIR); the other words are options of --table-from (common/table_from.h), split as the
# shell splits words ("..." and '...' group, nothing is expanded). Several marker lines in a row
# stack their tables: the rows of each after the first are appended (same columns). BINARY is
# any chapter binary (build/bin/NN_topic): --table-from needs no GPU and no chapter.
#
# Without --check every block's body is rewritten in place with what the markers print (make
# tables). With --check nothing is written: each README whose blocks differ from their CSVs is
# shown as a diff, and the exit status is 1 (make test). Exit 2 on a marker that cannot be
# printed (a CSV missing, an unknown kernel or size), with the reason.
set -u
check=0 base=""
while [ $# -gt 0 ]; do
    case $1 in
    --check) check=1; shift ;;
    --base) base=$2; shift 2 ;;
    *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    echo "usage: bash common/readme_tables.sh [--check] [--base DIR] BINARY README..." >&2
    exit 2
fi
bin=$1
shift
for f in "$@"; do # an option after BINARY is a misplaced one, not a README to write
    case $f in -*) echo "readme_tables.sh: '$f' after BINARY: options come first (usage: [--check] [--base DIR] BINARY README...)" >&2; exit 2 ;; esac
    [ -f "$f" ] || { echo "readme_tables.sh: no README '$f'" >&2; exit 2; }
done

# WORDS: the words of $1, with "..." and '...' grouping and nothing expanded.
split_words() {
    local s=$1 w="" q="" c i have=0
    WORDS=()
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        if [ -n "$q" ]; then
            if [ "$c" = "$q" ]; then q=""; else w+=$c; fi
        elif [ "$c" = '"' ] || [ "$c" = "'" ]; then
            q=$c have=1
        elif [ "$c" = " " ]; then
            [ $have = 1 ] && WORDS+=("$w")
            w="" have=0
        else
            w+=$c have=1
        fi
    done
    [ $have = 1 ] && WORDS+=("$w")
}

# The table of one marker's words, the CSVs taken from the folder $2.
print_marker() { # words dir
    split_words "$1"
    local dir=$2 csvs="" f
    [ ${#WORDS[@]} -gt 0 ] || { echo "an empty marker" >&2; return 2; }
    IFS=, read -ra files <<<"${WORDS[0]}"
    for f in "${files[@]}"; do # NAME=CSV keeps its name
        case $f in *=*) csvs+="${csvs:+,}${f%%=*}=$dir/${f#*=}" ;; *) csvs+="${csvs:+,}$dir/$f" ;; esac
    done
    "$bin" --table-from "$csvs" "${WORDS[@]:1}" </dev/null
}

# The body of a block: the first marker's table, then the rows of each further marker's.
print_block() { # dir marker...
    local dir=$1 out first="" head
    shift
    for m in "$@"; do
        out=$(print_marker "$m" "$dir") || { echo "  in the marker: $m" >&2; return 2; }
        if [ -z "$first" ]; then
            first=$out
            echo "$out"
        else
            head=$(head -n 2 <<<"$out")
            if [ "$head" != "$(head -n 2 <<<"$first")" ]; then
                echo "stacked markers need the same columns: $m" >&2
                return 2
            fi
            tail -n +3 <<<"$out"
        fi
    done
}

# README with every block's body printed again, to stdout.
regenerate() { # readme dir
    local readme=$1 dir=$2 line state=text n=0
    local -a markers=()
    while IFS= read -r line || [ -n "$line" ]; do
        if [[ $line =~ ^\<!--\ table:\ (.*)\ --\>$ ]]; then
            if [ $state = body ]; then
                echo "$readme: a table marker inside a block (no <!-- /table --> before it)" >&2
                return 2
            fi
            markers+=("${BASH_REMATCH[1]}")
            state=head
            echo "$line"
            continue
        fi
        if [ $state = head ]; then
            print_block "$dir" "${markers[@]}" || { echo "$readme: block $((n + 1))" >&2; return 2; }
            n=$((n + 1))
            state=body
        fi
        if [ $state = body ]; then
            if [ "$line" = "<!-- /table -->" ]; then
                echo "$line"
                state=text
                markers=()
            fi
            continue
        fi
        echo "$line"
    done <"$readme"
    if [ $state != text ]; then
        echo "$readme: a table block without its <!-- /table -->" >&2
        return 2
    fi
    BLOCKS=$n
}

status=0
for readme in "$@"; do
    dir=${base:-$(dirname "$readme")}
    tmp=$(mktemp)
    BLOCKS=0
    if ! regenerate "$readme" "$dir" >"$tmp"; then
        rm -f "$tmp"
        exit 2
    fi
    if cmp -s "$tmp" "$readme"; then
        echo "$readme: $BLOCKS tables agree with their CSVs"
    elif [ $check = 1 ]; then
        echo "$readme: tables differ from their CSVs (make tables rewrites them):"
        diff -u "$readme" "$tmp" | sed 's/^/  /'
        status=1
    else
        cat "$tmp" >"$readme"
        echo "$readme: $BLOCKS tables rewritten"
    fi
    rm -f "$tmp"
done
exit $status
