#!/usr/bin/env bash
# A/B rows: where a stage carries several ideas, each idea's share is measured by compiling the
# stage with one documented switch that takes that idea out, and running it in turn with the
# chapter's own build, in one session. The variants are listed in NN_topic/ab.list; this builds
# and runs them (needs a GPU):
#   bash common/ab.sh NN_topic [OUTDIR [ROUNDS [NAME...]]]
# (default results/ab_NN_topic, 2 rounds, every line of the list; NAMEs: only those lines)
# A variant NAME is built in build/ab/NAME: a copy of build/'s objects in which only its FILE is
# compiled again, with its DEFINES (make BUILD=build/ab/NAME DEFINES=...), so a variant costs one
# compile and one link. Then ROUNDS rounds, each running every line of the list once, in the
# list's order: OUTDIR/NAME.rK.{txt,csv,md}. OUTDIR/summary.txt has each run's exit status.
# A line of ab.list: NAME FILE DEFINES [VAR=VALUE ...] ARGS...
#   NAME     the variant's name (its CSVs, its build directory)
#   FILE     the file compiled again, relative to the chapter (kernels/04_fa2_tuned.cu), or - for
#            the chapter's own binary
#   DEFINES  macros, comma-separated (-DATTN_AB_PADDED,-DX=2), or -
#   VAR=...  environment for the run (the chapters' runtime switches, GEMM06_PIPELINE_DEPTH=4)
#   ARGS     the chapter binary's arguments: its rows (--kernel) and sizes
set -u
chapter=${1:?usage: bash common/ab.sh NN_topic [OUTDIR [ROUNDS [NAME...]]]}
chapter=${chapter%/}
out=${2:-results/ab_$chapter}
rounds=${3:-2}
only=" ${*:4} "
list=$chapter/ab.list
if [ ! -f "$list" ]; then
    have=$(ls -d [0-9][0-9]_*/ab.list 2>/dev/null | cut -d/ -f1 | tr '\n' ' ')
    echo "ab.sh: $list not found (the chapters with A/B variants: $have)" >&2
    exit 2
fi
for n in ${*:4}; do # a NAME the list lacks would be silently left out
    awk -v n="$n" '$1 == n { f = 1 } END { exit !f }' "$list" ||
        { echo "ab.sh: $list has no line named '$n'" >&2; exit 2; }
done
mkdir -p "$out"
make "build/bin/$chapter" >"$out/build.txt" 2>&1 || { tail -n 30 "$out/build.txt"; exit 1; }

names=() bins=() envs=() args=()
while read -r name file defines rest; do
    [[ -z ${name:-} || $name == \#* ]] && continue
    [[ $only == "  " || $only == *" $name "* ]] || continue
    [ -n "${rest:-}" ] || { echo "ab.sh: $list: '$name' has no arguments" >&2; exit 2; }
    bin=build/bin/$chapter
    if [ "$file" != - ]; then
        [ -f "$chapter/$file" ] || { echo "ab.sh: $list: '$name': no $chapter/$file" >&2; exit 2; }
        dir=build/ab/$name
        rm -rf "$dir" && mkdir -p "$dir"
        # Every object of the chapter's build (06 links one of 05's), then only FILE's is stale.
        for d in build/common build/[0-9][0-9]_*; do cp -a "$d" "$dir/"; done
        cp -a build/arch.stamp "$dir/"
        rm -f "$dir/$chapter/${file%.cu}.o"
        defs=${defines//,/ }
        [ "$defines" = - ] && defs=
        (make BUILD="$dir" DEFINES="$defs" "$dir/bin/$chapter" </dev/null >"$out/build_$name.txt" 2>&1 ||
             echo "BUILD FAILED" >>"$out/build_$name.txt") &
        bin=$dir/bin/$chapter
    fi
    env_part=() arg_part=()
    for w in $rest; do
        if [ ${#arg_part[@]} -eq 0 ] && [[ $w =~ ^[A-Z][A-Z0-9_]*= ]]; then env_part+=("$w")
        else arg_part+=("$w"); fi
    done
    names+=("$name") bins+=("$bin") envs+=("${env_part[*]}") args+=("${arg_part[*]}")
done <"$list"
wait
failed=$(grep -l "BUILD FAILED" "$out"/build_*.txt 2>/dev/null)
[ -z "$failed" ] || { for f in $failed; do echo "== $f"; tail -n 20 "$f"; done; exit 1; }

: >"$out/summary.txt"
for ((r = 1; r <= rounds; r++)); do
    for i in "${!names[@]}"; do
        tag="${names[$i]}.r$r"
        # shellcheck disable=SC2086 # the list's words are the arguments
        env ${envs[$i]} "${bins[$i]}" ${args[$i]} --save "$out/$tag" >"$out/$tag.txt" 2>&1
        echo "$tag exit $? (${envs[$i]:+${envs[$i]} }${bins[$i]} ${args[$i]})" >>"$out/summary.txt"
    done
done
cat "$out/summary.txt"
