#!/usr/bin/env bash
# One full GPU session for the given chapters, as sent through the team's device tool:
# build, `make test` for those chapters, and each chapter's benchmark sweep, all logs under
# $OUT (default results/device). Usage: bash tests/device_run.sh 01_elementwise [02_reduce ...]
set -u
OUT=${OUT:-results/device}
mkdir -p "$OUT"
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
    nvcc --version | tail -n 2
} >"$OUT/env.txt" 2>&1
targets="build/bin/test_harness"
for c in "$@"; do targets="$targets build/bin/$c build/bin/$c.solved"; done
make -j"$(nproc)" $targets >"$OUT/build.txt" 2>&1 || { tail -n 30 "$OUT/build.txt"; exit 1; }
bash tests/run.sh "$@" >"$OUT/test.txt" 2>&1
cp build/test.log "$OUT/test_log.txt"
for c in "$@"; do
    build/bin/$c --bench --save "$OUT/$c" >"$OUT/$c.txt" 2>&1
    echo "== $c bench exit $?" >>"$OUT/$c.txt"
done
cat "$OUT/env.txt"
grep -E "FAIL|passed" "$OUT/test.txt"
for c in "$@"; do tail -n 80 "$OUT/$c.txt"; done
