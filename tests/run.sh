#!/usr/bin/env bash
# The test driver behind `make test` (docs/design.md, "Tests"). make has already built every chapter
# with warnings as errors. The tests come in groups:
#   harness   the harness's test programs: host unit tests (build/bin/test_harness, and
#             test_fp8_convert: the host's e4m3 rounding against cuda_fp8.h's), and the GEMM
#             references and Hopper wrappers on the GPU (test_gemm_ref, test_hopper: SKIP without one);
#   cli-NN    the command-line contract of each chapter binary (exit codes 0/2/3, messages);
#   make      the Makefile's per-chapter targets and options (answered before anything is built);
#   wrappers, sass-NN   the SASS checks: the PTX wrappers' opcodes (tests/*_wrappers_sm90a.cu), each
#             stage's must / must-not opcodes, read with cuobjdump, a chapter's own claims in
#             NN_topic/sass_checks.sh, and the PTX beside the SASS;
#   docs-NN, documents, ab.list, profile, compare   figures, charts, README tables, links,
#             measured/, the A/B lists, the profile_ladder.sh rows, make compare's parsing;
#   gpu-N     on a GPU: every kernel at the test shapes (--test), the exercises built with the
#             reference stages substituted (NN_topic.solved: all must PASS), the shipped skeletons
#             (must report TODO, or PASS once you have written them), forced configurations,
#             random shapes, deliberately wrong outputs.
# The groups run in parallel, TEST_JOBS at a time (default: every core); the GPU's tests run in
# TEST_GPU_JOBS lanes (default 3 with a GPU), each its chapters one after the other. Each group
# writes its lines to build/test_groups/GROUP.res; build/test.log is all of them, in that order.
# Without a GPU the tests of the gpu group are counted as skipped, never as passed.
# The last line is "N passed, N failed, N skipped"; the exit status is 1 if any test failed. Just
# above it, a NOTE says how many SASS checks were skipped for want of cuobjdump or nvdisasm.
set -u
BUILD=${BUILD:-build}
LOG=$BUILD/test.log
GROUP_DIR=$BUILD/test_groups
JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
# The README tables and charts are printed by build/bin/from_csv (make builds it for make test).
FROM_CSV=${FROM_CSV:-$BUILD/bin/from_csv}
mkdir -p "$BUILD"
rm -rf "$GROUP_DIR"
mkdir -p "$GROUP_DIR"
: >"$LOG"

# In a group, RESULTS is the group's file of result lines and GROUP_LOG its file of details.
result() { # PASS|FAIL|SKIP description
    echo "$1 $2" >>"$RESULTS"
}

# ---- what every group needs to know, found once ------------------------------------------------
# A GPU is present when a size far beyond its memory is refused as bad usage (2), not as "no
# usable GPU" (3).
gpu_present=0
first_bin=$BUILD/bin/$1
first_dim=$("$first_bin" --help 2>/dev/null | awk '/^sizes/ { getline; print $1; exit }')
"$first_bin" "$first_dim" 2^40 --iters 1 >/dev/null 2>&1
[ $? = 2 ] && gpu_present=1


find_cuobjdump() {
    command -v cuobjdump 2>/dev/null && return
    local d
    for d in "${CUDA_HOME:-/usr/local/cuda}/bin" \
        $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, "cu13", "bin") for p in nvidia.__path__))' 2>/dev/null); do
        if [ -x "$d/cuobjdump" ]; then echo "$d/cuobjdump"; return; fi
    done
}
CUOBJDUMP=$(find_cuobjdump)
if [ -n "$CUOBJDUMP" ]; then
    export PATH="$(dirname "$CUOBJDUMP"):$PATH"  # cuobjdump -sass runs nvdisasm from beside it
fi
# Without cuobjdump, or without the nvdisasm that its -sass runs, every check that reads SASS is
# skipped; how many, and how to get the tools, is the NOTE above the last line (a newcomer reads
# the end of the output, not build/test.log). SASS_TOOLS says what is missing, empty when none.
SASS_HOWTO="pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm, or a full CUDA Toolkit"
if [ -z "$CUOBJDUMP" ]; then SASS_TOOLS="cuobjdump not found"
elif ! command -v nvdisasm >/dev/null 2>&1; then SASS_TOOLS="nvdisasm not found"
else SASS_TOOLS=""; fi
sass_skipped=0
sass_skip() { # description: a check skipped for want of the SASS tools
    result SKIP "$1: $SASS_TOOLS"
}

# ---- harness -----------------------------------------------------------------------------------
# Harness test programs print PASS, FAIL or SKIP lines: the unit tests (no GPU needed), the GEMM
# references against fp64 and the Hopper wrappers (TMA, mbarrier, wgmma) on the GPU, which print
# SKIP lines without one. A program that crashes or prints no result line is a failure.
harness_program() { # label program
    local label=$1 prog=$2 out rc got=0 word rest
    if [ ! -x "$prog" ]; then result FAIL "$label: $prog was not built"; return; fi
    out=$("$prog" 2>>"$GROUP_LOG")
    rc=$?
    while read -r word rest; do
        case $word in PASS | FAIL | SKIP) result "$word" "$label: $rest"; got=1 ;; esac
    done <<<"$out"
    if [ $rc != 0 ] || [ $got = 0 ]; then
        result FAIL "$label: $prog exited $rc: $(echo "$out" | tail -n 1)"
    fi
}
group_harness() {
    harness_program unit "$BUILD/bin/test_harness"
    harness_program fp8 "$BUILD/bin/test_fp8_convert"
}
# On the GPU: in the gpu group, so that no other test shares the GPU with them.
group_harness_gpu() {
    harness_program gemm_ref "$BUILD/bin/test_gemm_ref"
    harness_program hopper "$BUILD/bin/test_hopper"
}

# ---- cli-NN: the command-line contract -----------------------------------------------------------

expect_exit() { # want description command...
    local want=$1 what=$2
    shift 2
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" = "$want" ]; then result PASS "cli: $what"
    else result FAIL "cli: $what: exit $rc, want $want: $(echo "$out" | tail -n 2 | tr '\n' ' ')"; fi
}
group_cli() { # chapter
    local ch=$1 bin dim out rc csv svg first last
    bin=$BUILD/bin/$ch
    expect_exit 0 "$ch --help" "$bin" --help
    expect_exit 0 "$ch --list" "$bin" --list
    expect_exit 2 "$ch unknown option" "$bin" --no-such-option
    expect_exit 2 "$ch unknown kernel" "$bin" --kernel no_such_kernel
    dim=$("$bin" --help | awk '/^sizes/ { getline; print $1; exit }')
    expect_exit 2 "$ch zero size" "$bin" "$dim" 0
    expect_exit 2 "$ch negative size" "$bin" "$dim" -4
    expect_exit 2 "$ch non-numeric size" "$bin" "$dim" lots
    # A size far beyond any GPU's memory: bad usage (2) with a GPU, no GPU (3) without one.
    out=$("$bin" "$dim" 2^40 --iters 1 2>&1); rc=$?
    if [ $rc = 3 ]; then
        result PASS "cli: $ch without a GPU exits 3"
        # No driver at all must not read as "update your driver" (the runtime's own words).
        if [ ! -e /proc/driver/nvidia/version ]; then
            if echo "$out" | grep -q "no NVIDIA driver or GPU was found"; then
                result PASS "cli: $ch says plainly that no driver or GPU was found"
            else result FAIL "cli: $ch no-driver message: $(echo "$out" | tail -n 1)"; fi
        fi
    elif [ $rc = 2 ]; then
        result PASS "cli: $ch size beyond GPU memory exits 2"
    else
        result FAIL "cli: $ch huge size: exit $rc: $(echo "$out" | tail -n 1)"
    fi
    # The README chart from a measured CSV: no GPU needed; a missing file or no --plot is usage.
    expect_exit 2 "$ch --plot-from a missing file" "$bin" --plot-from /nonexistent.csv --plot "$BUILD/plot_test_$ch.svg"
    expect_exit 2 "$ch --plot-from without --plot" "$bin" --plot-from /nonexistent.csv
    # The README tables from a measured CSV (--table-from; no GPU): a missing file is usage.
    expect_exit 2 "$ch --table-from a missing file" "$bin" --table-from /nonexistent.csv
    for csv in "$ch"/measured/*.csv; do
        [ -f "$csv" ] || continue
        head -n 1 "$csv" | grep -q '^# run: ' && continue # a bundle of runs: no chart
        svg=$BUILD/plot_$ch.svg
        rm -f "$svg"
        if "$bin" --plot-from "$csv" --plot "$svg" >/dev/null 2>&1 && grep -q 'class="bar"' "$svg" &&
            tail -n 1 "$svg" | grep -q '</svg>'; then
            result PASS "cli: $ch --plot-from $csv draws a chart"
        else result FAIL "cli: $ch --plot-from $csv: no chart"; fi
        break
    done
    out=$("$bin" --kernel no_such_kernel 2>&1)
    first=$("$bin" --list | awk 'NR == 1 { print $1 }')
    if echo "$out" | grep -q "$first"; then result PASS "cli: $ch unknown kernel message lists the kernels"
    else result FAIL "cli: $ch unknown kernel message does not list the kernels: $out"; fi
    # The last row listed answers to --kernel too (in a binary of several tables, a row of the
    # last table): exit 0, 1 or 3, never 2 (on a GPU this runs that row at the --quick shapes).
    last=$("$bin" --list | awk '$2 != "exercise" { name = $1 } END { print name }')
    out=$("$bin" --test --quick --kernel "$last" 2>&1); rc=$?
    if [ $rc != 2 ]; then result PASS "cli: $ch --kernel $last (the last row listed) is accepted"
    else result FAIL "cli: $ch --kernel $last is refused: $(echo "$out" | tail -n 1)"; fi
}

# ---- make: the Makefile's answers to a slip -------------------------------------------------------
# The Makefile's answers to a slip, given before anything is built (make -n, or a scratch BUILD
# folder: these tests build nothing and leave build/ as it was). make runs without the MAKEFLAGS
# of the make test that runs this script, whose jobserver and variables are not its business;
# make test exports its NVCC, which the Makefile takes from the environment.
make_here() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make --no-print-directory "$@"; }
expect_make() { # want-exit pattern description make-arguments...: exit code and message
    local want=$1 pattern=$2 what=$3 out rc
    shift 3
    out=$(make_here "$@" 2>&1)
    rc=$?
    if [ "$rc" = "$want" ] && echo "$out" | grep -qE -- "$pattern"; then result PASS "make: $what"
    else result FAIL "make: $what: exit $rc (want $want), output lacks /$pattern/: $(echo "$out" | tail -n 2 | tr '\n' ' ')"; fi
}
group_make() { # the first chapter (make test CHAPTERS=08_flash_attn runs this on 08 alone)
    local first=$1 first_nn=${1%%_*} scratch stamped
    scratch=$(mktemp -d)
    # A typo in ARCH stops before build/arch.stamp is written (a rewritten stamp costs a rebuild of
    # every object at the next make), with the architectures this nvcc builds.
    echo all >"$scratch/arch.stamp"
    touch -d @1000000000 "$scratch/arch.stamp"
    expect_make 2 "ARCH=sm_99: .*sm_80 .*sm_90" "ARCH=sm_99 refused with the valid values" \
        -n BUILD="$scratch" ARCH=sm_99 all
    if [ "$(cat "$scratch/arch.stamp")" = all ] && [ "$(stat -c %Y "$scratch/arch.stamp")" = 1000000000 ]; then
        result PASS "make: ARCH=sm_99 leaves the arch stamp as it was"
    else result FAIL "make: ARCH=sm_99 rewrote the arch stamp: $(cat "$scratch/arch.stamp")"; fi
    # make help and make clean need no nvcc: they never check ARCH nor write the stamp.
    expect_make 0 "make run-NN" "make help with a wrong ARCH still answers" BUILD="$scratch" ARCH=sm_99 help
    expect_make 0 "" "make clean with a wrong ARCH still cleans" BUILD="$scratch" ARCH=sm_99 clean
    [ ! -e "$scratch" ] || result FAIL "make: make clean left $scratch"
    mkdir -p "$scratch"
    # A chapter number that does not exist: the forms that do, this run's first chapter among them
    # (make test CHAPTERS=08_flash_attn runs this script on 08 alone).
    expect_make 2 "no such chapter; the chapters are .*run-$first_nn \($first\)" "make run-9 lists the chapters" \
        BUILD="$scratch" run-9
    expect_make 2 "no such chapter; the chapters are .*check-$first_nn \($first\)" "make check-99 lists the chapters" \
        BUILD="$scratch" check-99
    # compare takes the stage's name: KERNEL=ex_NAME is answered with the right command.
    expect_make 2 "without ex_: make compare-$first_nn KERNEL=some_stage[^_a-z]" "make compare with an ex_ kernel names the stage" \
        BUILD="$scratch" compare-"$first_nn" KERNEL=ex_some_stage
    # KERNEL="a b" on run-NN and check-NN reaches the binary as --kernel a --kernel b (make -n on the
    # real build, with its own ARCH: nothing is built or run).
    stamped=$(cat "$BUILD/arch.stamp" 2>/dev/null)
    expect_make 0 "bin/$first --kernel ex_k1 --kernel k2 --iters 3" "make run-$first_nn KERNEL=\"ex_k1 k2\" passes both" \
        -n BUILD="$BUILD" ${stamped:+ARCH=$stamped} run-"$first_nn" KERNEL="ex_k1 k2" ARGS="--iters 3"
    expect_make 0 "bin/$first --check --kernel ex_k1" "make check-$first_nn KERNEL=ex_k1 passes it" \
        -n BUILD="$BUILD" ${stamped:+ARCH=$stamped} check-"$first_nn" KERNEL=ex_k1
    # A fresh clone (no build folder at all): make -n shows what make would do, writes nothing.
    rm -rf "$scratch"
    expect_make 0 "$first/kernels/.*\.cu" "make -n on a fresh clone shows the build" -n BUILD="$scratch" all
    [ ! -e "$scratch" ] || result FAIL "make: make -n on a fresh clone wrote $scratch"
    # make plots builds build/bin/from_csv and no chapter.
    out=$(make_here -n BUILD="$scratch" plots 2>&1)
    if echo "$out" | grep -q 'from_csv' && ! echo "$out" | grep -qE '(nvcc|NVCC).*/kernels/'; then
        result PASS "make: make plots builds the plot program and no chapter"
    else result FAIL "make: make plots on a fresh clone: $(echo "$out" | grep -m 2 -E 'kernels/|Error' | tr '\n' ' ')"; fi
    # make progress CHAPTERS=NN: that chapter's exercises alone (a scratch BUILD: nothing to compile).
    out=$(make_here BUILD="$scratch" CHAPTERS="$first_nn" progress 2>&1)
    if [ "$(echo "$out" | grep -cE '^[0-9][0-9]_')" = 1 ] && echo "$out" | head -n 1 | grep -qx "$first"; then
        result PASS "make: make progress CHAPTERS=$first_nn lists $first alone"
    else result FAIL "make: make progress CHAPTERS=$first_nn: $(echo "$out" | grep -E '^[0-9][0-9]_' | tr '\n' ' ')"; fi
    # CHAPTERS: a chapter by its folder or its number; a word that is neither is one clear line.
    expect_make 2 "CHAPTERS=09_x: no such chapter; the chapters are .*$first" "make test CHAPTERS=09_x lists the chapters" \
        BUILD="$scratch" CHAPTERS=09_x test
    expect_make 0 "bin/$first --check" "make check-$first_nn CHAPTERS=$first_nn takes the number" \
        -n BUILD="$BUILD" ${stamped:+ARCH=$stamped} CHAPTERS="$first_nn" check-"$first_nn"
    rm -rf "$scratch"
}
# ---- wrappers, sass-NN: the SASS -------------------------------------------------------------------
# The PTX wrappers (common/ptx/): tests/*_wrappers_sm90a.cu hold a kernel per wrapper, each after
# a line "// sass: KERNEL OPCODE...": the opcodes (prefixes) its sm_90a SASS must contain, so that
# no wrapper compiles to nothing.
group_wrappers() {
    local src cubin specs why kernel must ops bad op
    for src in tests/*_wrappers_sm90a.cu; do
        [ -f "$src" ] || continue
        cubin=$BUILD/tests/$(basename "$src" .cu).cubin
        specs=$(sed -n 's|^// sass: *||p' "$src")
        if [ -n "$SASS_TOOLS" ]; then
            while read -r kernel _; do sass_skip "ptx: $kernel"; done <<<"$specs"
            continue
        fi
        if [ ! -f "$cubin" ] || ! "$CUOBJDUMP" -sass "$cubin" >"$cubin.sass" 2>"$cubin.err"; then
            why="no SASS from $cubin: $(head -n 1 "$cubin.err" 2>/dev/null)"
            while read -r kernel _; do result SKIP "ptx: $kernel: $why"; done <<<"$specs"
            continue
        fi
        while read -r kernel must; do
            [ -n "$kernel" ] || continue
            ops=$(awk -v k="$kernel" '/Function : / { fn = $3 }
                  fn == k && /^[ \t]*\/\*[0-9a-f]+\*\// {
                      line = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
                      sub(/^@!?U?P[T0-9]+[ \t]+/, "", line)
                      split(line, tok, /[ \t;]+/); print tok[1] }' "$cubin.sass" | sort -u)
            if [ -z "$ops" ]; then result FAIL "ptx: $kernel: no such function in $cubin"; continue; fi
            bad=""
            for op in $must; do
                echo "$ops" | grep -qE "^${op//./\\.}(\\.|\$)" || bad="$bad missing $op;"
            done
            if [ -z "$bad" ]; then result PASS "ptx: $kernel has $must"
            else result FAIL "ptx: $kernel:$bad"; fi
        done <<<"$specs"
    done
}

# The rows of a --sass-spec judged against $BUILD/CHAPTER.sass: PASS and FAIL lines.
sass_rows() { # chapter spec
    local ch=$1 spec=$2
    # One line per opcode a function uses: arch, function, opcode (predicate stripped).
    awk '/^[ \t]*arch = / { arch = $3 }
         /Function : / { fn = $3 }
         /^[ \t]*\/\*[0-9a-f]+\*\// {
             line = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
             sub(/^@!?U?P[T0-9]+[ \t]+/, "", line)
             split(line, tok, /[ \t;]+/); print arch, fn, tok[1] }' \
        "$BUILD/$ch.sass" | sort -u >"$BUILD/$ch.ops"
    # Each row: the architectures of the functions its symbol matches, and for each, whether
    # every MUST prefix is among their opcodes and no MUST_NOT one is (a prefix ends at a '.').
    printf '%s\n' "$spec" | awk -F'\t' -v ch="$ch" '
        FNR == NR { n++; name[n] = $2; want[n] = $3; sym[n] = $4; must[n] = $5; mustnot[n] = $6; next }
        {
            split($0, f, " ")
            for (i = 1; i <= n; i++) {
                if (!index(f[2], sym[i]) || (want[i] != "all" && want[i] != f[1])) continue
                if (!((i, f[1]) in seen)) { seen[i, f[1]] = 1; archs[i] = archs[i] " " f[1] }
                op = f[3]
                has[i, f[1], op] = 1
                while (sub(/\.[^.]*$/, "", op)) has[i, f[1], op] = 1
            }
        }
        END {
            for (i = 1; i <= n; i++) {
                if (archs[i] == "") {
                    printf "FAIL sass: %s %s: no function matching '\''%s'\'' (%s)\n", ch, name[i], sym[i], want[i]
                    continue
                }
                na = split(substr(archs[i], 2), as, " ")
                # the architectures in order, as sort -u gave them
                for (x = 1; x <= na; x++) for (y = x + 1; y <= na; y++)
                    if (as[y] < as[x]) { t = as[x]; as[x] = as[y]; as[y] = t }
                for (x = 1; x <= na; x++) {
                    a = as[x]; bad = ""
                    k = split(must[i], m, " ")
                    for (j = 1; j <= k; j++) if (m[j] != "-" && !((i, a, m[j]) in has)) bad = bad " missing " m[j] ";"
                    k = split(mustnot[i], m, " ")
                    for (j = 1; j <= k; j++) if (m[j] != "-" && ((i, a, m[j]) in has)) bad = bad " has " m[j] ";"
                    if (bad == "") printf "PASS sass: %s %s %s\n", ch, name[i], a
                    else printf "FAIL sass: %s %s %s:%s\n", ch, name[i], a, bad
                }
            }
        }' - "$BUILD/$ch.ops"
}

# Each stage's row names the opcodes (prefixes) its SASS must and must not hold (--sass-spec:
# NAME ARCH SYMBOL MUST MUST_NOT); read with cuobjdump, every function whose name holds SYMBOL,
# for each architecture built (or the row's one). One awk pass over the opcodes that each
# function uses judges every row.
group_sass() { # chapter
    local ch=$1 bin spec lines rc got word rest
    bin=$BUILD/bin/$ch
    spec=$("$bin" --sass-spec)
    [ -n "$spec" ] || return 0
    if [ -n "$SASS_TOOLS" ]; then
        while IFS=$'\t' read -r _ name _; do sass_skip "sass: $ch $name"; done <<<"$spec"
        return 0
    fi
    # The stages' own objects (kernels/, and the chapter's other .cu files), not the whole binary:
    # nvdisasm costs about a quarter second a cubin, and the binary's other half is the exercises
    # and the harness's kernels, which no row's spec names. A row whose kernel is elsewhere (none
    # today) is looked up in the whole binary.
    local objs=() o
    for o in "$BUILD/$ch"/kernels/*.o "$BUILD/$ch"/*.o; do
        [ -f "$o" ] && [ "${o##*/}" != driver.o ] && objs+=("$o")
    done
    [ ${#objs[@]} -gt 0 ] || objs=("$bin")
    : >"$BUILD/$ch.sass"
    for o in "${objs[@]}"; do
        if ! "$CUOBJDUMP" -sass "$o" >>"$BUILD/$ch.sass" 2>"$BUILD/$ch.sass.err"; then
            why="cuobjdump failed on $o: $(head -n 1 "$BUILD/$ch.sass.err")"
            while IFS=$'\t' read -r _ name _; do result SKIP "sass: $ch $name: $why"; done <<<"$spec"
            return 0
        fi
    done
    sass_rows "$ch" "$spec" >"$BUILD/$ch.sass_rows"
    if grep -q ': no function matching' "$BUILD/$ch.sass_rows" && [ "${objs[0]}" != "$bin" ]; then
        "$CUOBJDUMP" -sass "$bin" >"$BUILD/$ch.sass" 2>"$BUILD/$ch.sass.err"
        sass_rows "$ch" "$spec" >"$BUILD/$ch.sass_rows"
    fi
    cat "$BUILD/$ch.sass_rows" >>"$RESULTS"
    # A chapter's own claims about its SASS that an opcode list cannot state (a count compared
    # between two kernels, say) live in NN_topic/sass_checks.sh BINARY SASS_FILE, which prints
    # PASS, FAIL or SKIP lines; a script that fails or prints nothing is a failure.
    if [ -f "$ch/sass_checks.sh" ]; then
        lines=$(bash "$ch/sass_checks.sh" "$bin" "$BUILD/$ch.sass" 2>&1)
        rc=$?
        got=0
        while read -r word rest; do
            case $word in PASS | FAIL | SKIP) result "$word" "sass: $ch $rest"; got=1 ;; esac
        done <<<"$lines"
        if [ $rc != 0 ] || [ $got = 0 ]; then
            result FAIL "sass: $ch sass_checks.sh (exit $rc): $(echo "$lines" | tail -n 1)"
        fi
    fi
    group_ptx "$ch"
}

# PTX beside the SASS: every generic kernel object carries the PTX of its newest architecture, so
# that a GPU newer than the build's list (Blackwell) compiles it at the first run; *_sm90a.cu
# objects carry sm_90a SASS alone (wgmma exists on no other GPU). One line per chapter (cuobjdump's
# listings: nvdisasm is not needed).
group_ptx() { # chapter
    local ch=$1 generic=0 with_ptx=0 hopper=0 hopper_ok=0 missing="" src obj
    if [ -z "$CUOBJDUMP" ]; then sass_skip "ptx: $ch: PTX beside the SASS"; return 0; fi
    for src in "$ch"/kernels/*.cu; do
        obj=$BUILD/$ch/kernels/$(basename "${src%.cu}").o
        [ -f "$obj" ] || { missing="$missing $obj"; continue; }
        if [[ $src == *_sm90a.cu ]]; then
            hopper=$((hopper + 1))
            "$CUOBJDUMP" --list-elf "$obj" 2>/dev/null | grep -q 'sm_90a\.cubin' &&
                ! "$CUOBJDUMP" --list-ptx "$obj" 2>/dev/null | grep -q '\.ptx' && hopper_ok=$((hopper_ok + 1))
        else
            generic=$((generic + 1))
            "$CUOBJDUMP" --list-ptx "$obj" 2>/dev/null | grep -q '\.ptx' && with_ptx=$((with_ptx + 1))
        fi
    done
    if [ -n "$missing" ]; then result FAIL "ptx: $ch: not built:$missing"
    elif [ $with_ptx = $generic ] && [ $hopper_ok = $hopper ]; then
        result PASS "ptx: $ch: $generic generic objects carry PTX, $hopper sm_90a objects SASS only"
    else result FAIL "ptx: $ch: $with_ptx of $generic generic objects carry PTX, $hopper_ok of $hopper sm_90a objects as built for sm_90a alone"; fi
}
# ---- docs-NN: figures, charts, the measured/ index ----------------------------------------------
# The lessons' figures are drawn by NN_topic/figures.sh: regenerated in a copy of the chapter
# (with common/svg.awk, the helpers they share), they must equal the committed figures/*.svg (a
# figure that drifted from its script, or a script that no longer runs, fails here).
group_figures() { # chapter
    local ch=$1 tmp
    [ -f "$ch/figures.sh" ] || return 0
    tmp=$(mktemp -d)
    cp -r "$ch" "$tmp/"
    mkdir -p "$tmp/common" && cp common/svg.awk "$tmp/common/"
    rm -rf "$tmp/$ch/figures"
    if ! bash "$tmp/$ch/figures.sh" >/dev/null 2>"$tmp/err"; then
        result FAIL "figures: $ch/figures.sh failed: $(tail -n 1 "$tmp/err")"
    elif diff -r -q "$ch/figures" "$tmp/$ch/figures" >"$tmp/diff" 2>&1; then
        result PASS "figures: $ch/figures.sh reproduces $(ls "$ch/figures" | wc -l) figures"
    else
        result FAIL "figures: $ch/figures differ from what figures.sh draws: $(head -n 1 "$tmp/diff")"
    fi
    rm -rf "$tmp"
}

# make plots (common/plots.sh) draws exactly the charts the READMEs show. Drawn here into a scratch
# folder, each must equal its committed file byte for byte (the chart and its CSV agree, so make
# plots changes nothing) and be tracked by git (so make plots leaves no untracked file), and
# nothing else may be drawn.
group_plots() { # chapter
    local ch=$1 charts tmp svg extra
    charts=$(bash common/plots.sh --list "$ch")
    [ -n "$charts" ] || return 0
    tmp=$(mktemp -d)
    if ! FROM_CSV=$FROM_CSV bash common/plots.sh --out "$tmp" "$ch" >/dev/null 2>"$tmp/err"; then
        result FAIL "plots: $ch: common/plots.sh failed: $(tail -n 1 "$tmp/err")"
        rm -rf "$tmp"
        return 0
    fi
    for svg in $charts; do
        if [ ! -f "$svg" ]; then result FAIL "plots: $ch/README.md shows $svg, which is not there"
        elif ! cmp -s "$svg" "$tmp/$svg"; then
            result FAIL "plots: $svg differs from what make plots draws from ${svg%.svg}.csv"
        elif [ $in_git = 1 ] && ! git ls-files --error-unmatch "$svg" >/dev/null 2>&1; then
            result FAIL "plots: $svg is drawn but not tracked by git"
        else result PASS "plots: $svg is what make plots draws"; fi
    done
    extra=$(cd "$tmp" && find "$ch" -type f | sort | comm -23 - <(echo "$charts" | sort))
    if [ -z "$extra" ]; then result PASS "plots: $ch: make plots draws only the charts its README shows"
    else result FAIL "plots: $ch: make plots draws charts its README does not show: $(echo $extra)"; fi
    rm -rf "$tmp"
}

# Each chapter's measured/README.md names every file of measured/ ("- NAME, NAME.{csv,md}: what
# it is", a folder as "DIR/"), and every name it gives exists.
group_measured_index() { # chapter
    local ch=$1 index names bad unnamed n rel hit d f
    index=$ch/measured/README.md
    [ -d "$ch/measured" ] || return 0
    if [ ! -f "$index" ]; then result FAIL "measured: $ch/measured has no README.md index"; return 0; fi
    names=$(sed -n 's/^- \([^:]*\): .*/\1/p' "$index" | tr -d '`' | sed 's/, /\n/g' |
        while read -r n; do # NAME.{csv,md}: both names
            if [[ $n =~ ^(.*)\{([^}]*)\}(.*)$ ]]; then
                IFS=, read -ra alts <<<"${BASH_REMATCH[2]}"
                for a in "${alts[@]}"; do echo "${BASH_REMATCH[1]}$a${BASH_REMATCH[3]}"; done
            else echo "$n"; fi
        done)
    bad=""
    while read -r n; do
        [ -n "$n" ] && [ ! -e "$ch/measured/$n" ] && bad="$bad $n"
    done <<<"$names"
    unnamed=""
    while read -r f; do
        rel=${f#"$ch/measured/"}
        hit=0
        grep -qxF "$rel" <<<"$names" && hit=1
        d=$rel
        while [ $hit = 0 ] && [[ $d == */* ]]; do
            d=${d%/*}
            grep -qxF "$d/" <<<"$names" && hit=1
        done
        [ $hit = 1 ] || unnamed="$unnamed $rel"
    done < <(find "$ch/measured" -type f ! -path "$index" | sort)
    if [ -z "$bad$unnamed" ]; then result PASS "measured: $index names every file of $ch/measured"
    else result FAIL "measured: $index:${bad:+ names missing files$bad;}${unnamed:+ does not name$unnamed}"; fi
}

group_docs() { # chapter
    group_figures "$1"
    group_plots "$1"
    group_measured_index "$1"
}

# ---- documents: README tables, links, measured/ --------------------------------------------------
group_documents() { # chapters...
    local readmes=(README.md) notes=() ch readme out rc drift dir missing n path
    for ch in "$@"; do readmes+=("$ch/README.md"); [ -f "$ch/NOTES.md" ] && notes+=("$ch/NOTES.md"); done
    # The README tables (common/readme_tables.sh): every block between <!-- table: ... --> markers
    # must be what --table-from prints from its CSV now (make tables rewrites them), in the top README
    # and in each chapter's; a block that drifted from its CSV must be caught (a copy of the first
    # README with a block, one cell changed).
    for readme in "${readmes[@]}" ${notes[@]+"${notes[@]}"}; do
        out=$(bash common/readme_tables.sh --check "$FROM_CSV" "$readme" 2>&1)
        rc=$?
        if [ $rc = 0 ]; then result PASS "tables: $out"
        else
            result FAIL "tables: $readme differs from its CSVs (make tables; exit $rc): $(echo "$out" | grep -m 3 '^  [-+]|' | tr '\n' ' ')"
            echo "$out" >>"$GROUP_LOG"
        fi
    done
    for readme in "${readmes[@]}"; do
        grep -q '^<!-- table: ' "$readme" || continue
        drift=$(mktemp)
        awk '/^<!-- table: / { block = 1 } block && /^\| --- / { sep = 1; print; next }
             sep && !done && /^\| / { sub(/ \|$/, "1 |"); done = 1 } { print }' "$readme" >"$drift"
        bash common/readme_tables.sh --check --base "$(dirname "$readme")" "$FROM_CSV" "$drift" >/dev/null 2>&1
        rc=$?
        if [ $rc = 1 ]; then result PASS "tables: a cell changed in a block of $readme is caught"
        else result FAIL "tables: a cell changed in a block of $readme: the check exited $rc, want 1"; fi
        rm -f "$drift"
        break
    done
    # An option after BINARY is refused, not taken for a README to write (it once left a file
    # named --check at the root).
    dir=$(mktemp -d)
    (cd "$dir" && bash "$OLDPWD/common/readme_tables.sh" "$OLDPWD/$FROM_CSV" --check "$OLDPWD/README.md" >/dev/null 2>&1)
    rc=$?
    if [ $rc = 2 ] && [ -z "$(ls -A "$dir")" ]; then result PASS "tables: an option after BINARY is refused (exit 2), nothing written"
    else result FAIL "tables: readme_tables.sh BINARY --check README: exit $rc, wrote: $(ls -A "$dir")"; fi
    rm -rf "$dir"
    # Every measured/ file that a README (or a chapter's NOTES.md, its tuning history) links
    # (](...measured/...)) or names (measured/NAME.md, .csv, .svg, .txt, .gz; from its folder or the
    # top) exists: measured/ keeps what the lessons cite, and older runs live in git history (a
    # path after a commit, `git show f22a6c9:PATH`, names a file of that commit: not checked here).
    for readme in "${readmes[@]}" ${notes[@]+"${notes[@]}"}; do
        dir=$(dirname "$readme")
        missing=""
        n=0
        while read -r path; do
            [ -n "$path" ] || continue
            case $path in *NN_topic* | *'*'*) continue ;; esac
            n=$((n + 1))
            [ -e "$dir/$path" ] || [ -e "$path" ] || missing="$missing $path" # named from the top
        done < <(text=$(sed -E 's/[0-9a-f]{7,40}:[^ )`]*//g' "$readme")
                 { grep -oE '\]\([^)#]*measured/[^)#]*' <<<"$text" | sed 's/^](//'
                   grep -oE '[A-Za-z0-9_./-]*measured/[A-Za-z0-9_./-]*\.(md|csv|svg|txt|gz)' <<<"$text"; } | sort -u)
        if [ -z "$missing" ]; then result PASS "links: the $n measured/ paths $readme cites exist"
        else result FAIL "links: $readme cites measured/ paths that do not exist:$missing"; fi
    done
    # Every relative link of every Markdown file resolves; measured/ holds at most 150 files, each
    # cited by a lesson or its notes (tests/docs_check.sh); and the link check can fail: a copy of
    # the top README with a link broken must be caught.
    bash tests/docs_check.sh >>"$RESULTS" 2>>"$GROUP_LOG"
    # (The copy sits beside README.md, so that its other links resolve as the README's do.)
    drift=.links_check_copy.md
    sed 's|](docs/design.md)|](docs/no_such_page.md)|' README.md >"$drift"
    out=$(bash tests/docs_check.sh "$drift")
    rm -f "$drift"
    if [ "$(echo "$out" | grep -c '^FAIL')" = 1 ] && [ "$(echo "$out" | grep -o 'no_such_page.md (no' | wc -l)" -ge 1 ] &&
        [ "$(echo "$out" | grep -o ' (no ' | wc -l)" = "$(echo "$out" | grep -o 'no_such_page.md (no' | wc -l)" ]; then
        result PASS "links: a broken link in a copy of README.md is caught, and only it"
    else result FAIL "links: a copy of README.md with a broken link: $(echo "$out" | head -c 300)"; fi
    # ... and a measured number typed into a README's table by hand is caught (a copy of 04's,
    # or of the first chapter's, with cuBLAS's time typed in a row of its own).
    local with_hand=$GROUP_DIR/hand_table_README.md src=04_sgemm/README.md
    [ -f "$src" ] || src=$1/README.md
    awk '/^<!-- table: / { block = 1 } /^<!-- \/table -->/ { block = 0 }
         { print } /^\| --- / && !block && !done { print "| cublas | 2.70 ms |"; done = 1 }' "$src" >"$with_hand"
    if bash tests/docs_check.sh --tables "$with_hand" | grep -q '^FAIL tables'; then
        result PASS "tables: a time typed by hand into a table of a copy of $src is caught"
    else result FAIL "tables: a time typed by hand into a copy of $src passed the check"; fi
    rm -f "$with_hand"
}

# ---- ab.list -------------------------------------------------------------------------------------
# A chapter's ab.list (common/ab.sh, docs/design.md "Layout"): names unique, each FILE a file of
# the chapter, each macro of DEFINES one that FILE or a header of the chapter tests (#if defined),
# and every switch a stage file tests measured by some line. A switch that no stage reads would
# build a variant identical to its stage and measure noise as an idea's share.
ab_list_problems() { # DIR (a chapter, or a copy of one): prints the problems, nothing if none
    local ch=$1 bad="" names=" " used=" " name file defines rest d m
    while read -r name file defines rest; do
        [[ -z ${name:-} || $name == \#* ]] && continue
        [[ $names == *" $name "* ]] && bad="$bad; $name twice"
        names="$names$name "
        [ -n "${rest:-}" ] || bad="$bad; $name: no arguments"
        [ "$file" = - ] && continue
        [ -f "$ch/$file" ] || { bad="$bad; $name: no $ch/$file"; continue; }
        [ "$defines" = - ] && { bad="$bad; $name: a FILE with no DEFINES"; continue; }
        for d in ${defines//,/ }; do
            m=${d#-D}; m=${m%%=*}
            used="$used$m "
            grep -qE "defined\($m\)" "$ch/$file" "$ch"/*.cuh "$ch"/*.h 2>/dev/null ||
                bad="$bad; $name: $m is tested nowhere in $ch/$file or $ch's headers"
        done
    done <"$ch/ab.list"
    for m in $(grep -ohE 'defined\([A-Z0-9]+_AB_[A-Z0-9_]+\)' "$ch"/kernels/*.cu "$ch"/*.cuh 2>/dev/null |
               sed 's/defined(\(.*\))/\1/' | sort -u); do
        [[ $used == *" $m "* ]] || bad="$bad; switch $m is in no line"
    done
    echo "${bad#; }"
}
group_ablist() { # chapters...
    local ch n bad neg first switch
    for ch in "$@"; do
        [ -f "$ch/ab.list" ] || continue
        n=$(grep -cvE '^[[:space:]]*(#|$)' "$ch/ab.list")
        bad=$(ab_list_problems "$ch")
        if [ -z "$bad" ]; then result PASS "ab.list: $ch/ab.list's $n variants name their files and switches"
        else result FAIL "ab.list: $ch/ab.list: $bad"; fi
    done
    # ... and it can fail: a copy of the first such chapter's list and stage files, with a line
    # repeated and a switch renamed in one line, must give both problems.
    for ch in "$@"; do
        [ -f "$ch/ab.list" ] || continue
        neg=$BUILD/ab_list_negative/$ch
        rm -rf "$neg" && mkdir -p "$neg/kernels" && cp "$ch"/kernels/*.cu "$neg/kernels/" &&
            cp "$ch"/*.cuh "$ch"/*.h "$neg/" 2>/dev/null
        first=$(grep -vE '^[[:space:]]*(#|$)' "$ch/ab.list" | awk '$2 != "-"' | head -n 1)
        switch=$(awk '{print $3}' <<<"$first" | cut -d, -f1 | sed 's/^-D//; s/=.*//')
        { cat "$ch/ab.list"; echo "$first" | sed "s/$switch/${switch}_RENAMED/"; } >"$neg/ab.list"
        bad=$(ab_list_problems "$neg")
        if [[ $bad == *twice* && $bad == *"${switch}_RENAMED is tested nowhere"* ]]; then
            result PASS "ab.list: a repeated line and an unknown switch in a copy of $ch/ab.list are caught"
        else result FAIL "ab.list: a broken copy of $ch/ab.list passed the check (got: ${bad:-nothing})"; fi
        rm -rf "$BUILD/ab_list_negative"
        break
    done
}

# ---- profile_ladder.sh ---------------------------------------------------------------------------
# Each chapter's profile_ladder.sh (GPU: the stages' bottlenecks, common/profile.sh) names rows the
# binary has, and profiles every stage but the last (a section opens with the stage before's
# profile). Read without a GPU: PROFILE_DRY_RUN=1 makes profile.sh print its rows and stop.
group_profile_ladder() { # chapters...
    local ch list rows missing unknown n
    for ch in "$@"; do
        [ -f "$ch/profile_ladder.sh" ] || continue
        list=$("$BUILD/bin/$ch" --list 2>/dev/null)
        rows=$(PROFILE_DRY_RUN=1 BUILD=$BUILD bash "$ch/profile_ladder.sh" "$BUILD/profile_dry" 2>&1 | cut -f1)
        n=$(echo "$rows" | grep -c .)
        unknown=$(for r in $rows; do echo "$list" | awk -v r="$r" '$1 == r { f = 1 } END { exit !f }' || echo "$r"; done | tr '\n' ' ')
        # stage numbers from the descriptions ("7: ..."), each but the last needs a row profiled
        missing=
        [ "$ch" = 07_fp8_gemm ] || missing=$(echo "$list" | awk '$2 == "stage" { split($4, a, ":"); print a[1], $1 }' |
            awk -v rows=" $(echo $rows) " 'NR > 0 { k = $1; last = k; if (index(rows, " " $2 " ")) have[k] = 1; seen[k] = 1 }
                END { for (k in seen) if (k != last && !have[k]) printf "%s ", k }')
        if [ "$n" -gt 0 ] && [ -z "$unknown" ] && [ -z "$missing" ]; then
            result PASS "profile: $ch/profile_ladder.sh profiles $n rows, every stage but the last"
        else result FAIL "profile: $ch/profile_ladder.sh: ${unknown:+rows the binary lacks: $unknown}${missing:+stages not profiled: $missing}${n/#0/no rows}"; fi
    done
}

# ---- compare -------------------------------------------------------------------------------------
group_compare() { # the first chapter
    local first_ch=$1 fixture out occ rc stage
    # make compare-NN's static columns (common/compare.sh) on two kernels that differ on purpose
    # (tests/compare_fixture_sm90a.cu): 128-bit loads in one, local memory in the other.
    fixture=$BUILD/tests/compare_fixture_sm90a.cubin
    if [ -n "$SASS_TOOLS" ]; then
        sass_skip "compare: the static columns of two fixture kernels"
    elif [ ! -f "$fixture" ]; then
        result FAIL "compare: $fixture not built"
    else
        out=$(bash common/compare.sh --objects "$fixture" copy_vec4 "$fixture" copy_spilled LDG.E.128 2>&1)
        if echo "$out" | grep -Eq '^ +LDG\.E\.128 +1 +0$'; then result PASS "compare: counts LDG.E.128 in one kernel and not the other"
        else result FAIL "compare: LDG.E.128 row: $(echo "$out" | grep LDG | head -n 1)"; fi
        if echo "$out" | grep -q "yours uses local memory"; then result PASS "compare: names the local memory of the spilling kernel"
        else result FAIL "compare: no local-memory hint for copy_spilled"; fi
        out=$(bash common/compare.sh --objects "$fixture" copy_vec4 "$fixture" copy_vec4 LDG.E.128 2>&1)
        if echo "$out" | grep -q "none: the code looks alike"; then result PASS "compare: a kernel against itself gets no hint"
        else result FAIL "compare: a kernel against itself: $(echo "$out" | grep -A3 hints: | tail -n 3 | tr '\n' ' ')"; fi
    fi
    # compare's occupancy rows come from Nsight Compute's text report: parse a saved one (no GPU).
    occ=$(bash common/compare.sh --occupancy-from tests/ncu_occupancy_sample.txt)
    if [ "$(echo "$occ" | wc -l)" = 8 ] && echo "$occ" | grep -q $'^Theoretical Occupancy\t18.75$' &&
        echo "$occ" | grep -q $'^Block Limit Registers\t1$' && ! echo "$occ" | grep -q Cluster; then
        result PASS "compare: reads the 8 occupancy rows of a saved Nsight Compute report"
    else result FAIL "compare: occupancy rows: $(echo "$occ" | tr '\t\n' '= ')"; fi
    out=$(BUILD=$BUILD bash common/compare.sh "$first_ch" no_such_kernel 2>&1); rc=$?
    if [ $rc = 2 ] && echo "$out" | grep -q "no stage"; then result PASS "compare: an unknown kernel is bad usage (2)"
    else result FAIL "compare: unknown kernel: exit $rc: $out"; fi
    # compare takes the stage's name; an exercise's name is answered with the stage's (no cuobjdump needed).
    stage=$("$BUILD/bin/$first_ch" --sass-spec | awk -F'\t' 'NR == 1 { print $2 }')
    out=$(BUILD=$BUILD bash common/compare.sh "$first_ch" "ex_$stage" 2>&1); rc=$?
    if [ $rc = 2 ] && echo "$out" | grep -q "KERNEL=$stage)"; then result PASS "compare: ex_$stage is answered with the stage's name"
    else result FAIL "compare: ex_$stage: exit $rc: $out"; fi
}
# ---- progress: make progress, make next, make diff-NN --------------------------------------------
# In a copy of the sources (and of the first chapter's build, so that only what the test changes
# is compiled): every exercise TODO and the first one next; the first exercise solved by copying
# its stage shows written (PASS on a GPU) and next moves on; broken by one (an off-by-one bound),
# FAIL on a GPU and next stays on it; make diff-NN prints a stage's change with what it shares
# folded; an unknown chapter or stage gets one line with the valid ones.
group_progress() { # chapters...
    local first=$1 copy out n files k1 f1 stage1 with_gpu=0 runs longest
    copy=$(mktemp -d)
    tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$copy"
    mkdir -p "$copy/build"
    cp -a "$BUILD/arch.stamp" "$BUILD/common" "$copy/build/" 2>/dev/null
    cp -a "$BUILD/$first" "$copy/build/" 2>/dev/null
    mkdir -p "$copy/build/bin" && cp -a "$BUILD/bin/$first" "$copy/build/bin/" 2>/dev/null
    [ $gpu_present = 1 ] && with_gpu=1
    progress() { (cd "$copy" && BUILD=build bash common/progress.sh "$@" 2>&1); }
    out=$(progress progress "$@")
    files=$(cd "$copy" && for ch in "$@"; do ls "$ch"/exercises/*.cu; done | wc -l)
    n=$(echo "$out" | grep -cE '^ +[0-9]+ [a-z0-9_]+ +TODO ')
    if [ "$n" = "$files" ] && echo "$out" | tail -n 1 | grep -q "^0 of $files exercises passed; next: $first exercise 1,"; then
        result PASS "progress: a fresh tree shows all $files exercises TODO, and $first's first as next"
    else result FAIL "progress: a fresh tree: $n of $files TODO; last line: $(echo "$out" | tail -n 1)"; fi
    out=$(progress next "$@")
    f1=$(cd "$copy" && ls "$first"/exercises/*.cu | head -n 1)
    if echo "$out" | grep -q "^Next: $first, exercise 1 " && echo "$out" | grep -q "edit: *$f1\$" &&
        echo "$out" | grep -q "read: *$first/README.md#"; then
        result PASS "progress: make next on a fresh tree names $f1, its section and its check"
    else result FAIL "progress: make next on a fresh tree: $(echo "$out" | head -n 3 | tr '\n' ' ')"; fi
    # The first exercise solved: its stage, compiled as the exercise.
    stage1=$(cd "$copy" && ls "$first"/kernels/"$(basename "$f1")")
    { echo '#define STAGE_AS_EXERCISE'; cat "$copy/$stage1"; } >"$copy/$f1"
    out=$(progress progress "$first")
    local want=written
    [ $with_gpu = 1 ] && want=PASS
    if echo "$out" | grep -qE "^ +1 [a-z0-9_]+ +$want " && progress next "$first" | grep -q "^Next: $first, exercise 2 "; then
        result PASS "progress: the first exercise solved shows $want, and next moves to exercise 2"
    else result FAIL "progress: the first exercise solved: $(echo "$out" | sed -n 2p); next: $(progress next "$first" | head -n 1)"; fi
    # ... and broken by one: every "< n" bound in it made "< n - 1".
    cp "$copy/$f1" "$copy/solved.cu"
    sed -i 's/< n)/< n - 1)/; s/< n;/< n - 1;/' "$copy/$f1"
    if cmp -s "$copy/$f1" "$copy/solved.cu"; then
        result SKIP "progress: an exercise broken by one shows FAIL: $stage1 has no '< n' bound to break"
    elif [ $with_gpu = 1 ]; then
        out=$(progress progress "$first")
        if echo "$out" | grep -qE "^ +1 [a-z0-9_]+ +FAIL " && progress next "$first" | grep -q "^Next: $first, exercise 1 "; then
            result PASS "progress: the first exercise broken by one shows FAIL, and next stays on it"
        else result FAIL "progress: the first exercise broken by one: $(echo "$out" | sed -n 2p)"; fi
    else result SKIP "progress: an exercise broken by one shows FAIL: no GPU"; fi
    rm -rf "$copy"
    # make diff-NN STAGE=k: the chapter with the most stages, its last stage against the one before.
    local ch=07_fp8_gemm k=10
    case " $* " in *" $ch "*) ;; *) ch=$first k=2 ;; esac
    out=$(bash common/progress.sh diff "$ch" "$k")
    # no run of shared lines longer than the 3 of context on each side of a change
    longest=$(echo "$out" | awk '/^ / { run++; if (run > max) max = run; next } { run = 0 } END { print max + 0 }')
    if echo "$out" | grep -q '^+' && echo "$out" | grep -q 'lines* the same in both' && [ "$longest" -le 6 ]; then
        result PASS "progress: make diff-${ch%%_*} STAGE=$k shows the change, what it shares folded (runs of at most $longest)"
    else result FAIL "progress: make diff-${ch%%_*} STAGE=$k: longest run of shared lines $longest: $(echo "$out" | head -n 2 | tr '\n' ' ')"; fi
    out=$(bash common/progress.sh diff "$ch" 99 2>&1); rc=$?
    if [ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "stages 1-"; then
        result PASS "progress: an unknown stage gets one line with the valid ones"
    else result FAIL "progress: diff STAGE=99: exit $rc: $out"; fi
    out=$(bash common/progress.sh diff 99 1 2>&1); rc=$?
    if [ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "diff-${first%%_*}"; then
        result PASS "progress: an unknown chapter gets one line with the valid ones"
    else result FAIL "progress: diff of chapter 99: exit $rc: $out"; fi
    out=$(bash common/progress.sh progress 99 2>&1); rc=$?
    if [ $rc = 2 ] && echo "$out" | grep -q "$first"; then result PASS "progress: make progress CHAPTERS=99 names the chapters"
    else result FAIL "progress: progress 99: exit $rc: $out"; fi
}

# ---- gpu: every kernel at the test shapes, and more --------------------------------------------
gpu_tests() { # mode-label binary args...: reads TEST lines
    local label=$1
    shift
    local word chapter name shape rest rc note=${FORCED:-}
    "$@" >"$RESULTS.out" 2>>"$GROUP_LOG"
    rc=$?
    while read -r tag word chapter name shape rest; do
        [ "$tag" = TEST ] || continue
        local what="gpu: $chapter $name $shape${rest:+ ($rest)}${note:+ [$note]}"
        case "$label:$word:$name" in
        *:SKIP:*) result SKIP "$what" ;;
        *:PASS:*) result PASS "$what" ;;
        # A library row less exact than our bound: reported with its error, not a failure
        *:INEXACT:*) result PASS "$what (the library's own error, reported as inexact)" ;;
        skeleton:TODO:ex_*) result PASS "$what reports TODO" ;;
        solved:TODO:*) result FAIL "$what: the substituted stage reported TODO" ;;
        *) result FAIL "$what" ;;
        esac
    done <"$RESULTS.out"
    # 0: all passed, 1: a kernel failed (its FAIL lines are counted), 3: no GPU (SKIP lines).
    # Anything else (a crash, an abort) is a failure of its own.
    case $rc in 0 | 1 | 3) ;; *) result FAIL "gpu: $* exited $rc" ;; esac
}
# Random shapes, as a learner might pick them (a fixed seed, so a failure reproduces): every row
# of the GEMM chapters, each checked against the exact product, and of chapter 08. One run of
# the chapter binary per chapter; each size is step * (1 + a draw below max / step).
random_shapes() { # count seed name:max:step...: prints "--name a,b,... --name ..."
    local count=$1 seed=$2
    shift 2
    awk -v count="$count" -v seed="$seed" -v spec="$*" 'BEGIN {
        nd = split(spec, dims, " ")
        x = seed
        for (i = 0; i < count; i++)
            for (d = 1; d <= nd; d++) {
                split(dims[d], f, ":")
                # the Park-Miller generator: every product stays exact in the doubles of awk
                x = (x * 16807) % 2147483647
                v[i, d] = f[3] * (1 + x % int(f[2] / f[3]))
            }
        for (d = 1; d <= nd; d++) {
            split(dims[d], f, ":")
            printf "%s--%s ", (d > 1 ? " " : ""), f[1]
            for (i = 0; i < count; i++) printf "%s%d", i ? "," : "", v[i, d]
        }
        print ""
    }'
}
group_gpu() { # lane chapters...: lane 1 also runs the harness's GPU programs
    local ch bin exercises n line kernels vars values picks k var fixed v count dims modes exempt mode what rows passed_rows failed_rows out rc
    [ "$1" = 1 ] && group_harness_gpu
    shift
    [ $# -gt 0 ] || return 0
    for ch in "$@"; do
        bin=$BUILD/bin/$ch
        gpu_tests skeleton "$bin" --test
        # The exercises built with the reference stages substituted (only built on a GPU machine).
        exercises=$("$bin" --list | awk '$2 == "exercise" { printf "--kernel %s ", $1 }')
        if [ -n "$exercises" ]; then
            if [ $gpu_present = 1 ] && [ -x "$bin.solved" ]; then
                gpu_tests solved "$bin.solved" --test $exercises
            elif [ $gpu_present = 1 ]; then
                result FAIL "gpu: $ch solved exercises: $bin.solved was not built"
            else
                n=$("$bin" --test $exercises 2>/dev/null | grep -c '^TEST')
                for _ in $(seq 1 "$n"); do result SKIP "gpu: $ch solved exercises: no GPU"; done
            fi
        fi
    done
    # Kernels that pick their configuration by size run at the test shapes once more with each
    # configuration forced (its environment variable), so that every configuration meets the odd
    # shapes, not only the one the rule picks there: chapter, kernels, variable, values. The
    # variable may follow settings that hold for the whole line, comma-separated NAME=VALUE
    # (06's 2x2 clusters: each tile forced again with GEMM06_FINAL_CLUSTER=2x2; 07's 64 x 128 and
    # 128 x 128 tiles alone and in pairs at every shape, whatever M, and the 64 x 128 tile's K split
    # in 2 and 3 at every shape, the tile alone and in pairs; 07's stages 9-13 read the same
    # variables, each stage's tiles forced in it and in the stages after it).
    forced_configs=(
        "04_sgemm tuned SGEMM_CONFIG 4 7 10 20"
        "06_wgmma_tma final GEMM06_FINAL_TILE 128x256 128x128 64x128"
        "06_wgmma_tma final GEMM06_FINAL_CLUSTER=2x2,GEMM06_FINAL_TILE 128x256 128x128 64x128"
        "07_fp8_gemm final_tensor,final_block GEMM07_FINAL_TILE 256x128a 128x128 64x128"
        "07_fp8_gemm final_tensor,final_block GEMM07_FINAL_TILE 128x144 128x192 64x64 64x32 64x16"
        "07_fp8_gemm final_tensor,final_block,tiles GEMM07_FINAL_TILE=64x128,GEMM07_FINAL_CLUSTER 1 2"
        "07_fp8_gemm final_tensor,final_block,tiles GEMM07_FINAL_TILE=128x128,GEMM07_FINAL_CLUSTER 1 2"
        "07_fp8_gemm final_tensor,final_block,tiles GEMM07_FINAL_TILE=64x128,GEMM07_FINAL_CLUSTER=2,GEMM07_FINAL_SPLIT 2 3"
        "07_fp8_gemm final_tensor,final_block,tiles GEMM07_FINAL_TILE=64x128,GEMM07_FINAL_CLUSTER=1,GEMM07_FINAL_SPLIT 2 3"
        "07_fp8_gemm wide,narrow,fitted GEMM07_FINAL_TILE 256x128a"
        "07_fp8_gemm narrow,fitted GEMM07_FINAL_TILE 64x64 64x32 64x16"
        "07_fp8_gemm fitted GEMM07_FINAL_TILE 128x144 128x192"
    )
    for line in "${forced_configs[@]}"; do
        read -r ch kernels vars values <<<"$line"
        case " $* " in *" $ch "*) ;; *) continue ;; esac
        picks=""
        for k in ${kernels//,/ }; do picks="$picks --kernel $k"; done
        var=${vars##*,} # the variable forced to each value; before it, the line's own settings
        fixed=()
        [ "$var" = "$vars" ] || IFS=, read -ra fixed <<<"${vars%,*}"
        for v in $values; do
            FORCED="${fixed[*]:+${fixed[*]} }$var=$v" gpu_tests skeleton \
                env "${fixed[@]}" "$var=$v" "$BUILD/bin/$ch" --test $picks
        done
    done

    # 04's sweep configurations are in the sweep build alone (make SGEMM_SWEEP=1): forced in a
    # plain build, the row is unsupported and its reason names that make.
    case " $* " in *" 04_sgemm "*)
        if [ "$(cat "$BUILD/04_sgemm/sweep.stamp" 2>/dev/null)" = 1 ]; then
            result SKIP "gpu: 04_sgemm SGEMM_CONFIG=12 in a plain build: this is the sweep build"
        elif [ $gpu_present = 0 ]; then
            result SKIP "gpu: 04_sgemm SGEMM_CONFIG=12 in a plain build: no GPU"
        else
            out=$(SGEMM_CONFIG=12 "$BUILD/bin/04_sgemm" --test --quick --kernel tuned 2>&1)
            if echo "$out" | grep -q "SGEMM_CONFIG=12 .*make SGEMM_SWEEP=1"; then
                result PASS "gpu: 04_sgemm SGEMM_CONFIG=12 in a plain build says to make SGEMM_SWEEP=1"
            else result FAIL "gpu: 04_sgemm SGEMM_CONFIG=12 in a plain build: $(echo "$out" | grep -m1 tuned)"; fi
        fi ;;
    esac

    random_cases=("04_sgemm 30 m:3000:1 n:3000:1 k:4500:1" "05_hgemm_mma 30 m:3000:1 n:3000:1 k:4500:8"
                  "06_wgmma_tma 30 m:3000:1 n:3000:1 k:4500:8" "07_fp8_gemm 30 m:3000:1 n:3000:1 k:4500:16"
                  "08_flash_attn 12 b:4:1 h:16:1 n:3000:1 d:128:64")
    for line in "${random_cases[@]}"; do
        read -r ch count dims <<<"$line"
        case " $* " in *" $ch "*) ;; *) continue ;; esac
        FORCED="random shapes" gpu_tests skeleton "$BUILD/bin/$ch" --test --seed 29 \
            $(random_shapes "$count" 2911 $dims)
    done

    # A deliberately wrong output must fail: GEMM_CHECK_PERTURB (common/gemm_ref.h, gemm_check)
    # adds one typical product to the entry nearest zero ("term"), or two units in the last place
    # of the output type to the largest entry ("ulp2": what rounding a partial sum to 16 bits
    # gives), in every row's output before the comparison. At the --quick shapes every checked row
    # must then fail (a library row may say inexact instead), and the binary exit 1. Rows whose
    # own arithmetic is allowed that much error are named after the modes and left out: 05's fp16
    # accumulation (its sums lose more than two fp16 units; and its bound, 8 u sqrt(K/16 + 1) of the
    # spread, is one typical term's 1/sqrt(K) at K = 1000, so the kernel's own rounding can hide the
    # added term: it passed once so on an H100), 07's stage 2 (the tensor core's short accumulator
    # over the whole K loop: 2^-4 of the entry).
    perturb_cases=("04_sgemm term" "05_hgemm_mma term f16_accum" "05_hgemm_mma ulp2 f16_accum"
                   "06_wgmma_tma term ulp2" "07_fp8_gemm term ulp2 tensor_scaled")
    for line in "${perturb_cases[@]}"; do
        read -r ch modes <<<"$line"
        case " $* " in *" $ch "*) ;; *) continue ;; esac
        exempt=" quantize_tensor quantize_1x128 quantize_128x128 memcpy "
        for mode in $modes; do
            case $mode in term | ulp2) ;; *) exempt="$exempt$mode " ;; esac
        done
        for mode in $modes; do
            case $mode in term | ulp2) ;; *) continue ;; esac
            what="wrong output: $ch with GEMM_CHECK_PERTURB=$mode"
            if [ $gpu_present = 0 ]; then result SKIP "gpu: $what: no GPU"; continue; fi
            out=$(GEMM_CHECK_PERTURB=$mode "$BUILD/bin/$ch" --test --quick 2>>"$GROUP_LOG"); rc=$?
            # the checked rows, less the exempt ones (07's quantize table is not a product)
            rows=$(echo "$out" | awk -v ex="$exempt" '$1 == "TEST" && index(ex, " " $4 " ") == 0')
            passed_rows=$(echo "$rows" | awk '$2 == "PASS"' | wc -l)
            failed_rows=$(echo "$rows" | awk '$2 == "FAIL"' | wc -l)
            if [ "$rc" = 1 ] && [ "$passed_rows" = 0 ] && [ "$failed_rows" -gt 0 ]; then
                result PASS "gpu: $what: all $failed_rows checked rows fail"
            else
                result FAIL "gpu: $what: exit $rc, $passed_rows rows passed, $failed_rows failed"
            fi
        done
    done
}
# ---- the groups, in parallel -----------------------------------------------------------------------
in_git=0
git ls-files --error-unmatch Makefile >/dev/null 2>&1 && in_git=1
GROUP_ORDER=()
# run_group NAME FUNCTION ARGS...: in the background, at most JOBS at once. The group's results
# go to GROUP_DIR/NAME.res, its details to NAME.log; a last line "done" says it ran to its end.
run_group() {
    local name=$1
    shift
    GROUP_ORDER+=("$name")
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    (
        RESULTS=$GROUP_DIR/$name.res GROUP_LOG=$GROUP_DIR/$name.log
        : >"$RESULTS"
        start=$SECONDS
        "$@"
        echo "done $((SECONDS - start))" >"$GROUP_DIR/$name.done"
    ) </dev/null 2>>"$GROUP_DIR/$name.log" &
}
# The gpu groups first: with a GPU they are the longest by far (on a machine without, seconds).
# GPU_LANES of them (TEST_GPU_JOBS, default 3 on a GPU machine, 1 without), each taking every
# GPU_LANES-th chapter, one chapter after another: a few test processes share the GPU's memory
# and its time, as many as the longest lane allows (all eight chapters, one after another, took
# more than 535 s of an H100 on 2026-11-26).
GPU_LANES=${TEST_GPU_JOBS:-$([ $gpu_present = 1 ] && echo 3 || echo 1)}
for ((lane = 1; lane <= GPU_LANES; lane++)); do
    lane_chapters=()
    for ((i = lane; i <= $#; i += GPU_LANES)); do lane_chapters+=("${!i}"); done
    run_group "gpu-$lane" group_gpu "$lane" ${lane_chapters[@]+"${lane_chapters[@]}"}
done
run_group harness group_harness
run_group make group_make "$1"
run_group wrappers group_wrappers
run_group documents group_documents "$@"
for ch in "$@"; do
    run_group "sass-$ch" group_sass "$ch"
    run_group "cli-$ch" group_cli "$ch"
    run_group "docs-$ch" group_docs "$ch"
done
run_group progress group_progress "$@"
run_group ab.list group_ablist "$@"
run_group profile group_profile_ladder "$@"
run_group compare group_compare "$1"
wait

# ---- the summary -------------------------------------------------------------------------------------
passed=0 failed=0 skipped=0 sass_skipped=0
for name in "${GROUP_ORDER[@]}"; do
    {
        echo "== $name"
        cat "$GROUP_DIR/$name.res" "$GROUP_DIR/$name.log" 2>/dev/null
        [ -f "$GROUP_DIR/$name.done" ] && echo "($(cut -d' ' -f2 "$GROUP_DIR/$name.done") s)"
    } >>"$LOG"
    if [ ! -f "$GROUP_DIR/$name.done" ]; then
        echo "FAIL group $name stopped before its end: $(tail -n 1 "$GROUP_DIR/$name.log" 2>/dev/null)" >>"$GROUP_DIR/$name.res"
        echo "FAIL group $name stopped before its end" >>"$LOG"
    fi
    while read -r word rest; do
        case $word in
        PASS) passed=$((passed + 1)) ;;
        FAIL) failed=$((failed + 1)); echo "  FAIL $rest" ;;
        SKIP) skipped=$((skipped + 1))
              [ -n "$SASS_TOOLS" ] && [[ $rest == *": $SASS_TOOLS" ]] && sass_skipped=$((sass_skipped + 1)) ;;
        esac
    done <"$GROUP_DIR/$name.res"
done
[ $gpu_present = 1 ] || echo "  no GPU: the kernel tests were skipped, not run"
[ $sass_skipped = 0 ] ||
    echo "NOTE: $sass_skipped SASS checks were skipped: $SASS_TOOLS ($SASS_HOWTO)"

echo "(details: $LOG; each group's in $GROUP_DIR/)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
