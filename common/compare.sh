#!/usr/bin/env bash
# Your exercise beside our stage, beyond the clock (make compare-NN KERNEL=name):
#   bash common/compare.sh NN_topic KERNEL
#   bash common/compare.sh --objects REF.o REF_SYMBOL EX.o EX_SYMBOL [OPCODE...]
# The first form finds the stage's kernel in build/NN_topic/kernels/*.o (by the symbol of its
# row, from --sass-spec), and yours in the exercise object of the same file name; the second
# compares any two kernels (the test uses it). Columns:
#   - from the compiled code, no GPU needed (cuobjdump, on sm_90a code where the object has it,
#     else its first architecture): registers per thread, static shared memory, local memory
#     (stack; spills), and static counts of the SASS instructions the stage's lesson is about
#     (its row's must-have opcodes, and the usual memory and math ones): how many such
#     instructions the code contains, not how many run;
#   - with a GPU: time, throughput and ratio of both from one run of the chapter binary, and
#     the occupancy of each (Nsight Compute's Occupancy section, one launch each: the block
#     limits by registers, shared memory and warps, theoretical and achieved occupancy). The
#     CUDA occupancy API would need each kernel's address, which the launchers keep to
#     themselves; ncu reads the same calculator's inputs from the launch.
# Then a hint for each difference with a known cause.
set -u
BUILD=${BUILD:-build}

# The Occupancy section of Nsight Compute's text report on stdin, as "name<TAB>value" lines: the
# block limits by SM, registers, shared memory and warps, theoretical and achieved occupancy.
parse_occupancy() {
    awk '/Section: Occupancy/ { on = 1; next }
         on && /^ *-+ / { next }
         on && (NF == 0 || /^ *(OPT|INF|WRN)/) { exit }
         on && /^ *(Block Limit (Registers|Shared Mem|Warps|SM)|Theoretical|Achieved) / &&
         $(NF - 1) ~ /^(block|warp|%)$/ {
             v = $NF; name = $1; for (i = 2; i <= NF - 2; i++) name = name " " $i
             print name "\t" v }'
}
# --occupancy-from FILE: parse a saved ncu report (the test of the parser; no GPU needed).
if [ "${1:-}" = "--occupancy-from" ]; then
    [ -f "${2:-}" ] || { echo "compare: --occupancy-from needs a file" >&2; exit 2; }
    parse_occupancy <"$2"
    exit 0
fi

find_cuobjdump() {
    command -v cuobjdump 2>/dev/null && return
    local d
    for d in "${CUDA_HOME:-/usr/local/cuda}/bin" \
        $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, "cu13", "bin") for p in nvidia.__path__))' 2>/dev/null); do
        [ -x "$d/cuobjdump" ] && { echo "$d/cuobjdump"; return; }
    done
}
# cuobjdump, and the nvdisasm its -sass runs, or exit 2 saying how to get them (asked once the
# arguments are known good: a slip in them is answered first).
need_tools() {
    CUOBJDUMP=$(find_cuobjdump)
    [ -n "$CUOBJDUMP" ] && export PATH="$(dirname "$CUOBJDUMP"):$PATH" # nvdisasm is beside it
    local missing=""
    [ -n "$CUOBJDUMP" ] || missing="cuobjdump"
    command -v nvdisasm >/dev/null 2>&1 || missing="${missing:+$missing and }nvdisasm"
    if [ -n "$missing" ]; then
        echo "compare: $missing not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm," \
            "or a full CUDA Toolkit)" >&2
        exit 2
    fi
}

# The architecture to read: sm_90a when the object has it, else its first one.
arch_of() {
    local archs
    archs=$("$CUOBJDUMP" -lelf "$1" 2>/dev/null | sed -n 's/.*\.\(sm_[0-9a-z]*\)\.cubin.*/\1/p' | sort -u)
    if echo "$archs" | grep -qx sm_90a; then echo sm_90a; else echo "$archs" | head -n 1; fi
}

# The functions of an object whose (mangled) names contain $2 ("*": every function).
functions_of() {
    "$CUOBJDUMP" -res-usage -arch "$3" "$1" 2>/dev/null |
        awk -v s="$2" '/^ *Function / { f = $2; sub(/:$/, "", f); if (s == "*" || index(f, s)) print f }'
}

# "REG STACK SHARED LOCAL" of function $2 in object $1 (arch $3).
resources_of() {
    "$CUOBJDUMP" -res-usage -arch "$3" "$1" 2>/dev/null | awk -v f="$2" '
        /^ *Function / { g = $2; sub(/:$/, "", g); want = (g == f); next }
        want && /REG:/ { for (i = 1; i <= NF; i++) { split($i, kv, ":"); v[kv[1]] = kv[2] }
                         print v["REG"], v["STACK"], v["SHARED"], v["LOCAL"]; exit }'
}

# The SASS of function $2 in object $1 (arch $3), one opcode per line.
opcodes_of() {
    "$CUOBJDUMP" -sass -arch "$3" "$1" 2>/dev/null | awk -v f="$2" '
        /Function : / { want = ($3 == f); next }
        want && /^ *\/\*[0-9a-f]+\*\// { line = $0; sub(/^ *\/\*[0-9a-f]+\*\/ */, "", line)
                                         sub(/^@!?U?P[0-9T] +/, "", line)
                                         split(line, tok, /[ \t;]+/); print tok[1] }'
}

# How many opcodes in list $1 start with prefix $2 (a prefix ends at a dot or the end: LDG
# counts LDG.E and LDG.E.128, LDG.E.128 only those).
count_prefix() {
    awk -v p="$2" 'index($0, p) == 1 && (length($0) == length(p) || substr($0, length(p) + 1, 1) == ".") { n++ }
                   END { print n + 0 }' <<<"$1"
}

# ---- the arguments ---------------------------------------------------------------------------
usage() {
    echo "usage: bash common/compare.sh NN_topic KERNEL" >&2
    echo "       bash common/compare.sh --objects REF.o REF_SYMBOL EX.o EX_SYMBOL [OPCODE...]" >&2
    exit 2
}
chapter="" kernel="" must=""
if [ "${1:-}" = "--objects" ]; then
    [ $# -ge 5 ] || usage
    ref_obj=$2 ref_sym=$3 ex_obj=$4 ex_sym=$5
    shift 5
    must="$*"
    ref_name=$ref_sym ex_name=$ex_sym
    need_tools
else
    [ $# -eq 2 ] || usage
    chapter=${1%/} kernel=$2
    bin=$BUILD/bin/$chapter
    [ -x "$bin" ] || { echo "compare: $bin not built (make $bin)" >&2; exit 2; }
    spec=$("$bin" --sass-spec | awk -F'\t' -v k="$kernel" '$2 == k')
    if [ -z "$spec" ] && [ "${kernel#ex_}" != "$kernel" ]; then
        echo "compare: give the stage's name, without ex_ (make compare-${chapter%%_*}" \
            "KERNEL=${kernel#ex_}): yours, $kernel, is put beside it" >&2
        exit 2
    fi
    if [ -z "$spec" ]; then
        echo "compare: no stage '$kernel' with a known kernel symbol in $chapter ($bin --list)" >&2
        exit 2
    fi
    need_tools
    ref_sym=$(cut -f4 <<<"$spec")
    must=$(cut -f5 <<<"$spec")
    ref_obj=""
    for o in "$BUILD/$chapter"/kernels/*.o; do
        a=$(arch_of "$o")
        if [ -n "$(functions_of "$o" "$ref_sym" "$a")" ]; then ref_obj=$o; break; fi
    done
    [ -n "$ref_obj" ] || { echo "compare: no object in $BUILD/$chapter/kernels has '$ref_sym'" >&2; exit 2; }
    ex_obj=$BUILD/$chapter/exercises/$(basename "$ref_obj")
    [ -f "$ex_obj" ] || { echo "compare: $ex_obj not built" >&2; exit 2; }
    ex_sym="*"
    ref_name="$kernel (ours)" ex_name="ex_$kernel (yours)"
fi

arch=$(arch_of "$ref_obj")
[ -n "$arch" ] || { echo "compare: $ref_obj holds no GPU code" >&2; exit 2; }
ref_fn=$(functions_of "$ref_obj" "$ref_sym" "$arch" | head -n 1)
[ -n "$ref_fn" ] || { echo "compare: no function '$ref_sym' in $ref_obj ($arch)" >&2; exit 2; }
ex_arch=$(arch_of "$ex_obj")
ex_fns=$(functions_of "$ex_obj" "$ex_sym" "${ex_arch:-$arch}")

echo "compare: $ref_name against $ex_name, $arch code"
echo "  ours:  $ref_fn in $ref_obj"
if [ -z "$ex_fns" ]; then
    echo "  yours: no kernel in $ex_obj yet (the skeleton returns TODO): nothing to compare"
    exit 0
fi
ex_fn=$(head -n 1 <<<"$ex_fns")
echo "  yours: $ex_fn in $ex_obj"
[ "$(wc -l <<<"$ex_fns")" -gt 1 ] &&
    echo "         (your file has $(wc -l <<<"$ex_fns") kernels; the first is compared: $(tr '\n' ' ' <<<"$ex_fns"))"

read -r r_reg r_stack r_smem r_local <<<"$(resources_of "$ref_obj" "$ref_fn" "$arch")"
read -r e_reg e_stack e_smem e_local <<<"$(resources_of "$ex_obj" "$ex_fn" "${ex_arch:-$arch}")"
r_ops=$(opcodes_of "$ref_obj" "$ref_fn" "$arch")
e_ops=$(opcodes_of "$ex_obj" "$ex_fn" "${ex_arch:-$arch}")

row() { printf "  %-28s %14s %14s\n" "$1" "$2" "$3"; }
echo
row "" "ours" "yours"
row "registers per thread" "${r_reg:-?}" "${e_reg:-?}"
row "static shared memory (B)" "${r_smem:-?}" "${e_smem:-?}"
row "stack frame (B)" "${r_stack:-?}" "${e_stack:-?}"
row "local memory (B)" "${r_local:-?}" "${e_local:-?}"
row "SASS instructions" "$(grep -c . <<<"$r_ops")" "$(grep -c . <<<"$e_ops")"
echo "  static counts (in the code, not executed):"
declare -A seen
for op in $must LDG.E.128 LDG STG.E.128 STG LDS.128 LDS STS LDSM STSM LDGSTS FFMA HMMA HGMMA BAR.SYNC SHFL LDL STL; do
    [ -n "${seen[$op]:-}" ] && continue
    seen[$op]=1
    rc=$(count_prefix "$r_ops" "$op") ec=$(count_prefix "$e_ops" "$op")
    [ "$rc" = 0 ] && [ "$ec" = 0 ] && continue
    row "  $op" "$rc" "$ec"
done

# ---- hints: differences with a known cause ----------------------------------------------------
echo
hints=0
hint() { echo "  - $*"; hints=$((hints + 1)); }
r_spill=$(( $(count_prefix "$r_ops" LDL) + $(count_prefix "$r_ops" STL) ))
e_spill=$(( $(count_prefix "$e_ops" LDL) + $(count_prefix "$e_ops" STL) ))
echo "hints:"
if [ "${e_local:-0}" -gt 0 ] || [ "${e_stack:-0}" -gt 0 ] || [ "$e_spill" -gt 0 ]; then
    hint "yours uses local memory (stack frame ${e_stack:-0} B, local ${e_local:-0} B, $e_spill LDL/STL in the code): registers spilled, or an array indexed at run time; local memory is DRAM behind L1"
fi
for v in LDG.E.128 STG.E.128 LDS.128; do
    if [ "$(count_prefix "$r_ops" "$v")" -gt 0 ] && [ "$(count_prefix "$e_ops" "$v")" = 0 ]; then
        hint "ours has 128-bit accesses ($v) and yours none: 16-byte aligned vector types (float4, uint4) issue a quarter of the instructions"
    fi
done
for m in $must; do
    if [ "$(count_prefix "$r_ops" "$m")" -gt 0 ] && [ "$(count_prefix "$e_ops" "$m")" = 0 ]; then
        hint "the stage's lesson needs $m, which yours does not contain"
    fi
done
r_lds=$(count_prefix "$r_ops" LDS) e_lds=$(count_prefix "$e_ops" LDS)
if [ "$r_lds" -gt 0 ] && [ "$e_lds" -gt $((2 * r_lds)) ]; then
    hint "yours has $e_lds shared loads in its code against our $r_lds: wider loads (LDS.128) or more reuse per load from registers"
fi
if [ -n "${r_reg:-}" ] && [ -n "${e_reg:-}" ] && [ "$e_reg" -gt $((r_reg + 32)) ]; then
    hint "yours needs $e_reg registers per thread against our $r_reg: fewer warps fit on an SM"
fi
[ "$hints" = 0 ] && echo "  - none: the code looks alike by these measures"

# ---- with a GPU: the clock, and the occupancy -----------------------------------------------------
# The base name of a mangled kernel (_Z12final_kernelI..., _ZL8add_kernelPKf...): what Nsight
# Compute's -k matches. A name it cannot read comes back whole.
base_name() {
    local m=$1 n
    [[ $m =~ ^_ZL?([0-9]+) ]] || { echo "$m"; return; }
    n=${BASH_REMATCH[1]}
    echo "${m:${#BASH_REMATCH[0]}:$n}"
}
# The first launch of one kernel: the row given to --kernel runs alone (with its chapter's
# baselines, which -k leaves out).
occupancy_of() {
    ncu --clock-control none --section Occupancy -k "regex:$2" -c 1 \
        "$bin" --kernel "$1" --iters 1 --warmup 0 2>/dev/null | parse_occupancy
}
if [ -n "$chapter" ]; then
    echo
    if nvidia-smi -L >/dev/null 2>&1; then
        echo "one run, both kernels (make run-NN):"
        "$bin" --kernel "$kernel" --kernel "ex_$kernel"
        echo
        if command -v ncu >/dev/null 2>&1; then
            r_occ=$(occupancy_of "$kernel" "$(base_name "$ref_fn")")
            e_occ=$(occupancy_of "ex_$kernel" "$(base_name "$ex_fn")")
            if [ -z "$r_occ" ] || [ -z "$e_occ" ]; then
                echo "occupancy: Nsight Compute gave no Occupancy section (run it as a user allowed"
                echo "to read the GPU's counters, or see make profile-${chapter%%_*} KERNEL=$kernel)"
            else
                echo "occupancy per SM (Nsight Compute, first launch of each; the theoretical values are"
                echo "the occupancy calculator's, from the launch's registers, shared memory and block size):"
                printf "  %-32s %10s %10s\n" "" "ours" "yours"
                while IFS=$'\t' read -r name value; do
                    printf "  %-32s %10s %10s\n" "$name" "$value" \
                        "$(awk -F'\t' -v n="$name" '$1 == n { print $2; exit }' <<<"$e_occ")"
                done <<<"$r_occ"
                r_lim=$(awk -F'\t' '$1 ~ /^Theoretical Occupancy/ { print $2 }' <<<"$r_occ")
                e_lim=$(awk -F'\t' '$1 ~ /^Theoretical Occupancy/ { print $2 }' <<<"$e_occ")
                if [ -n "$r_lim" ] && [ -n "$e_lim" ] && awk -v r="$r_lim" -v e="$e_lim" 'BEGIN { exit !(e < r / 2) }'; then
                    echo "  - yours fits less than half our warps on an SM: the smallest 'Block Limit' row above is why"
                fi
            fi
        else
            echo "occupancy: needs Nsight Compute (ncu, in the CUDA toolkit) on the PATH"
        fi
    else
        echo "time, throughput, ratio and occupancy: need a GPU (make run-${chapter%%_*} ARGS=\"--kernel $kernel --kernel ex_$kernel\" on one; make compare-${chapter%%_*} there adds the occupancy)"
    fi
fi
exit 0
