#!/usr/bin/env bash
# Chapter 06's design sweeps, the numbers behind the README's "which depth", "which tile
# order" and stage 8's "which tile" tables (needs a GPU; run by tests/device_run.sh
# sweep, or by hand):
#   bash 06_wgmma_tma/sweep.sh [OUTDIR [PART...]]   (default results/sweep06, every part)
# PART: depth (stage 3's ring), order (stage 5's tile order), final (stage 8's tile,
# tile order, group height, and its balanced grid against every resident cluster), cluster
# (stage 8's 2x2 clusters: each tile forced, and the picked one, with GEMM06_FINAL_CLUSTER=2x2;
# the 2x1 lines to compare with are final's).
# Each line of a table is one run of the chapter binary with cuBLAS timed beside the stage.
# The README's tables read these CSVs gathered into one file by common/csv_bundle.sh
# (measured/sweeps_h100.csv, a run each, named as the CSV: depth2, final_tile128x256, ...).
set -u
bin=${BIN:-build/bin/06_wgmma_tma}
out=${1:-results/sweep06}
[ $# -gt 0 ] && shift
parts=" ${*:-depth order final cluster} "
mkdir -p "$out"
sizes=(--m 2048,4096,8192,4096 --n 2048,4096,8192,14336 --k 2048,4096,8192,4096)
[[ $parts == *" depth "* ]] && for depth in 2 3 4 5 6; do
    GEMM06_PIPELINE_DEPTH=$depth "$bin" --kernel cublas --kernel pipeline "${sizes[@]}" \
        --save "$out/depth$depth" >"$out/depth$depth.txt" 2>&1
    echo "== pipeline depth $depth exit $?" >>"$out/depth$depth.txt"
done
[[ $parts == *" order "* ]] && for order in rows grouped hilbert; do
    GEMM06_TILE_ORDER=$order "$bin" --kernel cublas --kernel persistent "${sizes[@]}" \
        --save "$out/order_$order" >"$out/order_$order.txt" 2>&1
    echo "== persistent order $order exit $?" >>"$out/order_$order.txt"
done
# Stage 8: each tile forced, at the bench shapes and at sizes between the size classes and
# with a small M or N (the size rule, pick_tile, comes from these), then the tile order again
# (over pairs of rows).
squares=(--m 512,1024,2048,4096,8192,4096,4096 --n 512,1024,2048,4096,8192,14336,4096
         --k 512,1024,2048,4096,8192,4096,14336)
between=(--m 768,1024,1536,3072,256,128,64,4096 --n 768,2048,1536,3072,4096,4096,4096,128
         --k 768,1024,1536,3072,4096,4096,4096,4096)
[[ $parts == *" final "* ]] && for tile in 128x256 128x128 64x128; do
    GEMM06_FINAL_TILE=$tile "$bin" --kernel cublas --kernel final "${squares[@]}" \
        --save "$out/final_tile$tile" >"$out/final_tile$tile.txt" 2>&1
    echo "== final tile $tile exit $?" >>"$out/final_tile$tile.txt"
    GEMM06_FINAL_TILE=$tile "$bin" --kernel cublas --kernel final "${between[@]}" --iters 50 \
        --save "$out/final_between_tile$tile" >"$out/final_between_tile$tile.txt" 2>&1
    echo "== final tile $tile between the classes exit $?" >>"$out/final_between_tile$tile.txt"
done
[[ $parts == *" final "* ]] && {
    "$bin" --kernel cublas --kernel final "${between[@]}" --iters 50 \
        --save "$out/final_between_picked" >"$out/final_between_picked.txt" 2>&1
    echo "== final, the picked tile, between the classes exit $?" >>"$out/final_between_picked.txt"
}
[[ $parts == *" final "* ]] && for order in rows grouped hilbert; do
    GEMM06_TILE_ORDER=$order "$bin" --kernel cublas --kernel final "${sizes[@]}" \
        --save "$out/final_order_$order" >"$out/final_order_$order.txt" 2>&1
    echo "== final order $order exit $?" >>"$out/final_order_$order.txt"
done
[[ $parts == *" final "* ]] && for g in 4 8 16; do
    GEMM06_GROUP_ROWS=$g "$bin" --kernel cublas --kernel final "${sizes[@]}" \
        --save "$out/final_group$g" >"$out/final_group$g.txt" 2>&1
    echo "== final group of $g pairs of tile rows exit $?" >>"$out/final_group$g.txt"
done
[[ $parts == *" final "* ]] && {
    GEMM06_FINAL_CLUSTERS=1000 "$bin" --kernel cublas --kernel final "${squares[@]}" \
        --save "$out/final_grid_all" >"$out/final_grid_all.txt" 2>&1
    echo "== final, every resident cluster launched, exit $?" >>"$out/final_grid_all.txt"
}
# Stage 8 with 2x2 clusters (both operands multicast): the same shapes as final's tile lines,
# each tile forced, then the tile the rule picks (the rule's rates are still the 2x1 ones).
[[ $parts == *" cluster "* ]] && for tile in 128x256 128x128 64x128 picked; do
    forced=(GEMM06_FINAL_CLUSTER=2x2)
    [ $tile = picked ] || forced+=(GEMM06_FINAL_TILE=$tile)
    env "${forced[@]}" "$bin" --kernel cublas --kernel final "${squares[@]}" \
        --save "$out/final_cluster2x2_tile$tile" >"$out/final_cluster2x2_tile$tile.txt" 2>&1
    echo "== final 2x2 clusters, tile $tile exit $?" >>"$out/final_cluster2x2_tile$tile.txt"
    env "${forced[@]}" "$bin" --kernel cublas --kernel final "${between[@]}" --iters 50 \
        --save "$out/final_cluster2x2_between_tile$tile" \
        >"$out/final_cluster2x2_between_tile$tile.txt" 2>&1
    echo "== final 2x2 clusters, tile $tile between the classes exit $?" \
        >>"$out/final_cluster2x2_between_tile$tile.txt"
done
# One line per (setting, shape): the stage's TFLOPS and its ratio to cuBLAS, from the csv files.
for f in "$out"/depth*.csv "$out"/order_*.csv "$out"/final_*.csv; do
    [ -f "$f" ] || continue
    tag=$(basename "$f" .csv)
    awk -F, -v t="$tag" '/^#/ { next } !seen++ { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["x cuBLAS"] != "-" { print t, $col["mxnxk"], $col["TFLOPS"], $col["x cuBLAS"] }' "$f"
done | tee "$out/summary.txt"
