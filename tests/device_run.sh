#!/usr/bin/env bash
# One GPU session, as sent through the team's device tool, in phases that each fit one call:
#   bash tests/device_run.sh test     [chapters...]   build, then make test's run (tests/run.sh)
#   bash tests/device_run.sh sanitize [chapters...]   make sanitize-NN for each chapter
#   bash tests/device_run.sh bench    [chapters...]   each chapter's benchmark sweep (--bench)
#   bash tests/device_run.sh sweep    [chapters...]   each chapter's design sweeps (NN/sweep.sh)
#   bash tests/device_run.sh profile  [chapters...]   each chapter's profile_ladder.sh (Nsight Compute)
# No chapters: all of them. Logs under $OUT (default results/device), packed into
# $OUT/device.tar.gz at the end (the tool brings back only a few files); a summary is printed last.
# `test` of all eight chapters no longer fits one 600 s call on an H100 (2026-11-26: the build,
# then more than 535 s of tests; 07 alone took 140 s): send it in parts, chapters as arguments.
set -u
OUT=${OUT:-results/device}
phase=${1:-test}
shift
chapters=("$@")
[ ${#chapters[@]} -gt 0 ] || chapters=($(ls -d [0-9][0-9]_* | sort))
mkdir -p "$OUT"
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
    nvcc --version | tail -n 2
} >"$OUT/env.txt" 2>&1
bins=""
for c in "${chapters[@]}"; do bins="$bins build/bin/$c"; done
case $phase in
test)
    solved=""
    for c in "${chapters[@]}"; do solved="$solved build/bin/$c.solved"; done
    start=$(date +%s)
    make $bins $solved build/bin/test_harness build/bin/test_fp8_convert build/bin/test_gemm_ref build/bin/test_hopper \
        $(ls tests/*_wrappers_sm90a.cu 2>/dev/null | sed 's|tests/\(.*\)\.cu|build/tests/\1.cubin|') \
        build/tests/compare_fixture_sm90a.cubin \
        >"$OUT/build.txt" 2>&1 || { tail -n 40 "$OUT/build.txt"; exit 1; }
    echo "build: $(( $(date +%s) - start )) s" >>"$OUT/env.txt"
    start=$(date +%s)
    bash tests/run.sh "${chapters[@]}" >"$OUT/test.txt" 2>&1
    echo "tests: $(( $(date +%s) - start )) s" >>"$OUT/env.txt"
    cp build/test.log "$OUT/test_log.txt"
    build/bin/test_gemm_ref >"$OUT/test_gemm_ref.txt" 2>&1
    build/bin/test_hopper >"$OUT/test_hopper.txt" 2>&1
    ;;
sanitize)
    for c in "${chapters[@]}"; do
        n=${c%%_*}
        start=$(date +%s)
        make sanitize-$n >"$OUT/sanitize_$c.txt" 2>&1
        echo "== make sanitize-$n exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/sanitize_$c.txt"
    done
    ;;
bench)
    for c in "${chapters[@]}"; do
        build/bin/$c --bench --save "$OUT/$c" --plot "$OUT/$c.svg" >"$OUT/$c.txt" 2>&1
        echo "== $c bench exit $?" >>"$OUT/$c.txt"
    done
    ;;
sweep)
    for c in "${chapters[@]}"; do
        [ -f "$c/sweep.sh" ] && BIN=build/bin/$c bash "$c/sweep.sh" "$OUT/sweep_$c" >/dev/null 2>&1
    done
    ;;
profile)
    for c in "${chapters[@]}"; do
        [ -f "$c/profile_ladder.sh" ] || continue
        start=$(date +%s)
        bash "$c/profile_ladder.sh" "$OUT/profile_$c" >"$OUT/profile_$c.txt" 2>&1
        echo "== $c profile exit $? in $(( $(date +%s) - start )) s" >>"$OUT/profile_$c.txt"
    done
    ;;
*) echo "unknown phase '$phase': test, sanitize, bench, sweep or profile" >&2; exit 2 ;;
esac
tar -czf "$OUT/device.tar.gz" -C "$OUT" --exclude device.tar.gz . 2>/dev/null
cat "$OUT/env.txt"
case $phase in
test) grep -E "^  FAIL|passed" "$OUT/test.txt" | tail -n 40 ;;
sanitize) grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|== make" "$OUT"/sanitize_*.txt ;;
bench) for c in "${chapters[@]}"; do tail -n 25 "$OUT/$c.txt"; done ;;
sweep) cat "$OUT"/sweep_*/summary.txt 2>/dev/null ;;
esac
