#!/usr/bin/env bash
# Draws the lesson's figures: 06_wgmma_tma/figures/*.svg, from the constants of the kernels
# themselves (read from their source below, so a changed constant changes the figure). Needs bash
# and awk (POSIX awk: mawk, gawk and busybox awk all do).
#
#   bash 06_wgmma_tma/figures.sh
#
# pipeline.svg        stage 4's ring over time: TMA into a slot, the slot's full barrier, the
#                     wgmma group that reads it, wait_group<1>, the empty barrier, the refill
#                     (kernels/04_warp_specialized_sm90a.cu: DEPTH, BM, BN, the wait_group depth)
# mbarrier_phases.svg which phase (parity) of full[s] and empty[s] each wait names, K tile by K
#                     tile over three rounds of the ring (the same kernel's parities and counts)
# swizzle_atom.svg    the 1024-byte atom of the 128-byte swizzle (kernels/01's swizzle128) and the
#                     descriptor of each k16 step (desc_sw128 in gemm06_sm90a.cuh, wgmma_desc in
#                     common/ptx/wgmma.cuh)
# warpgroups.svg      stage 4's three warpgroups: who issues TMA, who issues wgmma, and the
#                     registers setmaxnreg moves (__launch_bounds__, setmaxnreg_dec/inc)
# accumulator_fragment.svg  which thread and register of the warpgroup holds each element of
#                     stage 1's m64nBNk16 accumulator (kernels/01: BM, BN; the layout of
#                     store_fragment in gemm06_sm90a.cuh), and how chapter 08 hands one thread's
#                     registers of S to the next wgmma as its A fragment (08's fa2.cuh, attn_pack_p)
set -euo pipefail
from=$PWD
cd "$(dirname "$0")"
mkdir -p figures

# ---- the constants, from the sources ----------------------------------------------------------
K01=kernels/01_first_wgmma_sm90a.cu
K04=kernels/04_warp_specialized_sm90a.cu
H06=gemm06_sm90a.cuh
WG=../common/ptx/wgmma.cuh
# the value of `#define NAME VALUE` in a file
def() { awk -v n="$2" '$1 == "#define" && $2 == n { print $3; exit }' "$1"; }
# the first number in the first match of an extended regex
num() { grep -oE "$2" "$1" | head -n 1 | grep -oE '[0-9]+' | head -n "${3:-1}" | tail -n 1; }
BK=$(def $H06 GEMM06_BK)                              # k per K tile (elements)
BM=$(def $K04 BM)                                     # stage 4's tile: BM x BN
BN=$(def $K04 BN)
DEPTH=$(def $K04 DEPTH)                               # slots in the ring
CONS=$(def $K04 CONSUMERS)                            # consumer warpgroups
DEC=$(num $K04 'setmaxnreg_dec<[0-9]+>')              # the producer's registers
INC=$(num $K04 'setmaxnreg_inc<[0-9]+>')              # each consumer's registers
MINB=$(num $K04 '__launch_bounds__\(THREADS, [0-9]+\)')  # blocks per SM the budget is fixed for
INFLIGHT=$(num $K04 'wgmma_wait_group<[1-9]>\(\)')    # groups left running by the K loop's wait
EMPTYC=$(grep -c 'mbarrier_init(smem_addr(&empty\[s\]), CONSUMERS \* 4)' $K04)  # 1: per warp
ATOM=$(num $K01 'c \^ \(r % [0-9]+\)')                # rows of one swizzle atom
# desc_sw128's call: wgmma_desc(addr, WGMMA_SWIZZLE_128B, LBO, SBO); the enum's value of the mode
LBO=$(grep -oE 'WGMMA_SWIZZLE_128B, [0-9]+, [0-9]+' $H06 | head -n 1 | cut -d, -f2 | tr -d ' ')
SBO=$(grep -oE 'WGMMA_SWIZZLE_128B, [0-9]+, [0-9]+' $H06 | head -n 1 | cut -d, -f3 | tr -d ' ')
# The layout code of the 128-byte swizzle is the PTX ISA's (bits 62-63 = 1). The test draws the
# figures in a copy of this folder alone, so it is fixed here and checked against the wrapper's
# enum wherever the tree is there.
SW=1
if [ -f $WG ] && ! grep -qE "WGMMA_SWIZZLE_128B = $SW\b" $WG; then
    echo "figures.sh: $WG no longer encodes the 128-byte swizzle as $SW" >&2; exit 1
fi
# Stage 1's wgmma: m64nWNk16, WM = 64 rows, WN / 2 fp32 accumulators a thread.
WM=$(def $K01 BM)
WN=$(def $K01 BN)
# The accumulator layout the figure draws is store_fragment's (register i of lane `lane` in warp
# `warp`); wgmma.cuh states the same, and 08's attn_pack_p packs S's registers into P's A
# fragment in this order. A change to any of them must be drawn anew: stop here.
ROWF='16 * warp + lane / 4 + 8 * ((i / 2) % 2)'
COLF='8 * (i / 4) + 2 * (lane % 4)'
grep -qF "row = row0 + $ROWF;" $H06 && grep -qF "col = col0 + $COLF;" $H06 || {
    echo "figures.sh: store_fragment in $H06 no longer uses the layout drawn" >&2; exit 1; }
if [ -f $WG ] && ! { grep -qF 'row    = 16 * w + l / 4 + 8 * ((i / 2) % 2)' $WG &&
                     grep -qF 'column = 8 * (i / 4) + 2 * (l % 4) + i % 2' $WG; }; then
    echo "figures.sh: $WG no longer states the accumulator layout drawn" >&2; exit 1
fi
FA2=$from/08_flash_attn/fa2.cuh                       # where make test runs it: the root
[ -f "$FA2" ] || FA2=../08_flash_attn/fa2.cuh
if [ -f "$FA2" ]; then
    for packed in 'p[kk][0] = attn_pack<T>(s[2 * kk][0], s[2 * kk][1]);' \
                  'p[kk][1] = attn_pack<T>(s[2 * kk][2], s[2 * kk][3]);' \
                  'p[kk][2] = attn_pack<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);' \
                  'p[kk][3] = attn_pack<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);'; do
        grep -qF "$packed" "$FA2" || { echo "figures.sh: $FA2 no longer has: $packed" >&2; exit 1; }
    done
fi
for v in BK BM BN DEPTH CONS DEC INC MINB INFLIGHT ATOM LBO SBO SW WM WN; do
    [ -n "${!v}" ] || { echo "figures.sh: could not read $v from the sources" >&2; exit 1; }
done
[ "$EMPTYC" = 1 ] || { echo "figures.sh: $K04 no longer counts one empty arrival per consumer warp" >&2; exit 1; }
THREADS=$((128 * (1 + CONS)))
CONSTS="BK=$BK BM=$BM BN=$BN DEPTH=$DEPTH CONS=$CONS DEC=$DEC INC=$INC MINB=$MINB"
CONSTS="$CONSTS INFLIGHT=$INFLIGHT ATOM=$ATOM LBO=$LBO SBO=$SBO SW=$SW THREADS=$THREADS"
CONSTS="$CONSTS WM=$WM WN=$WN"

# The SVG helpers every chapter's figures use (common/svg.awk), prepended to each awk program.
LIB=$(cat ../common/svg.awk)
# The constants as awk variables: -v NAME=VALUE for each.
AWKV=()
for kv in $CONSTS; do AWKV+=(-v "$kv"); done

# ---------------------------------------------------------------------------------------------
# Figure 1: stage 4's ring over time. A schematic with equal wgmma groups (one unit each) and a
# TMA load of LAT units; the order of events is the kernel's:
#   producer: load tile t into slot t % DEPTH once empty[slot] has completed the phase of tile
#             t - DEPTH (the first DEPTH loads go at once);
#   consumer: wait full[slot] of tile t, issue its group, wait_group<INFLIGHT>: the group of tile
#             t - 1 is done, so arrive on empty[slot of t - 1];
#   tensor core: the groups in issue order, one after the other.
awk "${AWKV[@]}" "$LIB"'
BEGIN {
    LAT = 3; T = 11                       # the schematic load latency (units), tiles drawn
    U = 58; NU = 16; X0 = 268; W = X0 + NU * U + 30; H = 622
    for (t = 0; t < T + DEPTH; t++) {
        if (t < DEPTH) ld[t] = 0.12 * t
        else ld[t] = rel[t - DEPTH]
        land[t] = ld[t] + LAT
        iss[t] = (t == 0) ? land[0] : max(land[t], w[t - 1])
        st[t] = (t == 0) ? iss[0] : max(iss[t], en[t - 1])
        en[t] = st[t] + 1
        # the wait after issuing t returns when only INFLIGHT groups are left: t - INFLIGHT done
        w[t] = (t < INFLIGHT) ? iss[t] : max(iss[t], en[t - INFLIGHT])
        if (t >= INFLIGHT) rel[t - INFLIGHT] = w[t]
    }
    slot_kib = (BM + BN) * BK * 2 / 1024
    svg_open(W, H, "Stage 4: the ring of " DEPTH " slots over time, from TMA to wgmma and back", 1)
    text(16, 26, "Stage 4&#8217;s ring over time: TMA &#8594; full[s] &#8594; wgmma &#8594; wait_group&lt;" INFLIGHT "&gt; &#8594; empty[s] &#8594; TMA again", 16, "start", "bold")
    text(16, 46, DEPTH " slots of one K tile each: A " BM "&#215;" BK " and B " BN "&#215;" BK " bf16, " slot_kib " KiB (kernels/04_warp_specialized_sm90a.cu). K tile t lives in slot t % " DEPTH ".", 11.5, "start", "normal", "#444444")
    text(16, 62, "Schematic: every wgmma group (" BK / 16 " &#215; HGMMA.64x" BN "x16 per consumer, the k16 steps of one K tile) is drawn one unit long and a TMA load " LAT " units;", 11.5, "start", "normal", "#444444")
    text(16, 78, "the order of the events is the kernel&#8217;s, the lengths are not measured.", 11.5, "start", "normal", "#444444")

    # legend
    split("#fdd49e|#c7e9c0|#6baed6|#d9d9d9", LC, "|")
    split("TMA in flight: full[s] waits for its bytes|landed: full[s] phase complete, not read yet|read by the wgmma group of tile t", LT, "|")
    for (i = 1; i <= 3; i++) {
        x = 16 + (i - 1) * 360
        rect(x, 94, 16, 14, LC[i], "#7a7a7a", 0.6)
        text(x + 22, 106, LT[i], 11, "start", "normal")
    }

    # time axis
    ya = 132
    for (u = 0; u <= NU; u++) {
        dashed(X0 + u * U, ya, X0 + u * U, 540, "#e6e6e6", 1)
        text(X0 + u * U, ya - 4, u, 9.5, "middle", "normal", "#888888")
    }
    text(X0 - 10, ya - 4, "time (units of one wgmma group)", 9.5, "end", "normal", "#888888")

    # producer row
    yp = 152
    text(16, yp + 16, "producer (thread 0, warpgroup 0)", 12, "start", "bold")
    text(16, yp + 31, "wait empty[s], arm full[s], 2 TMA", 10.5, "start", "normal", "#555555")
    for (t = 0; t < T + DEPTH; t++) {
        x = X0 + ld[t] * U
        if (x > X0 + NU * U - 20) continue
        rect(x - 1, yp + 4, 3, 30, "#e6550d", "none", 0)
        if (t >= DEPTH) text(x + 4, yp + 15, "t" t, 10, "start", "bold", "#a63603")
    }
    text(X0 + ld[DEPTH - 1] * U + 5, yp + 15, "t0-t" DEPTH - 1, 10, "start", "bold", "#a63603")

    # slot rows
    ys = 204; SH = 46
    for (s = 0; s < DEPTH; s++) {
        y = ys + s * (SH + 8)
        text(16, y + 20, "slot " s, 12, "start", "bold")
        text(16, y + 36, "full[" s "], empty[" s "]", 10.5, "start", "normal", "#555555")
        rect(X0, y, NU * U, SH, "#fafafa", "#cccccc", 0.6)
    }
    for (t = 0; t < T + DEPTH; t++) {
        s = t % DEPTH; y = ys + s * (SH + 8)
        seg(ld[t], land[t], y, LC[1], "")
        seg(land[t], st[t], y, LC[2], "")
        seg(st[t], en[t], y, LC[3], "t" t)
    }

    # consumer row
    yc = ys + DEPTH * (SH + 8) + 8
    text(16, yc + 16, "consumers (warpgroups 1, 2)", 12, "start", "bold")
    text(16, yc + 31, "issue, then wait_group&lt;" INFLIGHT "&gt;", 10.5, "start", "normal", "#555555")
    for (t = 0; t < T; t++) {
        x = X0 + iss[t] * U
        printf "<path d=\"M%g,%g L%g,%g L%g,%g z\" fill=\"#08519c\"/>\n", x - 5, yc + 4, x + 5, yc + 4, x, yc + 13
        if (t >= INFLIGHT) {
            xr = X0 + w[t] * U
            rect(xr - 1, yc + 16, 3, 20, "#31a354", "none", 0)
        }
    }
    printf "<path d=\"M%g,%g L%g,%g L%g,%g z\" fill=\"#08519c\"/>\n", X0 - 5, yc + 44, X0 + 5, yc + 44, X0, yc + 53
    text(X0 + 10, yc + 53, "issue the group of tile t, after its full[s] wait", 10.5, "start", "normal", "#444444")
    rect(X0 + 330, yc + 42, 3, 14, "#31a354", "none", 0)
    text(X0 + 340, yc + 53, "wait_group&lt;" INFLIGHT "&gt; returns: group t &#8722; " INFLIGHT " is done; lane 0 of each warp arrives on its empty[s]", 10.5, "start", "normal", "#444444")

    # tensor core row
    yt = yc + 70
    text(16, yt + 20, "tensor core", 12, "start", "bold")
    text(16, yt + 35, "the groups in issue order", 10.5, "start", "normal", "#555555")
    for (t = 0; t < T; t++) {
        x = X0 + st[t] * U
        rrect(x + 1, yt + 4, U - 2, 32, LC[3], "#2171b5", 0.8)
        text(x + U / 2, yt + 25, "t" t, 11, "middle", "bold", "#08306b")
    }

    y = yt + 60
    text(16, y, "Before the first group, the ring fills: " DEPTH " loads go out at once and the tensor core waits one load latency. After that, a slot is refilled as soon as", 11, "start", "normal")
    text(16, y + 16, "wait_group&lt;" INFLIGHT "&gt; says its group is done, for the tile " DEPTH " ahead: while group t runs, tiles t+1 .. t+" DEPTH - 1 " are landed or on their way. In this model no", 11, "start", "normal")
    text(16, y + 32, "group waits for data as long as a load takes at most " DEPTH - 1 " group-times; the real latency and group length are what the depth sweep of stage 3 measures.", 11, "start", "normal")
    text(16, y + 48, "Stage 3 is the same ring with thread 0 of a consumer as the producer; stage 2 is one slot and wait_group&lt;0&gt;: load, multiply, load.", 11, "start", "normal")
    svg_close()
}
function seg(a, b, y, fill, label,   x1, x2) {
    if (b <= a) return
    x1 = X0 + a * U; x2 = X0 + b * U
    if (x1 >= X0 + NU * U) return
    if (x2 > X0 + NU * U) x2 = X0 + NU * U
    rect(x1, y + 4, x2 - x1, SH - 8, fill, "#7a7a7a", 0.5)
    if (label != "" && x2 - x1 > 24) text((x1 + x2) / 2, y + SH / 2 + 4, label, 11, "middle", "bold", "#ffffff")
}' > figures/pipeline.svg

# ---------------------------------------------------------------------------------------------
# Figure 2: the parities. K tile t is use u = t / DEPTH of slot t % DEPTH; full[s] completes
# phase u when tile t has landed (the consumers wait for parity u & 1), empty[s] completes phase
# u when the consumer warps have released tile t (the producer, before loading tile t, waits for
# parity (u & 1) ^ 1: the phase of tile t - DEPTH; for u = 0 the phase before a fresh barrier's
# first, which counts as complete).
awk "${AWKV[@]}" "$LIB"'
BEGIN {
    NT = 3 * DEPTH; CW = 76; X0 = 330; W = X0 + NT * CW + 24; H = 576
    split("#c6dbef #fdd0a2 #c7e9c0 #dadaeb #fcbba1 #d9d9d9 #ffffb3 #bebada", SC, " ")
    svg_open(W, H, "Which phase of full[s] and empty[s] each wait names, over three rounds of the ring", 1)
    text(16, 26, "Phases and parities: which completion of full[s] and empty[s] each wait names", 16, "start", "bold")
    text(16, 46, "Stage 4&#8217;s ring of " DEPTH " slots (kernels/04_warp_specialized_sm90a.cu). Each barrier completes one phase per use of its slot, so K tile t, the use u = t / " DEPTH, 11.5, "start", "normal", "#444444")
    text(16, 62, "of slot t % " DEPTH ", waits for phase u of full[s] and for the phase of tile t &#8722; " DEPTH " of empty[s]. A wait names a phase by its parity: 0, 1, 0, ... No counter is ever reset.", 11.5, "start", "normal", "#444444")

    y0 = 86; RH = 34
    split("K tile t|slot s = t % " DEPTH "|use u = t / " DEPTH "|consumer: wait full[s], parity u &amp; 1|producer: wait empty[s], parity (u &amp; 1) ^ 1", RL, "|")
    for (r = 1; r <= 5; r++) {
        text(X0 - 10, y0 + (r - 1) * RH + 22, RL[r], 12, "end", (r >= 4 ? "bold" : "normal"))
    }
    for (t = 0; t < NT; t++) {
        s = t % DEPTH; u = int(t / DEPTH); x = X0 + t * CW
        for (r = 1; r <= 5; r++) rect(x, y0 + (r - 1) * RH, CW, RH, (r == 2 ? SC[s + 1] : "#ffffff"), "#9a9a9a", 0.6)
        text(x + CW / 2, y0 + 22, t, 13, "middle", "bold")
        text(x + CW / 2, y0 + RH + 22, s, 13, "middle", "normal")
        text(x + CW / 2, y0 + 2 * RH + 22, u, 13, "middle", "normal")
        text(x + CW / 2, y0 + 3 * RH + 22, u % 2, 13, "middle", "bold", "#08519c")
        pe = (u % 2 == 0) ? 1 : 0
        if (u == 0) {
            rect(x + 1, y0 + 4 * RH + 1, CW - 2, RH - 2, "#fff7bc", "none", 0)
            text(x + CW / 2, y0 + 4 * RH + 15, pe, 13, "middle", "bold", "#a63603")
            text(x + CW / 2, y0 + 4 * RH + 29, "at once", 9.5, "middle", "normal", "#a63603")
        } else text(x + CW / 2, y0 + 4 * RH + 22, pe, 13, "middle", "bold", "#a63603")
    }
    text(X0, y0 + 5 * RH + 18, "Yellow: a fresh barrier is in phase 0, and the phase before it (parity 1) counts as complete: the first round of loads does not wait. No special case.", 11, "start", "normal", "#444444")

    # the two barriers of slot 0, phase by phase
    yb = y0 + 5 * RH + 58
    text(16, yb, "The barriers of slot 0, phase by phase", 13, "start", "bold")
    bx = X0; PW = (NT * CW) / 3
    for (b = 0; b < 2; b++) {
        y = yb + 18 + b * 104
        text(X0 - 10, y + 22, (b == 0 ? "full[0]" : "empty[0]"), 13, "end", "bold")
        text(X0 - 10, y + 38, (b == 0 ? "count 1 + " (BM + BN) * BK * 2 / 1024 " KiB of tx" : "count " CONS * 4 ": lane 0 of each"), 10.5, "end", "normal", "#555555")
        if (b == 1) text(X0 - 10, y + 52, "consumer warp", 10.5, "end", "normal", "#555555")
        for (u = 0; u < 3; u++) {
            x = bx + u * PW
            rrect(x + 4, y, PW - 8, 58, (u % 2 ? "#deebf7" : "#fee6ce"), "#7a7a7a", 0.8)
            text(x + 14, y + 18, "phase " u " (parity " u % 2 ")", 12, "start", "bold")
            if (b == 0) {
                text(x + 14, y + 35, "completes: producer armed it, and", 11, "start", "normal")
                text(x + 14, y + 50, "tile " u * DEPTH "&#8217;s A and B boxes landed", 11, "start", "normal")
            } else {
                text(x + 14, y + 35, "completes: " CONS * 4 " consumer warps", 11, "start", "normal")
                text(x + 14, y + 50, "released tile " u * DEPTH, 11, "start", "normal")
            }
        }
    }
    # the waits, as arrows into the phase they name
    ya = yb + 18 + 58
    for (u = 0; u < 3; u++) {
        x = bx + u * PW + PW / 2
        text(x, ya + 22, "consumer, tile " u * DEPTH ": parity " u % 2, 10.5, "middle", "normal", "#08519c")
        arrow(x, ya + 10, x, ya + 1, "#08519c", 1.4)
    }
    ye = yb + 18 + 104
    for (u = 1; u < 3; u++) {
        x = bx + (u - 1) * PW + PW / 2
        text(x, ye + 80, "producer, before tile " u * DEPTH ": parity " (u - 1) % 2, 10.5, "middle", "normal", "#a63603")
        arrow(x, ye + 68, x, ye + 60, "#a63603", 1.4)
    }
    text(16, H - 30, "A parity is never ambiguous: a slot is not refilled before its last use was released, and not released before it was read, so no barrier gets", 11, "start", "normal")
    text(16, H - 14, "two phases ahead of a thread that waits on it. The same arithmetic runs in stages 3 to 8 (stage 8 keeps the slot and the phase in two registers).", 11, "start", "normal")
    svg_close()
}' > figures/mbarrier_phases.svg

# ---------------------------------------------------------------------------------------------
# Figure 3: the 128-byte swizzle atom and the descriptor's k steps. Logical 16-byte chunk c of
# row r is stored at chunk c ^ (r % ATOM) (kernels/01's swizzle128; what TMA writes with
# CU_TENSOR_MAP_SWIZZLE_128B). The k16 step k of a BK-wide K tile reads logical chunks 2k and
# 2k + 1 of every row; its descriptor is desc_sw128(tile + 32 k).
awk "${AWKV[@]}" "$LIB"'
BEGIN {
    ROWB = BK * 2; NCH = ROWB / 16; STEPS = BK / 16; SB = 16 * 2   # bytes of one k16 step
    CW = 56; CH = 34; GX = 96; GY = 150
    W = 1260; H = 586
    split("#fdd49e #c7e9c0 #c6dbef #dadaeb #fcbba1 #d9f0d3 #fee391 #bcbddc", KC, " ")
    svg_open(W, H, "The 1024-byte atom of the 128-byte swizzle, and the descriptor of each k16 step", 1)
    text(16, 26, "The 128-byte swizzle atom, and where each k16 step&#8217;s descriptor points", 16, "start", "bold")
    text(16, 46, "A K tile of " BK " bf16 is " ROWB " bytes a row: " NCH " chunks of 16 bytes. Logical chunk c of row r is stored in slot c ^ (r % " ATOM "): the pattern repeats every " ATOM " rows,", 11.5, "start", "normal", "#444444")
    text(16, 62, "an atom of " ATOM " &#215; " ROWB " = " ATOM * ROWB " bytes, and tiles start on " ATOM * ROWB "-byte boundaries (kernels/01_first_wgmma_sm90a.cu, swizzle128; TMA writes the same with SWIZZLE_128B).", 11.5, "start", "normal", "#444444")
    text(16, 78, "Colour: the k16 step that reads the chunk (step k reads logical chunks 2k and 2k+1, " SB " bytes of every row); number: the logical chunk.", 11.5, "start", "normal", "#444444")

    text(GX + NCH * CW / 2, GY - 30, "slot (16 bytes each) = bank group: banks 4&#183;slot .. 4&#183;slot+3", 11, "middle", "normal", "#444444")
    for (p = 0; p < NCH; p++) text(GX + p * CW + CW / 2, GY - 8, p, 11, "middle", "normal", "#666666")
    text(GX - 10, GY - 8, "row", 11, "end", "normal", "#666666")
    for (r = 0; r < ATOM; r++) {
        text(GX - 10, GY + r * CH + CH / 2 + 4, r, 11, "end", "normal", "#666666")
        for (p = 0; p < NCH; p++) {
            c = bitxor(p, r % ATOM); k = int(c / 2)
            rect(GX + p * CW, GY + r * CH, CW, CH, KC[k + 1], "#8c8c8c", 0.6)
            text(GX + p * CW + CW / 2, GY + r * CH + CH / 2 + 5, c, 13, "middle", "normal")
        }
    }
    rect(GX, GY, NCH * CW, ATOM * CH, "none", "#333333", 1.4)
    # one worked row: r = 5, step 2
    RR = 5; KK = 2
    for (h = 0; h < 2; h++) {
        p = bitxor(2 * KK + h, RR % ATOM)
        rect(GX + p * CW + 1.5, GY + RR * CH + 1.5, CW - 3, CH - 3, "none", "#000000", 2.6)
    }
    for (k = 0; k < STEPS; k++) {
        x = GX + k * 118; y = GY + ATOM * CH + 22
        rect(x, y, 16, 14, KC[k + 1], "#8c8c8c", 0.6)
        text(x + 22, y + 12, "step k = " k, 11, "start", "normal")
    }
    text(GX, GY + ATOM * CH + 60, "Each step&#8217;s 2 &#215; " ATOM " chunks sit in all " NCH " slots, twice: the tensor core&#8217;s reads of one step use every bank group.", 11, "start", "normal")

    # the descriptor
    DX = GX + NCH * CW + 60; DY = 128
    text(DX, DY, "The descriptor (gemm06_sm90a.cuh, desc_sw128; PTX ISA &#8220;Matrix Descriptor Format&#8221;)", 13, "start", "bold")
    split("0-13|16-29|32-45|49-51|62-63", FB, "|")
    split("start address &gt;&gt; 4|LBO &gt;&gt; 4 = " LBO / 16 " (" LBO " bytes): unused with this swizzle|SBO &gt;&gt; 4 = " SBO / 16 " (" SBO " bytes): the next " ATOM "-row atom|base offset = 0: the tile is " ATOM * ROWB "-aligned|layout = " SW ": the 128-byte swizzle", FT, "|")
    for (i = 1; i <= 5; i++) {
        y = DY + 14 + (i - 1) * 24
        rect(DX, y, 64, 20, "#f0f0f0", "#9a9a9a", 0.6)
        text(DX + 32, y + 14, "bits " FB[i], 10.5, "middle", "normal")
        text(DX + 74, y + 14, FT[i], 11, "start", "normal")
    }
    y = DY + 150
    TILE = 8192
    text(DX, y, "For a tile at shared address 0x" hex(TILE, 4) " (an example), step k starts " SB " bytes further:", 11.5, "start", "normal")
    for (k = 0; k < STEPS; k++) {
        a = TILE + SB * k; f = int(a / 16)
        rect(DX, y + 10 + k * 24, 16, 18, KC[k + 1], "#8c8c8c", 0.6)
        text(DX + 24, y + 24 + k * 24, "k = " k ":  address 0x" hex(a, 4) ",  start field 0x" hex(f, 3) ",  descriptor 0x" desc(f), 11.5, "start", "normal")
    }
    y += STEPS * 24 + 40
    text(DX, y, "Only the start field moves (desc_advance adds " SB / 16 " per step). The address is no longer", 11.5, "start", "normal")
    text(DX, y + 16, ATOM * ROWB "-aligned, and the base offset stays 0: the hardware applies the XOR to", 11.5, "start", "normal")
    text(DX, y + 32, "the address bits of every row it reads, bits 4-6 ^= bits 7-9, the same", 11.5, "start", "normal")
    text(DX, y + 48, "function TMA and the stores used. So row r of step k finds its chunks:", 11.5, "start", "normal")
    off = ROWB * RR + SB * KK
    b46 = int(off / 16) % 8; b79 = int(off / 128) % 8
    y += 80
    text(DX, y, "Row " RR ", step " KK " (bold outline): byte " ROWB " &#183; " RR " + " SB " &#183; " KK " = " off, 12, "start", "bold")
    text(DX, y + 18, "bits 4-6 = " b46 " (logical chunk " b46 "), bits 7-9 = " b79 " (row " RR ")", 11.5, "start", "normal")
    text(DX, y + 36, "chunk " b46 " ^ " b79 " = " bitxor(b46, b79) ": byte " ROWB * RR + 16 * bitxor(b46, b79) ", and chunk " b46 + 1 " &#8594; slot " bitxor(b46 + 1, b79) ", byte " ROWB * RR + 16 * bitxor(b46 + 1, b79), 11.5, "start", "normal")
    text(16, H - 14, "SBO steps from one " ATOM "-row atom to the next along M (A) or N (B); within a step, a row is never left, so the leading byte offset is not used.", 11, "start", "normal", "#555555")
    svg_close()
}
function hex(v, n,   s, d) {
    s = ""
    while (v > 0 || length(s) < n) { d = v % 16; s = substr("0123456789abcdef", d + 1, 1) s; v = int(v / 16) }
    return s
}
# the 64-bit descriptor in hex, start field f: start | LBO>>4 << 16 | SBO>>4 << 32 | SW << 62
function desc(f,   hi, lo) {
    hi = SW * 1073741824 + SBO / 16         # bits 32-63: SW << 30, SBO >> 4
    lo = (LBO / 16) * 65536 + f             # bits 0-31
    return hex(hi, 8) "_" hex(lo, 8)
}' > figures/swizzle_atom.svg

# ---------------------------------------------------------------------------------------------
# Figure 4: stage 4's warpgroups and setmaxnreg. __launch_bounds__(THREADS, MINB) fixes the
# budget at launch: 65536 registers / (THREADS * MINB), rounded down to 8 (the SM's register
# file holds 64 Ki 32-bit registers); setmaxnreg_dec / _inc move them.
awk "${AWKV[@]}" "$LIB"'
BEGIN {
    RF = 65536
    START = int(RF / (THREADS * MINB) / 8) * 8
    ACC = BN / 2                                   # fp32 accumulators of m64nBN per thread
    W = 1200; H = 662
    svg_open(W, H, "Stage 4: one producer and " CONS " consumer warpgroups, and the registers setmaxnreg moves", 1)
    text(16, 26, "Stage 4&#8217;s warpgroups: one producer, " CONS " consumers, and the registers setmaxnreg moves", 16, "start", "bold")
    text(16, 46, "kernels/04_warp_specialized_sm90a.cu: " THREADS " threads, __launch_bounds__(" THREADS ", " MINB "), a " BM "&#215;" BN " tile of C per block, " DEPTH " slots of " (BM + BN) * BK * 2 / 1024 " KiB in shared memory.", 11.5, "start", "normal", "#444444")
    text(16, 62, "One if/else on the warpgroup index (the same in all 128 threads of a warpgroup) gives each role its own code.", 11.5, "start", "normal", "#444444")

    # the ring in the middle
    RX = 470; RY = 96; RW = 300
    text(RX + RW / 2, RY, "shared memory: the ring", 12, "middle", "bold")
    for (s = 0; s < DEPTH; s++) {
        y = RY + 10 + s * 30
        rect(RX, y, RW * BM / (BM + BN), 24, "#fdd49e", "#7a7a7a", 0.6)
        rect(RX + RW * BM / (BM + BN), y, RW * BN / (BM + BN), 24, "#c6dbef", "#7a7a7a", 0.6)
        text(RX + RW * BM / (BM + BN) / 2, y + 16, "A " BM "&#215;" BK, 10.5, "middle", "normal")
        text(RX + RW * BM / (BM + BN) + RW * BN / (BM + BN) / 2, y + 16, "B " BN "&#215;" BK "   slot " s, 10.5, "middle", "normal")
    }
    ringb = RY + 10 + DEPTH * 30

    # the three warpgroups
    BY = 290; BW = 370; BH = 200
    for (g = 0; g <= CONS; g++) {
        x = 16 + g * (BW + 30)
        rrect(x, BY, BW, BH, (g == 0 ? "#fff5eb" : "#f0f6fc"), "#7a7a7a", 1)
        text(x + 12, BY + 22, "warpgroup " g ": threads " 128 * g "-" 128 * g + 127, 13, "start", "bold")
        if (g == 0) {
            text(x + 12, BY + 42, "producer. Thread 0, per K tile t:", 11.5, "start", "normal")
            text(x + 22, BY + 60, "wait empty[t % " DEPTH "], arm full[t % " DEPTH "]", 11.5, "start", "normal")
            text(x + 22, BY + 76, "(expect " (BM + BN) * BK * 2 / 1024 " KiB), TMA of A and of B", 11.5, "start", "normal")
            text(x + 12, BY + 94, "Threads 1-127: no work.", 11.5, "start", "normal", "#666666")
            arrow(x + BW / 2 + 80, BY, RX + 20, ringb - 4, "#e6550d", 1.6)
            text(x + BW / 2 + 90, BY - 36, "UTMALDG", 11, "start", "bold", "#a63603")
        } else {
            text(x + 12, BY + 42, "consumer: rows " 64 * (g - 1) "-" 64 * g - 1 " of the tile. Per K tile:", 11.5, "start", "normal")
            text(x + 22, BY + 60, "wait full[s], " BK / 16 " &#215; wgmma m64n" BN "k16 (from the", 11.5, "start", "normal")
            text(x + 22, BY + 76, "slot, by descriptor), commit, wait_group&lt;" INFLIGHT "&gt;,", 11.5, "start", "normal")
            text(x + 22, BY + 92, "lane 0 of each warp arrives on empty[]", 11.5, "start", "normal")
            arrow(RX + RW / 2 + (g - 1.5) * 120, ringb + 4, x + BW / 2, BY - 2, "#2171b5", 1.6)
            text(x + BW / 2 + (g == 1 ? -150 : 10), BY - 36, "HGMMA.64x" BN "x16 reads A, B", 11, "start", "bold", "#08519c")
        }
        # registers per thread: at launch and after setmaxnreg, on one scale
        SX = 2.1 * 0.62; y = BY + 116
        n = (g == 0) ? DEC : INC
        text(x + 12, y, "registers per thread", 11, "start", "bold")
        rect(x + 12, y + 8, START * SX, 16, "#e0e0e0", "#7a7a7a", 0.6)
        text(x + 18 + START * SX, y + 21, START " at launch", 11, "start", "normal")
        if (g == 0) {
            rect(x + 12, y + 34, n * SX, 16, "#fdae6b", "#7a7a7a", 0.6)
            text(x + 18 + n * SX, y + 47, n " after setmaxnreg_dec&lt;" n "&gt;", 11, "start", "normal")
        } else {
            rect(x + 12, y + 34, ACC * SX, 16, "#6baed6", "#7a7a7a", 0.6)
            rect(x + 12 + ACC * SX, y + 34, (n - ACC) * SX, 16, "#c6dbef", "#7a7a7a", 0.6)
            text(x + 12 + ACC * SX / 2, y + 47, ACC " accumulators", 10, "middle", "normal", "#ffffff")
            text(x + 18 + n * SX, y + 47, n, 11, "start", "normal")
            text(x + 12, y + 68, "after setmaxnreg_inc&lt;" n "&gt;: m64n" BN " fp32 = " ACC " a thread", 10.5, "start", "normal", "#555555")
        }
    }

    # the budget
    y = BY + BH + 40
    text(16, y, "The budget: the SM&#8217;s register file holds " RF " registers.", 13, "start", "bold")
    tot0 = THREADS * START; tot1 = 128 * DEC + CONS * 128 * INC
    text(16, y + 22, "At launch: " THREADS " threads &#215; " START " = " tot0 " (" RF " / " THREADS " = " sprintf("%.1f", RF / THREADS) ", rounded down to a multiple of 8; __launch_bounds__(" THREADS ", " MINB ") fixes it at " START ").", 11.5, "start", "normal")
    text(16, y + 40, "After: 128 &#215; " DEC " + " CONS " &#215; 128 &#215; " INC " = " tot1 " &#8804; " RF ". The producer gives back 128 &#215; " START - DEC " registers; each consumer takes 128 &#215; " INC - START ".", 11.5, "start", "normal")
    BX = 16; BWID = W - 40; yb = y + 56
    rect(BX, yb, BWID, 20, "#f7f7f7", "#7a7a7a", 0.8)
    rect(BX, yb, BWID * 128 * DEC / RF, 20, "#fdae6b", "#7a7a7a", 0.6)
    for (g = 1; g <= CONS; g++)
        rect(BX + BWID * (128 * DEC + (g - 1) * 128 * INC) / RF, yb, BWID * 128 * INC / RF, 20, (g == 1 ? "#6baed6" : "#9ecae1"), "#7a7a7a", 0.6)
    text(BX + BWID * 128 * DEC / RF / 2, yb + 14, "wg 0", 10.5, "middle", "normal")
    for (g = 1; g <= CONS; g++) text(BX + BWID * (128 * DEC + (g - 0.5) * 128 * INC) / RF, yb + 14, "warpgroup " g ": 128 &#215; " INC, 10.5, "middle", "normal")
    text(BX + BWID, yb + 36, "unused: " RF - tot1, 10.5, "end", "normal", "#555555")
    text(16, H - 14, "setmaxnreg needs the register count at entry fixed (__launch_bounds__ with a block count; else ptxas may ignore it: info C7508) and all 128 threads of the warpgroup.", 11, "start", "normal", "#555555")
    svg_close()
}' > figures/warpgroups.svg

# ---------------------------------------------------------------------------------------------
# Figure 5: the accumulator fragment of stage 1's wgmma m64nWNk16 (fp32, WN / 2 registers a
# thread). Register i of thread t (warp w = t / 32, lane l = t % 32) holds row
# 16 w + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2 (store_fragment): computed
# here for every thread and register, and checked to cover the tile once. Below, chapter 08's
# reuse: k-step kk of the rs form's A fragment is S's registers 8 kk .. 8 kk + 7 of the same
# thread, packed in pairs (attn_pack_p): a0 = (d[8kk], d[8kk+1]), a1 = (d[8kk+2], d[8kk+3]),
# a2 = (d[8kk+4], d[8kk+5]), a3 = (d[8kk+6], d[8kk+7]).
awk "${AWKV[@]}" "$LIB"'
function frow(t, i) { return 16 * int(t / 32) + int((t % 32) / 4) + 8 * (int(i / 2) % 2) }
function fcol(t, i) { return 8 * int(i / 4) + 2 * ((t % 32) % 4) + i % 2 }
BEGIN {
    NREG = WN / 2; n = 0
    for (t = 0; t < 128; t++) for (i = 0; i < NREG; i++) {
        r = frow(t, i); c = fcol(t, i)
        if (r >= WM || c >= WN || (r, c) in own) { print "figures.sh: the layout is not a bijection" > "/dev/stderr"; exit 1 }
        own[r, c] = t; reg[r, c] = i; n++
    }
    if (n != WM * WN) { print "figures.sh: the layout does not cover the tile" > "/dev/stderr"; exit 1 }
    T0 = 37; WZ = int(T0 / 32); L0 = T0 % 32; JZ = 1; KK = 1     # the examples drawn
    W = 1240; H = 806
    split("#deebf7 #e5f5e0 #fee6ce #efedf5", WC, " ")              # the four warps
    split("#c6dbef #9ecae1 #fdd0a2 #fdae6b", ZC, " ")              # register i % 4
    HI = "#08519c"; OR = "#e6550d"
    svg_open(W, H, "The wgmma accumulator fragment: which thread and register hold each element of the " WM "&#215;" WN " tile, and its reuse as an A operand", 1)
    text(16, 26, "The wgmma accumulator: which thread holds which element of the " WM "&#215;N tile", 16, "start", "bold")
    text(16, 46, "Stage 1&#8217;s wgmma m" WM "n" WN "k16 (kernels/01_first_wgmma_sm90a.cu, BM &#215; BN = " WM " &#215; " WN "): D in fp32, spread over the 128 threads of the warpgroup, N/2 = " NREG " registers each (d0 .. d" NREG - 1 ").", 11.5, "start", "normal", "#444444")
    text(16, 62, "Thread t (warp w = t / 32, lane l = t % 32), register i: row 16w + l/4 + 8&#183;((i/2) % 2), column 8&#183;(i/4) + 2&#183;(l % 4) + i % 2 (common/ptx/wgmma.cuh; store_fragment in gemm06_sm90a.cuh).", 11.5, "start", "normal", "#444444")
    text(16, 78, "Warp w owns rows 16w .. 16w+15; in every 8-column block j, registers 4j .. 4j+3 are chapter 05&#8217;s mma.sync m16n8 accumulator, the same pattern N/8 times along the rows.", 11.5, "start", "normal", "#444444")

    # the whole tile: the four warps, the 8-column blocks, thread T0 in dark blue
    OX = 150; OY = 136; CS = 5
    text(OX, OY - 22, "the " WM "&#215;" WN " tile: block j of 8 columns holds registers d(4j) .. d(4j+3) of every thread", 11, "start", "bold")
    for (w = 0; w < 4; w++) {
        y = OY + 16 * w * CS
        rect(OX, y, WN * CS, 16 * CS, WC[w + 1], "none", 0)
        text(OX - 8, y + 30, "warp " w, 12, "end", "bold")
        text(OX - 8, y + 45, "rows " 16 * w "-" 16 * w + 15, 10.5, "end", "normal", "#555555")
        text(OX - 8, y + 59, "threads " 32 * w "-" 32 * w + 31, 10.5, "end", "normal", "#555555")
    }
    for (i = 0; i < NREG; i++) rect(OX + fcol(T0, i) * CS, OY + frow(T0, i) * CS, CS, CS, HI, "none", 0)
    for (j = 1; j < WN / 8; j++) line(OX + 8 * j * CS, OY, OX + 8 * j * CS, OY + WM * CS, "#9a9a9a", 0.5)
    for (r = 8; r < WM; r += 8) line(OX, OY + r * CS, OX + WN * CS, OY + r * CS, (r % 16 ? "#b0b0b0" : "#555555"), (r % 16 ? 0.5 : 1.2))
    for (j = 0; j < WN / 8; j++) text(OX + (8 * j + 4) * CS, OY - 5, "d" 4 * j "-" 4 * j + 3, 8.5, "middle", "normal", "#555555")
    rect(OX, OY, WN * CS, WM * CS, "none", "#333333", 1.2)
    rect(OX + 8 * JZ * CS, OY + 16 * WZ * CS, 8 * CS, 16 * CS, "none", OR, 2)
    text(OX, OY + WM * CS + 14, "column 0", 10, "start", "normal", "#555555")
    text(OX + WN * CS, OY + WM * CS + 14, WN - 1, 10, "end", "normal", "#555555")
    y = OY + WM * CS + 34
    rect(OX, y - 10, 10, 10, HI, "none", 0)
    text(OX + 16, y, "thread " T0 " (warp " WZ ", lane " L0 "): its " NREG " registers, rows " frow(T0, 0) " and " frow(T0, 2) ", columns " fcol(T0, 0) "-" fcol(T0, 1) " of every block", 11, "start", "normal")
    rect(OX, y + 8, 10, 10, "none", OR, 2)
    text(OX + 16, y + 18, "the block drawn cell by cell on the right", 11, "start", "normal")

    # one block of one warp, cell by cell: T = the thread, d = its register
    ZX = OX + WN * CS + 92; ZW = 42; ZH = 20
    text(ZX, OY - 22, "warp " WZ ", block j = " JZ ": rows " 16 * WZ "-" 16 * WZ + 15 ", columns " 8 * JZ "-" 8 * JZ + 7, 11, "start", "bold")
    for (cc = 0; cc < 8; cc++) text(ZX + cc * ZW + ZW / 2, OY - 5, 8 * JZ + cc, 10, "middle", "normal", "#555555")
    for (rr = 0; rr < 16; rr++) {
        r = 16 * WZ + rr
        text(ZX - 6, OY + rr * ZH + 14, r, 10, "end", "normal", "#555555")
        for (cc = 0; cc < 8; cc++) {
            c = 8 * JZ + cc; t = own[r, c]; i = reg[r, c]
            rect(ZX + cc * ZW, OY + rr * ZH, ZW, ZH, ZC[i % 4 + 1], "#8c8c8c", 0.5)
            text(ZX + cc * ZW + ZW / 2, OY + rr * ZH + 14, "T" t " d" i, 9.5, "middle", (t == T0 ? "bold" : "normal"), (t == T0 ? HI : "#222222"))
            if (t == T0) rect(ZX + cc * ZW + 1, OY + rr * ZH + 1, ZW - 2, ZH - 2, "none", HI, 2)
        }
    }
    rect(ZX, OY, 8 * ZW, 16 * ZH, "none", OR, 2)
    line(ZX, OY + 8 * ZH, ZX + 8 * ZW, OY + 8 * ZH, "#555555", 1)
    split("row l/4, column 8j + 2(l%4)|row l/4, column 8j + 2(l%4) + 1|row l/4 + 8, column 8j + 2(l%4)|row l/4 + 8, column 8j + 2(l%4) + 1", ZL, "|")
    for (q = 0; q < 4; q++) {
        x = ZX; y = OY + 16 * ZH + 18 + q * 16
        rect(x, y - 10, 12, 12, ZC[q + 1], "#8c8c8c", 0.5)
        text(x + 18, y, "d(4j+" q "): " ZL[q + 1], 10.5, "start", "normal")
    }

    # chapter 08: thread T0 hands its registers of S to the next wgmma as the A fragment of P
    YB = OY + WM * CS + 110
    line(16, YB - 24, W - 16, YB - 24, "#cccccc", 1)
    text(16, YB, "Chapter 08 reuses such an accumulator as the A operand of the next wgmma (P from registers: the rs form)", 13, "start", "bold")
    text(16, YB + 20, "08_flash_attn/kernels/05_wgmma_sm90a.cu: S = Q K&#7488; is an m64nN accumulator (rows: queries, columns: keys). The rs form&#8217;s A fragment of m64nNk16 is four registers of two", 11.5, "start", "normal", "#444444")
    text(16, YB + 36, "16-bit values a thread: a0 (row l/4, k 2(l%4) and +1), a1 (row l/4+8, the same k), a2 (row l/4, k+8), a3 (row l/4+8, k+8), in warp w&#8217;s 16 rows. For k-step kk (columns 16kk ..", 11.5, "start", "normal", "#444444")
    text(16, YB + 52, "16kk+15 of S) those are the same thread&#8217;s d(8kk) .. d(8kk+7), rounded to 16 bits in pairs, in order (attn_pack_p, fa2.cuh): no element changes thread. Thread " T0 ", kk = " KK ":", 11.5, "start", "normal", "#444444")
    SX = 262; BW = 66; ys = YB + 74; ya = ys + 74
    text(SX - 12, ys + 18, "S: thread " T0 "&#8217;s registers", 11.5, "end", "bold")
    text(SX - 12, ys + 33, "fp32, columns " 16 * KK "-" 16 * KK + 15, 10.5, "end", "normal", "#555555")
    text(SX - 12, ya + 18, "P: A fragment, k-step " KK, 11.5, "end", "bold")
    text(SX - 12, ya + 33, "bf16x2 or f16x2 registers", 10.5, "end", "normal", "#555555")
    for (i = 0; i < 8; i++) {
        x = SX + i * BW + int(i / 2) * 16; ri = 8 * KK + i
        rect(x, ys, BW - 4, 42, ZC[ri % 4 + 1], "#7a7a7a", 0.6)
        text(x + (BW - 4) / 2, ys + 17, "d" ri, 12, "middle", "bold")
        text(x + (BW - 4) / 2, ys + 33, "(" frow(T0, ri) ", " fcol(T0, ri) ")", 10, "middle", "normal")
    }
    for (q = 0; q < 4; q++) {
        x = SX + 2 * q * BW + q * 16; ri = 8 * KK + 2 * q
        arrow(x + BW - 2, ys + 44, x + BW - 2, ya - 2, "#444444", 1.2)
        rect(x, ya, 2 * BW - 4, 42, ZC[ri % 4 + 1], "#7a7a7a", 0.6)
        text(x + BW - 2, ya + 17, "a" q ": d" ri ", d" ri + 1, 12, "middle", "bold")
        text(x + BW - 2, ya + 33, "row " frow(T0, ri) ", k " fcol(T0, ri) - 16 * KK " and " fcol(T0, ri) - 16 * KK + 1, 10, "middle", "normal")
    }
    x = SX + 8 * BW + 3 * 16 + 14
    text(x, ys + 18, "above: (row, column) of S; below: row and k of P,", 11, "start", "normal", "#444444")
    text(x, ys + 33, "k = column &#8722; 16kk: the same elements, the same thread", 11, "start", "normal", "#444444")
    text(x, ya + 12, "then O += P V: wgmma m64nDk16 with A = a0 .. a3", 11, "start", "normal", "#444444")
    text(x, ya + 27, "from registers and B = V from shared memory;", 11, "start", "normal", "#444444")
    text(x, ya + 42, "the low half of a register is the lower column", 11, "start", "normal", "#444444")
    text(16, H - 14, "The same four packed registers are what one stmatrix.x4 of stage 7 stores per 16 columns (stage_box in gemm06_sm90a.cuh): four 8&#215;8 matrices of the warp&#8217;s 16 rows.", 11, "start", "normal", "#555555")
    svg_close()
}' > figures/accumulator_fragment.svg

ls figures/*.svg
