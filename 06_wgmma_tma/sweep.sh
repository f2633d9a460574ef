#!/usr/bin/env bash
# Chapter 06's design sweeps, the numbers behind the README's "which depth" and "which tile
# order" tables (needs a GPU; run by tests/device_run.sh sweep, or by hand):
#   bash 06_wgmma_tma/sweep.sh [OUTDIR]      (default results/sweep06)
# Each line of a table is one run of the chapter binary with cuBLAS timed beside the stage.
set -u
bin=${BIN:-build/bin/06_wgmma_tma}
out=${1:-results/sweep06}
mkdir -p "$out"
sizes=(--m 2048,4096,8192,4096 --n 2048,4096,8192,14336 --k 2048,4096,8192,4096)
for depth in 2 3 4 5 6; do
    GEMM06_PIPELINE_DEPTH=$depth "$bin" --kernel cublas --kernel pipeline "${sizes[@]}" \
        --save "$out/depth$depth" >"$out/depth$depth.txt" 2>&1
    echo "== pipeline depth $depth exit $?" >>"$out/depth$depth.txt"
done
for order in rows grouped hilbert; do
    GEMM06_TILE_ORDER=$order "$bin" --kernel cublas --kernel persistent "${sizes[@]}" \
        --save "$out/order_$order" >"$out/order_$order.txt" 2>&1
    echo "== persistent order $order exit $?" >>"$out/order_$order.txt"
done
# One line per (setting, shape): the stage's TFLOPS and its ratio to cuBLAS, from the csv files.
for f in "$out"/depth*.csv "$out"/order_*.csv; do
    tag=$(basename "$f" .csv)
    awk -F, -v t="$tag" '/^#/ { next } !seen++ { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["kernel"] != "cublas" { print t, $col["mxnxk"], $col["TFLOPS"], $col["x cuBLAS"] }' "$f"
done | tee "$out/summary.txt"
