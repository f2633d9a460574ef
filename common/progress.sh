#!/usr/bin/env bash
# The learner's path through the course (make progress, make next, make diff-NN STAGE=k).
#
#   bash common/progress.sh progress [CHAPTER...]   every exercise, in course order, with its state
#   bash common/progress.sh next [CHAPTER...]       the first exercise not passed: what to read, edit, run
#   bash common/progress.sh diff CHAPTER STAGE      our stage STAGE against the stage it builds on
#
# An exercise is a file of NN_topic/exercises/. Its state:
#   TODO      every launcher in it still returns LAUNCH_TODO (the skeleton as shipped);
#   broken    written, but it does not compile (the compiler's first error);
#   written   it compiles, and this machine cannot run it (no GPU, or a GPU too old for it: why);
#   PASS      its rows pass `make check-NN` at the test shapes (its time beside our stage's);
#   FAIL      a row gave a wrong answer (the first wrong index, as make check-NN prints it).
# Only written exercises are compiled, each alone (make BUILD/NN_topic/exercises/FILE.o); on a
# machine with a GPU the chapter binary is linked and `--check` runs the written exercises' rows.
# A run's result is kept under BUILD/progress/, keyed by the exercise's source and the binary, so
# a second `make progress` with nothing changed runs nothing. `next` counts an exercise that is
# written and cannot be checked here as done, and says how many those are.
#
# A stage builds on the stage before it in its chapter, or on the file its opening comment names
# in a line "Builds on: PATH" (06's first stage builds on 05's last); a chapter's first stage with
# no such line is shown whole. The diff is unified, three lines of context, the unchanged runs
# between its hunks folded to one line.
set -u
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 2
ALL=$(ls -d [0-9][0-9]_*/ 2>/dev/null | tr -d / | tr '\n' ' ')

# A chapter by its number or its folder's name; "" when neither.
chapter_of() {
    local c
    for c in $ALL; do
        if [ "$1" = "$c" ] || [ "$1" = "${c%%_*}" ]; then echo "$c"; return; fi
    done
}
numbers() { local c; for c in $ALL; do printf '%s ' "${c%%_*}"; done; }

# ---- one exercise's facts, from its source ---------------------------------------------------
stage_number() { local b=${1##*/}; echo $((10#${b%%_*})); }
short_name() { local b=${1##*/}; b=${b#*_}; b=${b%.cu}; echo "${b%_sm90a}"; }
# The idea: the opening comment's first sentence, after "Exercise N — ".
idea_of() {
    awk 'NR == 1 && !/^\/\*/ { exit }
         { line = $0; sub(/^\/\*+ */, "", line); sub(/^ *\* ?/, "", line)
           done = sub(/ *\*\/.*$/, "", line); text = text (text == "" ? "" : " ") line
           if (done || line == "") exit }
         END { sub(/^Exercise [0-9]+ *(—|-+) */, "", text)
               if (match(text, /\.( |$)/)) text = substr(text, 1, RSTART)
               print text }' "$1"
}
# The command its opening comment gives to check it ("Check it:  make check-01 ...").
check_of() {
    local ch=$1 f=$2 c
    c=$(sed -n 's/.*Check it: *//p' "$f" | head -n 1 | sed 's/ *Time it:.*//; s/ *\*\/.*//; s/ *$//')
    echo "${c:-make check-${ch%%_*}}"
}
# The ex_ launchers it defines: from its object where it is compiled (a file may name them
# through a macro, as a stage compiled as the exercise does with STAGE()), else from its source.
symbols_of() { # file [object]
    if [ -n "${2:-}" ] && [ -f "$2" ] && nm --defined-only -g "$2" >/dev/null 2>&1; then
        nm --defined-only -g "$2" | awk '$2 == "T" && $3 ~ /^ex_/ { print $3 }' | sort -u
    else
        grep -oE '^(extern "C" )?[A-Za-z0-9_ *]*\bex_[A-Za-z0-9_]+\(' "$1" | grep -oE 'ex_[A-Za-z0-9_]+' | sort -u
    fi
}
is_todo() { # every launcher still returns LAUNCH_TODO
    local defs todos
    defs=$(symbols_of "$1" | wc -l)
    todos=$(grep -c 'return LAUNCH_TODO' "$1")
    [ "$defs" -gt 0 ] && [ "$todos" -ge "$defs" ]
}
# The lesson's section of stage k: the first heading "Stage k" (or "j → k:"), else "The stages".
section_of() {
    local ch=$1 k=$2 hit
    hit=$(awk -f common/md_anchors.awk "$ch/README.md" | awk -F'\t' -v k="$k" '
        $3 ~ ("(^|[^0-9])Stage " k "([^0-9]|$)") || $3 ~ ("→ " k ":") { print $4; exit }')
    [ -n "$hit" ] || hit=$(awk -f common/md_anchors.awk "$ch/README.md" | awk -F'\t' 'tolower($3) ~ /stages/ { print $4; exit }')
    echo "$ch/README.md${hit:+#$hit}"
}

# A GPU on this machine (nvidia-smi answers), as the Makefile decides.
gpu_here() { nvidia-smi --query-gpu=compute_cap --format=csv,noheader >/dev/null 2>&1; }

# ---- the states of one chapter's exercises -----------------------------------------------------
# Prints one line per exercise: FILE<TAB>STATE<TAB>DETAIL.
chapter_states() {
    local ch=$1 f obj out sym rows key cache bin
    local -a written=()
    mkdir -p "$BUILD/progress"
    for f in "$ch"/exercises/*.cu; do
        [ -f "$f" ] || continue
        if is_todo "$f"; then printf '%s\tTODO\t\n' "$f"; continue; fi
        obj=$BUILD/$ch/exercises/$(basename "${f%.cu}").o
        if ! out=$(env -u MAKEFLAGS -u MAKELEVEL "$MAKE" --no-print-directory -s BUILD="$BUILD" "$obj" 2>&1); then
            printf '%s\tbroken\t%s\n' "$f" "$( { echo "$out" | grep -E '\([0-9]+\): error'; echo "$out" | grep -E 'error|Error'; } | head -n 1 | cut -c1-160)"
            continue
        fi
        written+=("$f")
    done
    [ ${#written[@]} -gt 0 ] || return 0
    if ! gpu_here; then
        for f in "${written[@]}"; do printf '%s\twritten\tcompiles; not checked here: no GPU\n' "$f"; done
        return 0
    fi
    bin=$BUILD/bin/$ch
    if ! out=$(env -u MAKEFLAGS -u MAKELEVEL "$MAKE" --no-print-directory -s BUILD="$BUILD" "$bin" 2>&1); then
        for f in "${written[@]}"; do printf '%s\twritten\tcompiles; the chapter does not link: %s\n' "$f" "$(echo "$out" | tail -n 1 | cut -c1-120)"; done
        return 0
    fi
    # Each written exercise's rows: those whose launcher its file defines.
    local launchers binsum todo_run=() f_rows=()
    launchers=$("$bin" --launchers 2>/dev/null)
    binsum=$(sha1sum <"$bin" | cut -c1-40)
    for f in "${written[@]}"; do
        rows=""
        for sym in $(symbols_of "$f" "$BUILD/$ch/exercises/$(basename "${f%.cu}").o"); do
            rows="$rows $(awk -F'\t' -v s="$sym" '$2 == s && $1 ~ /^ex_/ { print $1 }' <<<"$launchers")"
        done
        rows=$(echo $rows)
        key=$( { cat "$f"; echo "$binsum"; } | sha1sum | cut -c1-40)
        cache=$BUILD/progress/$key
        if [ -z "$rows" ]; then
            printf '%s\twritten\tcompiles; no row of the chapter calls its launchers\n' "$f"
        elif [ -s "$cache" ]; then
            cat "$cache"
        else
            todo_run+=("$f"); f_rows+=("$rows")
        fi
    done
    [ ${#todo_run[@]} -gt 0 ] || return 0
    local args=() i r csv rc
    for i in "${!todo_run[@]}"; do for r in ${f_rows[$i]}; do args+=(--kernel "$r"); done; done
    csv=$("$bin" --check --format csv "${args[@]}" 2>&1)
    rc=$?
    for i in "${!todo_run[@]}"; do
        f=${todo_run[$i]}
        key=$( { cat "$f"; echo "$binsum"; } | sha1sum | cut -c1-40)
        if [ $rc = 3 ]; then
            printf '%s\twritten\tcompiles; not checked here: no usable GPU\n' "$f"
            continue
        fi
        judge "$f" "${f_rows[$i]}" <<<"$csv" | tee "$BUILD/progress/$key"
    done
}

# An exercise's state from `--check --format csv`: its rows' statuses at every test shape.
judge() { # file rows < csv
    awk -v file="$1" -v rows=" $2 " '
        function csv_split(line, f,    n, i, c, q, cur) { # fields of one CSV line, quotes honoured
            n = 0; cur = ""; q = 0
            for (i = 1; i <= length(line); i++) {
                c = substr(line, i, 1)
                if (q && c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
                else if (c == "\"") q = !q
                else if (c == "," && !q) { f[++n] = cur; cur = "" }
                else cur = cur c
            }
            f[++n] = cur
            return n
        }
        /^FAIL ex_/ { split($0, w, " "); if (index(rows, " " w[2] " ") && !note) note = $0; next }
        /^#/ || NF == 0 { next }
        {
            n = csv_split($0, f)
            if (n < 6 || !index(rows, " " f[2] " ")) next
            seen++
            st = f[3]
            if (st == "FAIL") fail++
            else if (st == "TODO") todo = todo " " f[2]
            else if (st == "PASS") {
                pass++; passed[f[2]] = 1
                if (f[6] != "-" && f[6] + 0 >= best) { best = f[6] + 0; at = f[1]; mine = f[5]; ours = f[6]; row = f[2] }
            } else { other = st; skipped[f[2]] = st }
        }
        END {
            if (!seen) { printf "%s\twritten\tcompiles; --check printed none of its rows\n", file; exit }
            if (fail) { sub(/^FAIL /, "", note); printf "%s\tFAIL\t%s\n", file, note; exit }
            if (todo != "") { printf "%s\tTODO\t%s still returns LAUNCH_TODO\n", file, substr(todo, 2); exit }
            # A row passes where it passes at every shape it takes (it may skip shapes it does
            # not take); a row that ran at none (a GPU too old for it) is not checked here.
            for (r in skipped) if (!(r in passed)) unchecked = unchecked " " r " (" skipped[r] ")"
            if (unchecked != "") { printf "%s\twritten\tcompiles; not checked here:%s\n", file, unchecked; exit }
            printf "%s\tPASS\t%s %s us, ours %s us (at %s)\n", file, row, mine, ours, at
        }'
}

# ---- the commands ----------------------------------------------------------------------------
chapters_given() { # the chapters named, or every chapter; an unknown one: exit 2
    local c ch out=""
    if [ $# = 0 ]; then echo "$ALL"; return 0; fi
    for c in "$@"; do
        ch=$(chapter_of "$c")
        if [ -z "$ch" ]; then
            echo "progress: no chapter '$c'; the chapters are $ALL(or their numbers: $(numbers))" >&2
            return 2
        fi
        out="$out$ch "
    done
    echo "$out"
}

cmd_progress() { # next(0|1) chapters...
    local next_only=$1 ch f state detail k total=0 passed=0 unchecked=0 first=""
    shift
    local chapters
    chapters=$(chapters_given "$@") || exit 2
    for ch in $chapters; do
        [ "$next_only" = 1 ] || echo "$ch"
        while IFS=$'\t' read -r f state detail; do
            [ -n "$f" ] || continue
            total=$((total + 1))
            k=$(stage_number "$f")
            case $state in
            PASS) passed=$((passed + 1)) ;;
            written) unchecked=$((unchecked + 1)) ;;
            *) [ -n "$first" ] || printf -v first '%s\t%s\t%s\t%s' "$ch" "$f" "$state" "$detail" ;;
            esac
            [ "$next_only" = 1 ] || printf '  %2d %-21s %-8s %s\n' "$k" "$(short_name "$f")" "$state" "${detail:-$f}"
        done < <(chapter_states "$ch" | sort -s -t$'\t' -k1,1)
    done
    if [ "$next_only" = 1 ]; then show_next "$first" "$unchecked"; return; fi
    local line="$passed of $total exercises passed"
    [ $unchecked = 0 ] || line="$line, $unchecked more written and not checked here"
    if [ -n "$first" ]; then
        IFS=$'\t' read -r ch f _ <<<"$first"
        line="$line; next: $ch exercise $(stage_number "$f"), $(short_name "$f") (make next)"
    else line="$line; none left"; fi
    echo
    echo "$line"
}

plural() { if [ "$1" = 1 ]; then echo "1 $2"; else echo "$1 ${2}s"; fi; }

show_next() { # "chapter<TAB>file<TAB>state<TAB>detail" unchecked
    local ch f state detail k
    if [ -z "$1" ]; then
        echo "Every exercise is passed${2:+ or written}: the course is done here."
        [ "$2" = 0 ] || echo "($(plural "$2" "written exercise") could not be checked on this machine: make progress says why.)"
        return
    fi
    IFS=$'\t' read -r ch f state detail <<<"$1"
    k=$(stage_number "$f")
    echo "Next: $ch, exercise $k ($(short_name "$f")): $state${detail:+ ($detail)}"
    echo "  the idea:  $(idea_of "$f")"
    echo "  read:      $(section_of "$ch" "$k")"
    echo "  edit:      $f"
    echo "  check:     $(check_of "$ch" "$f")"
    echo "  stuck:     make diff-${ch%%_*} STAGE=$k   (our stage $k, against the stage it builds on)"
    [ "$2" = 0 ] || echo "($(plural "$2" "written exercise") before it could not be checked on this machine: make progress says why.)"
}

# The file of stage k of a chapter, and the one it builds on.
stage_file() { ls "$1"/kernels/"$(printf '%02d' "$2")"_*.cu 2>/dev/null | head -n 1; }
base_of() { # chapter stagefile k
    local on
    on=$(sed -n '1,/\*\//s/.*Builds on: *\([^ ]*\).*/\1/p' "$2" | head -n 1)
    if [ -n "$on" ]; then echo "$on"; return; fi
    [ "$3" -gt 1 ] && stage_file "$1" $(($3 - 1))
}

cmd_diff() { # chapter stage
    local ch k f base n
    ch=$(chapter_of "${1:-}")
    if [ -z "$ch" ]; then
        echo "make diff-${1:-NN}: no such chapter; the chapters are $(for c in $ALL; do printf 'diff-%s ' "${c%%_*}"; done)" >&2
        exit 2
    fi
    n=$(ls "$ch"/kernels/[0-9][0-9]_*.cu | sed 's|.*/||; s/_.*//' | sort -u | tail -n 1)
    n=$((10#$n))
    if ! [[ ${2:-} =~ ^[0-9]+$ ]] || [ -z "$(stage_file "$ch" "$2")" ]; then
        echo "make diff-${ch%%_*} STAGE=${2:-}: ${2:+no stage $2; }give STAGE=k, one of $ch's stages 1-$n" >&2
        exit 2
    fi
    k=$((10#$2))
    f=$(stage_file "$ch" "$k")
    base=$(base_of "$ch" "$f" "$k")
    if [ -z "$base" ]; then
        echo "== stage $k:  $f"
        echo "   the chapter's first stage, built on no earlier one: here it is whole"
        cat "$f"
        return
    fi
    if [ ! -f "$base" ]; then echo "make diff: $f builds on $base, which is not there" >&2; exit 2; fi
    local added removed
    added=$(diff "$base" "$f" | grep -c '^>')
    removed=$(diff "$base" "$f" | grep -c '^<')
    echo "== stage $k:  $f"
    echo "   against:  $base (the stage it builds on)"
    echo "   $added lines added, $removed removed; the lines both share are folded, but 3 around each change"
    diff -U3 --label "$base" --label "$f" "$base" "$f" | awk -v total="$(wc -l <"$base")" '
        BEGIN { next_line = 1 } # the first line of the older file that no hunk has shown yet
        NR <= 2 { print; next }
        /^@@ / {
            split($2, o, ",")
            start = substr(o[1], 2) + 0; len = (o[2] == "" ? 1 : o[2] + 0)
            if (start > next_line) printf "   ... %d line%s the same in both ...\n", start - next_line, (start - next_line > 1 ? "s" : "")
            next_line = start + len
            print; next
        }
        { print }
        END { if (total + 1 > next_line) printf "   ... %d line%s the same in both ...\n", total + 1 - next_line, (total + 1 - next_line > 1 ? "s" : "") }'
    return 0
}

case ${1:-} in
progress) shift; cmd_progress 0 "$@" ;;
next) shift; cmd_progress 1 "$@" ;;
diff) shift; cmd_diff "$@" ;;
*) echo "usage: bash common/progress.sh progress|next [CHAPTER...] | diff CHAPTER STAGE" >&2; exit 2 ;;
esac
