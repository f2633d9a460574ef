#!/usr/bin/env bash
# One GPU session, as sent through the team's device tool, in phases; several phases may share one
# call, comma-separated, run in that order:
#   bash tests/device_run.sh build    [chapters...]   make the chapters' binaries (bench, profile)
#   bash tests/device_run.sh test     [chapters...]   build, then make test's run (tests/run.sh)
#   bash tests/device_run.sh sanitize [chapters...]   make sanitize-NN for each chapter
#   bash tests/device_run.sh bench    [chapters...]   each chapter's benchmark sweep (--bench)
#   bash tests/device_run.sh sweep    [chapters...]   each chapter's design sweeps (NN/sweep.sh)
#   bash tests/device_run.sh profile  [chapters...]   each chapter's profile_ladder.sh (Nsight Compute)
#   bash tests/device_run.sh build,bench,profile 07_fp8_gemm 08_flash_attn
# No chapters: all of them. Logs under $OUT (default results/device), packed into
# $OUT/device.tar.gz after every phase (the tool brings back only a few files, and what a call
# killed at its limit had packed still comes back); a summary is printed last. BUDGET=seconds
# (optional): every step runs under what is left of it, and a step with less than 15 s left is
# skipped (said in steps.txt), so that the call ends inside its limit with what it measured.
# `test` of all eight chapters no longer fits one 600 s call on an H100 (2026-11-26: the build,
# then more than 535 s of tests; 07 alone took 140 s): send it in parts, chapters as arguments.
set -u
OUT=${OUT:-results/device}
BUDGET=${BUDGET:-0}
phases=${1:-test}
shift
chapters=("$@")
[ ${#chapters[@]} -gt 0 ] || chapters=($(ls -d [0-9][0-9]_* | sort))
mkdir -p "$OUT"
t0=$(date +%s)
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
    nvcc --version | tail -n 2
} >"$OUT/env.txt" 2>&1
bins=""
for c in "${chapters[@]}"; do bins="$bins build/bin/$c"; done
pack() { tar -czf "$OUT/device.tar.gz" -C "$OUT" --exclude device.tar.gz . 2>/dev/null; }
# step NAME LOG COMMAND...: the command, its output in LOG, under what is left of BUDGET
step() {
    local name=$1 log=$2 start rc limit=()
    shift 2
    if [ "$BUDGET" -gt 0 ]; then
        local left=$((BUDGET - ($(date +%s) - t0)))
        if [ "$left" -lt 15 ]; then
            echo "$name: skipped, $left s of the budget left" | tee -a "$OUT/steps.txt"
            return 1
        fi
        limit=(timeout --kill-after=5 $((left - 5)))
    fi
    start=$(date +%s)
    "${limit[@]}" "$@" >"$log" 2>&1
    rc=$?
    echo "$name: exit $rc in $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
    return $rc
}
for phase in ${phases//,/ }; do
    case $phase in
    build)
        step build "$OUT/build.txt" make $bins || tail -n 40 "$OUT/build.txt" 2>/dev/null
        ;;
    test)
        solved=""
        for c in "${chapters[@]}"; do solved="$solved build/bin/$c.solved"; done
        step "test build" "$OUT/build.txt" make $bins $solved build/bin/test_harness build/bin/test_fp8_convert \
            build/bin/test_gemm_ref build/bin/test_hopper \
            $(ls tests/*_wrappers_sm90a.cu 2>/dev/null | sed 's|tests/\(.*\)\.cu|build/tests/\1.cubin|') \
            build/tests/compare_fixture_sm90a.cubin || { tail -n 40 "$OUT/build.txt" 2>/dev/null; pack; continue; }
        step tests "$OUT/test.txt" bash tests/run.sh "${chapters[@]}"
        cp build/test.log "$OUT/test_log.txt" 2>/dev/null
        step test_gemm_ref "$OUT/test_gemm_ref.txt" build/bin/test_gemm_ref
        step test_hopper "$OUT/test_hopper.txt" build/bin/test_hopper
        ;;
    sanitize)
        for c in "${chapters[@]}"; do
            step "sanitize $c" "$OUT/sanitize_$c.txt" make sanitize-${c%%_*}
        done
        ;;
    bench)
        for c in "${chapters[@]}"; do
            step "bench $c" "$OUT/$c.txt" build/bin/$c --bench --save "$OUT/$c" --plot "$OUT/$c.svg"
        done
        ;;
    sweep)
        for c in "${chapters[@]}"; do
            [ -f "$c/sweep.sh" ] || continue
            step "sweep $c" "$OUT/sweep_$c.txt" env BIN=build/bin/$c bash "$c/sweep.sh" "$OUT/sweep_$c"
        done
        ;;
    profile)
        for c in "${chapters[@]}"; do
            [ -f "$c/profile_ladder.sh" ] || continue
            step "profile $c" "$OUT/profile_$c.txt" bash "$c/profile_ladder.sh" "$OUT/profile_$c"
        done
        ;;
    *) echo "unknown phase '$phase': build, test, sanitize, bench, sweep or profile" >&2; exit 2 ;;
    esac
    pack
done
cat "$OUT/env.txt" "$OUT/steps.txt" 2>/dev/null
for phase in ${phases//,/ }; do
    case $phase in
    test) grep -E "^  FAIL|passed" "$OUT/test.txt" 2>/dev/null | tail -n 40 ;;
    sanitize) grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$OUT"/sanitize_*.txt 2>/dev/null ;;
    bench) for c in "${chapters[@]}"; do tail -n 25 "$OUT/$c.txt" 2>/dev/null; done ;;
    sweep) cat "$OUT"/sweep_*/summary.txt 2>/dev/null ;;
    esac
done
