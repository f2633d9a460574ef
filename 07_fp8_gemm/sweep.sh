#!/usr/bin/env bash
# Chapter 07's design sweeps, the numbers behind stage 5's tile rule (NOTES.md, "Which tile";
# needs a GPU; run by tests/device_run.sh sweep, or by hand):
#   bash 07_fp8_gemm/sweep.sh [OUTDIR [PART...]]   (default results/sweep07, every part)
# PART: final (stage 5's tile forced, both scalings, at the squares, the DeepSeek-V3 shapes of
# M = 4096 and M = 64/128); group (stage 5's grouped tile order with 1 to 64 pair rows a group,
# GEMM07_GROUP_ROWS, at the squares: the height sets how many L2 lookups merge, NOTES.md "The
# group height"). Each line of a table is one run of the chapter binary with cuBLASLt
# timed beside the stage.
set -u
bin=${BIN:-build/bin/07_fp8_gemm}
out=${1:-results/sweep07}
[ $# -gt 0 ] && shift
parts=" ${*:-final group} "
mkdir -p "$out"
lib=(--kernel cublaslt_tensor --kernel cublaslt_block --kernel final_tensor --kernel final_block)
squares=(--m 1024,2048,4096,8192 --n 1024,2048,4096,8192 --k 1024,2048,4096,8192)
large=(--m 4096,4096,4096,4096,4096,4096 --n 2112,24576,32768,7168,4096,7168
       --k 7168,1536,512,16384,7168,2048)
small=(--m 64,64,64,128,128,128 --n 2112,24576,7168,2112,24576,7168 --k 7168,1536,16384,7168,1536,16384)
[[ $parts == *" group "* ]] && for g in 1 2 4 8 16 64; do
    GEMM07_GROUP_ROWS=$g "$bin" "${lib[@]}" "${squares[@]}" --iters 30 \
        --save "$out/group_$g" >"$out/group_$g.txt" 2>&1
    echo "== group of $g pair rows, exit $?" >>"$out/group_$g.txt"
done
[[ $parts == *" final "* ]] && for tile in 256x128 128x128 64x128 128x144; do
    for set in squares large small; do
        [ $set = small ] && [ $tile != 128x128 ] && [ $tile != 64x128 ] && continue
        declare -n sizes=$set
        GEMM07_FINAL_TILE=$tile "$bin" "${lib[@]}" "${sizes[@]}" --iters 30 \
            --save "$out/final_${set}_$tile" >"$out/final_${set}_$tile.txt" 2>&1
        echo "== final tile $tile, $set, exit $?" >>"$out/final_${set}_$tile.txt"
    done
done
