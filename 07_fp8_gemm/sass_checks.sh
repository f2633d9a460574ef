#!/usr/bin/env bash
# Chapter 07's SASS claims beyond the opcode lists (called by tests/run.sh with the binary and its
# cuobjdump -sass; prints PASS, FAIL or SKIP lines).
# Stage 1's lesson (README, "Stage 1"): on GPUs with FP8 (sm_89, sm_90a) every quantize kernel
# converts with the hardware instruction, F2FP.SATFINITE.E4M3.F32.PACK_AB (two fp32 to two e4m3
# bytes, round to nearest even, saturating to +-448), not with the toolkit's software rounding
# that sm_80 gets. The opcode lists of the rows cannot say this: they hold for every architecture
# of the build, and sm_80 has no such instruction.
set -u
bin=$1 sass=$2
kernels="quant07_tensor_apply_kernel quant07_1x128_kernel quant07_128x128_kernel"
ops=$(awk '/^[ \t]*arch = / { arch = $3 }
           /Function : / { fn = $3 }
           /^[ \t]*\/\*[0-9a-f]+\*\// {
               line = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
               sub(/^@!?U?P[T0-9]+[ \t]+/, "", line)
               split(line, tok, /[ \t;]+/); print arch, fn, tok[1] }' "$sass")
for arch in sm_89 sm_90a; do
    if ! grep -q "arch = $arch\$" "$sass"; then
        echo "SKIP F2FP e4m3 conversion on $arch: no $arch code in $bin"
        continue
    fi
    for k in $kernels; do
        n=$(echo "$ops" | awk -v a="$arch" -v k="$k" '$1 == a && index($2, k) && $3 ~ /^F2FP\.SATFINITE\.E4M3\.F32\.PACK_AB/' | wc -l)
        if [ "$n" -gt 0 ]; then echo "PASS $k converts with F2FP.SATFINITE.E4M3 on $arch ($n)"
        else echo "FAIL $k has no F2FP.SATFINITE.E4M3.F32.PACK_AB on $arch (software conversion?)"; fi
    done
done
