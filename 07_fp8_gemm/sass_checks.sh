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

# The sm_90a functions named in $want (KEY=LABEL;...), instruction by instruction: address AD,
# opcode OP (with its suffixes), backward-branch target TG (-1 if none); and the innermost loop
# (a backward branch) that holds QGMMAs. The caller's awk program defines flush(), run at the end
# of each such function.
sass_loops='
    function hex(s,   i, v) {
        s = tolower(s); sub(/^0x/, "", s); v = 0
        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return v
    }
    function innermost_qgmma_loop(   i, j, best, q) {
        best = -1
        for (i = 1; i <= n; i++) {
            if (TG[i] < 0 || TG[i] >= AD[i]) continue
            q = 0
            for (j = 1; j <= i; j++) if (AD[j] >= TG[i] && OP[j] ~ /^QGMMA/) q++
            if (q > 0 && (best < 0 || AD[i] - TG[i] < AD[best] - TG[best])) best = i
        }
        return best
    }
    BEGIN { nk = split(want, item, ";") }
    /^[ \t]*arch = / { arch = $3 }
    /Function : / {
        flush(); name = ""; n = 0
        if (arch != "sm_90a") next
        for (k = 1; k <= nk; k++) {
            key = item[k]; sub(/=.*/, "", key)
            if (index($3, key)) { name = item[k]; sub(/^[^=]*=/, "", name) }
        }
        next
    }
    name != "" && /^[ \t]*\/\*[0-9a-f]+\*\// {
        line = $0; a = line; sub(/^[ \t]*\/\*/, "", a); sub(/\*\/.*/, "", a)
        sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line); sub(/^@!?U?P[T0-9]+[ \t]+/, "", line)
        split(line, tok, /[ \t;]+/)
        n++; AD[n] = hex(a); OP[n] = tok[1]; TG[n] = -1
        if (tok[1] == "BRA" && tok[2] ~ /^0x/) TG[n] = hex(tok[2])
    }
    END { flush() }'

# Stage 8's lesson (README, "Stage 8: a lean K loop"): the K loop,
# counted in its SASS from the loop's back-branch target to the branch (the innermost loop that
# holds the QGMMAs: two K tiles, one into each accumulator), per K tile: every instruction but
# the promotion's FADDs / FFMAs (the 4 QGMMAs included), and no R2UR. Counted: stage 8's
# lean_kernel, stage 9's tiles07_kernel of the 128 x 128 tile in clusters of two, and the final's final07_kernel<BLOCK, CONS, WAVES, CL, SPLIT, COLS> of the 128 x
# 128 tile in clusters of two, per tensor and block-scaled, and of the per-tensor 128 x 144
# tile. Before the loop's diet these counts were 72 and 87.5; above 50 the diet is lost. Stages
# 6 and 7 (persistent_kernel, handoff_kernel) have the loop before its diet: counted too, and
# stage 8's must be below theirs.
want='tiles07_kernelILi2ELi2ELb0E=tiles (stage 9) 128 x 128;final07_kernelILb0ELi2ELi1ELi2ELb0ELi128E=final07 per tensor 128 x 128;final07_kernelILb1ELi2ELi1ELi2ELb0ELi128E=final07 block-scaled 128 x 128;final07_kernelILb0ELi2ELi1ELi2ELb0ELi144E=final07 per tensor 128 x 144;lean_kernel=lean (stage 8);persistent_kernel=persistent (stage 6);handoff_kernel=handoff (stage 7)'
kloop=$(awk -v want="$want" "$sass_loops"'
    function flush(   j, best, q, p, r, tot) {
        if (name == "") return
        best = innermost_qgmma_loop()
        if (best < 0) { print "FAIL " name ": no K loop found"; return }
        q = p = r = tot = 0
        for (j = 1; j <= best; j++) {
            if (AD[j] < TG[best]) continue
            tot++
            if (OP[j] ~ /^QGMMA/) q++
            if (OP[j] ~ /^(FADD|FFMA)(\.|$)/) p++
            if (OP[j] ~ /^R2UR(\.|$)/) r++
        }
        printf "%s|%d|%d|%d|%d\n", name, tot, q, p, r
    }' "$sass")
if [ -z "$kloop" ]; then
    echo "SKIP K loop counts: no sm_90a final07_kernel or lean_kernel in $bin"
else
    lean="" before=""
    while IFS='|' read -r label tot q p r; do
        case $label in FAIL*) echo "$label"; continue ;; esac
        tiles=$((q / 4))
        if [ "$tiles" -lt 1 ]; then echo "FAIL $label: $q QGMMA in its K loop"; continue; fi
        per=$(awk -v t="$tot" -v p="$p" -v k="$tiles" 'BEGIN { printf "%g", (t - p) / k }')
        what="K loop $per instructions a K tile besides the promotion's $((p / tiles)) adds ($tot in a loop of $tiles K tiles, $q QGMMA), $r R2UR"
        case $label in
        persistent* | handoff*) before="$before$label|$per|$what;" ; continue ;;
        lean*) lean=$per ;;
        esac
        if awk -v x="$per" 'BEGIN { exit !(x > 50) }' || [ "$r" != 0 ]; then
            echo "FAIL $label: $what (want at most 50, no R2UR)"
        else
            echo "PASS $label: $what"
        fi
    done <<<"$kloop"
    # stages 6 and 7 against stage 8: the diet is stage 8's idea, so its loop must be the shorter
    while IFS='|' read -r label per what; do
        [ -n "$label" ] || continue
        if [ -z "$lean" ]; then echo "SKIP $label: $what; no lean_kernel to compare with"
        elif awk -v x="$per" -v l="$lean" 'BEGIN { exit !(x > l) }'; then
            echo "PASS $label: $what, more than stage 8's $lean"
        else
            echo "FAIL $label: $what, not more than stage 8's $lean (is stage 8's diet still its own?)"
        fi
    done <<<"$(tr ';' '\n' <<<"$before")"
fi

# Stage 9's wide tile (README, "The wide tile's turnaround"): in its K loop (the innermost loop
# with QGMMAs: a K tile of two bands, every band inside M), the wait for the next K tile's slot
# starts among the promotion: a SYNCS.PHASECHK after the loop's last WARPGROUP.DEPBAR and before
# its last FFMA (FADD per tensor). Written at the loop's top, behind the back edge, the try_wait
# comes after every FFMA, on the path to the next wgmma (8192^3 block-scaled 1.058x -> 1.083x
# cuBLASLt when it moved). Checked for both schemes.
want_wide='final07_kernelILb0ELi2ELi2ELi2ELb0ELi128ELb1E=final07 per tensor 256 x 128 sharing A;final07_kernelILb1ELi2ELi2ELi2ELb0ELi128ELb1E=final07 block-scaled 256 x 128 sharing A;final07_kernelILb0ELi2ELi1ELi2ELb0ELi192ELb0E=final07 per tensor 128 x 192;final07_kernelILb1ELi2ELi1ELi2ELb0ELi192ELb0E=final07 block-scaled 128 x 192'
wide=$(awk -v want="$want_wide" "$sass_loops"'
    function flush(   j, best, dep, ffma, wait) {
        if (name == "") return
        best = innermost_qgmma_loop()
        if (best < 0) { print "FAIL " name ": no K loop found"; return }
        dep = ffma = wait = 0
        for (j = 1; j <= best; j++) {
            if (AD[j] < TG[best]) continue
            if (OP[j] ~ /^WARPGROUP\.DEPBAR/) dep = j
            if (OP[j] ~ /^(FFMA|FADD)(\.|$)/) ffma = j
        }
        for (j = dep + 1; j < ffma; j++) if (OP[j] ~ /^SYNCS\.PHASECHK/) wait = j
        printf "%s|%d|%d|%d\n", name, (dep > 0 && ffma > dep), (wait > 0), ffma - dep
    }' "$sass")
if [ -z "$wide" ]; then
    echo "SKIP wide tile wait: no sm_90a 256 x 128 final07_kernel in $bin"
else
    while IFS='|' read -r label shaped waits span; do
        case $label in FAIL*) echo "$label"; continue ;; esac
        if [ "$shaped" = 1 ] && [ "$waits" = 1 ]; then
            echo "PASS $label: the next slot's try_wait among the $span instructions from the last DEPBAR to the last promotion FFMA/FADD"
        else
            echo "FAIL $label: no SYNCS.PHASECHK between the K loop's last DEPBAR and its last promotion FFMA/FADD (the wait is back on the path to the next wgmma)"
        fi
    done <<<"$wide"
fi
