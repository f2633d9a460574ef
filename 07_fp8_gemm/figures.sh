#!/usr/bin/env bash
# Draws the lesson's figures: 07_fp8_gemm/figures/*.svg. Needs bash and awk (POSIX awk: mawk,
# gawk and busybox awk all do); no GPU, no build.
#
#   bash 07_fp8_gemm/figures.sh
#
# block_scales.svg  DeepSeek-V3's block scales on a small example: A's one scale per 1 x 128
#                   slice of a row, stored scale_a[kb * M + i]; B's one per 128 x 128 block,
#                   stored scale_b[nb * L4 + kb], L4 = L rounded up to 4 (padding unread); which
#                   of them one output tile reads for each K tile (stages 4 to 9)
# promotion.svg     promotion: the tensor core sums one K tile of 128 in 4 wgmma k32 steps into
#                   a fresh accumulator, which is then scaled (block scales) and added into fp32
#                   registers, K tile after K tile (stages 3 to 5)
# pipeline.svg      the block of stages 7-13 (their 128 x 128 tile): one producer warpgroup (a
#                   TMA thread filling a ring of slots, a store thread), two consumer warpgroups
#                   on wgmma, the full / empty
#                   barriers of each slot and the staged / unstaged barriers of the handed-off
#                   store, for the 128 x 128 tile in a cluster of two
# cluster_sharing.svg  the two clusters of stages 9 and 10, one K tile to scale: 128 x 128 tiles stacked
#                   along M sharing B, 256 x 128 tiles side by side along N sharing A; which rows
#                   of A and B each block loads (hatched: multicast to both), and the bytes a
#                   cluster asks of L2 per output and K tile (1.5 and 1.0)
# straddle.svg      block-scaled 128 x 144 tiles against B's 128-column scale blocks: where each
#                   tile column j crosses a block boundary, and how many of a consumer's groups
#                   of four accumulator registers take the first block's scale (the K loop the
#                   kernel picks for that tile)
#
# The sizes are the code's, read from it below (a changed constant changes the figure):
# common/gemm_ref.h (the scale layouts), kernels/13_final_sm90a.cu (tile, K tile, ring depth,
# warpgroups, registers, barrier counts, the store's thread, the wide tile's bands and the
# multicast halves) and gemm07_sm90a.cuh (the TMA box of A's scales). A value the script cannot
# find stops it (make test then fails).
set -euo pipefail
from=$PWD
cd "$(dirname "$0")"
mkdir -p figures
# common/ from the repository root (where make test runs this, on a copy of the chapter) or above
REF=$from/common/gemm_ref.h
[ -f "$REF" ] || REF=../common/gemm_ref.h
FINAL=kernels/13_final_sm90a.cu
SCALEMAP=gemm07_sm90a.cuh

need() { # name value: stop when a constant was not found
    [ -n "$2" ] || { echo "figures.sh: could not read $1 from the sources" >&2; exit 1; }
}

# --- common/gemm_ref.h: the scale block (K + 127) / 128, L4's multiple, the index formulas ---
SB=$(awk '/gemm_ref_k_blocks\(long K\)/ { if (match($0, /\/ [0-9]+;/)) print substr($0, RSTART + 2, RLENGTH - 3) }' "$REF")
need "the scale block" "$SB"
L4MUL=$(awk '/gemm_ref_k_blocks4\(long K\)/ { getline; if (match($0, /\/ [0-9]+ \*/)) print substr($0, RSTART + 2, RLENGTH - 4) }' "$REF")
need "L4's multiple" "$L4MUL"
IDX_A=$(awk '/gemm_ref_scale_a_index\(long M/ { getline; sub(/^ *return /, ""); sub(/;.*/, ""); print }' "$REF")
IDX_B=$(awk '/gemm_ref_scale_b_index\(long K/ { getline; sub(/^ *return /, ""); sub(/;.*/, ""); sub(/gemm_ref_k_blocks4\(K\)/, "L4"); print }' "$REF")
need "scale_a's index" "$IDX_A"
need "scale_b's index" "$IDX_B"

# --- kernels/13_final_sm90a.cu ---
define() { awk -v n="$1" '$1 == "#define" && $2 == n { print $3 }' "$FINAL"; }
BN=$(define BN)
BK=$(define BK)
CLUSTER=$(define CLUSTER)
need BN "$BN"; need BK "$BK"; need CLUSTER "$CLUSTER"
# the ring's depth of each tile: the static_assert that pins final07_shape<...>::depth
depth_of() { # "BLOCK, CONS, WAVES" -> slots
    tr -d '\n' <"$FINAL" | grep -o "final07_shape<$1>::depth == [0-9][0-9]*" | head -n 1 | awk '{ print $NF }' || true
}
DEPTH_T=$(depth_of "false, 2, 1")
DEPTH_B=$(depth_of "true, 2, 1")
need "the per-tensor ring depth" "$DEPTH_T"; need "the block-scaled ring depth" "$DEPTH_B"
# the warpgroups: threads = 128 * (1 + CONS), the 128 x 128 tile launched with CONS = 2
CONS=$(grep -o 'launch_final07<BLOCK, [0-9][0-9]*, 1>(A' "$FINAL" | head -n 1 | awk -F'[<,]' '{ gsub(/ /, "", $3); print $3 }' || true)
need "the consumers of the 128 x 128 tile" "$CONS"
# setmaxnreg for 128 columns: "producer_regs = COLS == 144 ? 24 : 40" (the last value)
PREGS=$(awk '/producer_regs = COLS == / { if (match($0, /: [0-9]+;/)) print substr($0, RSTART + 2, RLENGTH - 3) }' "$FINAL")
CREGS=$(awk '/consumer_regs = COLS == / { if (match($0, /: [0-9]+;/)) print substr($0, RSTART + 2, RLENGTH - 3) }' "$FINAL")
need "the producer's registers" "$PREGS"; need "the consumers' registers" "$CREGS"
# the staging boxes of a band of the 128 x 128 tile
# (128 columns: "full_boxes = COLS / 64" of them, "band_staging = full_boxes * 8192 + ...")
NBOX=$(awk '/full_boxes = COLS \/ [0-9]+/ { if (match($0, /COLS \/ [0-9]+/)) print 128 / substr($0, RSTART + 7, RLENGTH - 7) }' "$FINAL")
BOXB=$(awk '/band_staging = full_boxes \* [0-9]+/ { if (match($0, /\* [0-9]+/)) print substr($0, RSTART + 2, RLENGTH - 2) }' "$FINAL")
need "the staging boxes" "$NBOX"; need "the staging box's bytes" "$BOXB"
# the barriers' arrival counts and the store's thread
EMPTY_CNT=$(grep -o 'mbarrier_init(smem_addr(&empty\[s\]), [^)]*)' "$FINAL" | sed 's/.*), //; s/)$//')
STAGED_CNT=$(grep -o 'mbarrier_init(smem_addr(&staged\[c\]), [0-9][0-9]*)' "$FINAL" | sed 's/.*), //; s/)$//')
FULL_CNT=$(grep -o 'mbarrier_init(smem_addr(&full\[s\]), [0-9][0-9]*)' "$FINAL" | sed 's/.*), //; s/)$//')
UNSTAGED_CNT=$(grep -o 'mbarrier_init(smem_addr(&unstaged\[c\]), [0-9][0-9]*)' "$FINAL" | sed 's/.*), //; s/)$//')
STORER=$(grep -o 'handoff && threadIdx.x == [0-9][0-9]*' "$FINAL" | awk '{ print $NF }')
# (the 128-row tiles' producer: thread 0; the narrow tiles' is an elected lane of warp 0)
LOADER=$(grep -o 'elect_one_sync() : threadIdx.x == [0-9][0-9]*) {' "$FINAL" | awk '{ print $5 }' | tr -d ')')
KSTEP=$(grep -o 'k < BK / [0-9][0-9]*' "$FINAL" | head -n 1 | awk '{ print $NF }' || true)
need "empty's count" "$EMPTY_CNT"; need "staged's count" "$STAGED_CNT"
need "full's count" "$FULL_CNT"; need "unstaged's count" "$UNSTAGED_CNT"
need "the store's thread" "$STORER"; need "the load thread" "$LOADER"; need "the wgmma k" "$KSTEP"
# --- gemm07_sm90a.cuh: A's scales as TMA boxes of box_rows x 1 ---
SBOX1=$(awk '/d\.box\[1\] = / { sub(/.*= /, ""); sub(/;.*/, ""); print }' "$SCALEMAP")
need "the scale box" "$SBOX1"

VARS="-v SB=$SB -v L4MUL=$L4MUL -v BN=$BN -v BK=$BK -v CLUSTER=$CLUSTER -v CONS=$CONS
      -v DEPTH_T=$DEPTH_T -v DEPTH_B=$DEPTH_B -v PREGS=$PREGS -v CREGS=$CREGS -v NBOX=$NBOX
      -v BOXB=$BOXB -v FULL_CNT=$FULL_CNT -v STAGED_CNT=$STAGED_CNT -v UNSTAGED_CNT=$UNSTAGED_CNT
      -v STORER=$STORER -v LOADER=$LOADER -v KSTEP=$KSTEP -v SBOX1=$SBOX1"

# The SVG helpers every chapter's figures use (common/svg.awk), prepended to each awk program.
LIB=$(cat ../common/svg.awk)

# ---------------------------------------------------------------------------------------------
# Figure 1: the block scales on a small example, M = 256, N = 384, K = 640: L = 5 K blocks,
# L4 = 8 (L rounded up to 4), tiles of 128 x BN; the tile at tile row 1, tile column 2.
awk $VARS -v IDX_A="$IDX_A" -v IDX_B="$IDX_B" "$LIB"'
function sa(i, kb) { return kb * M + i }          # common/gemm_ref.h: gemm_ref_scale_a_index
function sb(nb, kb) { return nb * L4 + kb }       # gemm_ref_scale_b_index
BEGIN {
    M = 256; N = 384; K = 640; TM = 1; TN = 2; ROW = 150
    L = int((K + SB - 1) / SB); L4 = int((L + L4MUL - 1) / L4MUL) * L4MUL
    BM = 64 * CONS; NB = int((N + SB - 1) / SB)
    W = 1200; H = 730
    CA = "#9ecae1"; CB = "#fdd0a2"; HI = "#e6550d"; HA = "#3182bd"; GR = "#f0f0f0"; PAD = "#d9d9d9"
    svg_open(W, H, "Block scales: A one per 1 x " SB " slice of a row, B one per " SB " x " SB " block, and the scales one output tile reads per K tile", 1)
    text(20, 28, "Block scales (DeepSeek-V3): which scales one output tile reads for each K tile", 17, "start", "bold")
    text(20, 50, "Example: M = " M ", N = " N ", K = " K ", so L = ceil(K / " SB ") = " L " K blocks and L4 = L rounded up to a multiple of " L4MUL " = " L4 ". Layouts as in common/gemm_ref.h (cuBLASLt&#8217;s).", 12, "start", "normal", "#444444")
    text(20, 67, "Highlighted: the output tile at tile row " TM ", tile column " TN " (rows " TM * BM "-" TM * BM + BM - 1 ", columns " TN * BN "-" TN * BN + BN - 1 "; a tile is " BM " x " BN ", a K tile " BK " of k).", 12, "start", "normal", "#444444")

    # ---- A: M x K, K blocks of SB columns; 1 px per row ----
    AX = 110; AY = 120; KW = 60; RH = 1
    text(AX, AY - 24, "A (M x K): a scale per 1 x " SB " slice of a row", 13, "start", "bold")
    for (kb = 0; kb < L; kb++) {
        rect(AX + kb * KW, AY, KW, M * RH, CA, "#6b6b6b", 0.8)
        text(AX + kb * KW + KW / 2, AY - 6, "kb = " kb, 10.5, "middle", "normal", "#555555")
    }
    rect(AX, AY + TM * BM * RH, L * KW, BM * RH, HA, "none", 0); printf "<!-- the tile rows -->\n"
    rect(AX, AY + TM * BM * RH, L * KW, BM * RH, "none", "#08519c", 2)
    for (kb = 0; kb <= L; kb++) line(AX + kb * KW, AY, AX + kb * KW, AY + M * RH, "#6b6b6b", 0.8)
    line(AX, AY + ROW * RH, AX + L * KW, AY + ROW * RH, HI, 3)
    text(AX - 6, AY + 10, "row 0", 10, "end", "normal", "#555555")
    text(AX - 6, AY + TM * BM * RH + 10, "row " TM * BM, 10, "end", "normal", "#555555")
    text(AX - 6, AY + ROW * RH + 4, "row i = " ROW, 10, "end", "bold", HI)
    text(AX - 6, AY + M * RH, "row " M - 1, 10, "end", "normal", "#555555")
    y = AY + M * RH + 22
    text(AX, y, "Row i = " ROW ": " L " slices, " L " scales, at scale_a[" IDX_A "]:", 11.5, "start", "normal")
    s = ""; for (kb = 0; kb < L; kb++) s = s (kb ? ", " : "") sa(ROW, kb)
    text(AX, y + 17, s " (kb = 0.." L - 1 ", M = " M ")", 11.5, "start", "bold", HI)
    text(AX, y + 34, "The tile&#8217;s " BM " rows at one kb: " BM " consecutive floats.", 11.5, "start", "normal")

    # ---- B: N x K, SB x SB blocks ----
    BX = 500; BY = 120; BW = 62; BH = 62
    text(BX, BY - 24, "B (N x K): a scale per " SB " x " SB " block", 13, "start", "bold")
    for (nb = 0; nb < NB; nb++) {
        text(BX - 6, BY + nb * BH + BH / 2 + 4, "nb = " nb, 10.5, "end", "normal", "#555555")
        for (kb = 0; kb < L; kb++) {
            f = (nb == TN) ? HI : CB
            rect(BX + kb * BW, BY + nb * BH, BW, BH, f, "#6b6b6b", 0.8)
            text(BX + kb * BW + BW / 2, BY + nb * BH + BH / 2 + 4, sb(nb, kb), 12, "middle", (nb == TN ? "bold" : "normal"), (nb == TN ? "#ffffff" : "#222222"))
        }
    }
    for (kb = 0; kb < L; kb++) text(BX + kb * BW + BW / 2, BY - 6, "kb = " kb, 10.5, "middle", "normal", "#555555")
    text(BX, BY + NB * BH + 20, "Cell: the block&#8217;s index in scale_b, " IDX_B ".", 11.5, "start", "normal")
    text(BX, BY + NB * BH + 37, "The tile&#8217;s " BN " columns lie in one block row (nb = " TN "):", 11.5, "start", "normal")
    text(BX, BY + NB * BH + 54, "one float per K tile for the whole tile.", 11.5, "start", "normal")

    # ---- C: the tile grid ----
    CX = 900; CY = 120; CW = 86; CH = 86
    text(CX, CY - 24, "D (M x N): tiles of " BM " x " BN, 13, "start", "bold")
    for (tm = 0; tm < M / BM; tm++) for (tn = 0; tn < N / BN; tn++) {
        hit = (tm == TM && tn == TN)
        rect(CX + tn * CW, CY + tm * CH, CW, CH, hit ? "#fdae6b" : GR, hit ? HI : "#6b6b6b", hit ? 3 : 0.8)
        text(CX + tn * CW + CW / 2, CY + tm * CH + CH / 2 + 4, "(" tm ", " tn ")", 11, "middle", hit ? "bold" : "normal")
    }
    text(CX, CY + 2 * CH + 20, "Its sum over K tiles kb = 0.." L - 1 ":", 11.5, "start", "normal")
    text(CX, CY + 2 * CH + 37, "D[i][j] = &#931; sa(i, kb) &#183; sb(" TN ", kb) &#183; P(kb)[i][j],", 11.5, "start", "normal")
    text(CX, CY + 2 * CH + 54, "P(kb) the e4m3 product of K tile kb.", 11.5, "start", "normal")

    # ---- the two arrays in memory ----
    y0 = 500
    text(20, y0 - 14, "In memory. scale_a: L columns of M floats (M contiguous); scale_b: ceil(N / " SB ") columns of L4 floats, entries kb &#8805; L padding (written 0, never read).", 12, "start", "bold")
    # scale_a: L segments of M entries, 1 px per 1.6 entries
    PX = 1080 / (L * M); x0 = 60
    text(x0 - 8, y0 + 17, "scale_a", 11, "end", "bold")
    for (kb = 0; kb < L; kb++) {
        rect(x0 + kb * M * PX, y0, M * PX, 26, CA, "#6b6b6b", 0.8)
        rect(x0 + (kb * M + TM * BM) * PX, y0, BM * PX, 26, HA, "#08519c", 1.5)
        line(x0 + sa(ROW, kb) * PX, y0 - 3, x0 + sa(ROW, kb) * PX, y0 + 29, HI, 2.5)
        text(x0 + kb * M * PX + M * PX / 2, y0 + 44, "kb = " kb ": [" kb * M " .. " kb * M + M - 1 "]", 10.5, "middle", "normal", "#555555")
    }
    text(x0, y0 + 64, "Dark: what the tile reads, per K tile the " BM " floats scale_a[kb &#183; " M " + " TM * BM " .. kb &#183; " M " + " TM * BM + BM - 1 "]: one TMA box of " BM " x " SBOX1 " floats (gemm07_sm90a.cuh), " BM * 4 " bytes", 11, "start", "normal")
    text(x0, y0 + 80, "loaded with the K tile&#8217;s operands, on the same full barrier. Orange marks: row " ROW "&#8217;s scales.", 11, "start", "normal")
    # scale_b: NB * L4 cells
    y1 = y0 + 112; CWB = 1080 / (NB * L4)
    text(x0 - 8, y1 + 17, "scale_b", 11, "end", "bold")
    for (nb = 0; nb < NB; nb++) for (kb = 0; kb < L4; kb++) {
        i = sb(nb, kb)
        f = kb >= L ? PAD : (nb == TN ? HI : CB)
        rect(x0 + i * CWB, y1, CWB, 26, f, "#6b6b6b", 0.8)
        text(x0 + i * CWB + CWB / 2, y1 + 17, i, 10, "middle", "normal", (nb == TN && kb < L) ? "#ffffff" : "#333333")
    }
    for (nb = 0; nb < NB; nb++) text(x0 + (nb * L4 + L4 / 2) * CWB, y1 + 44, "nb = " nb ": kb = 0.." L4 - 1, 10.5, "middle", "normal", "#555555")
    text(x0, y1 + 64, "Orange: the tile&#8217;s " L " scales, scale_b[" TN " &#183; " L4 " + kb], one per K tile, read once for every thread of the tile; grey: padding (kb = " L ".." L4 - 1 ").", 11, "start", "normal")
    text(20, H - 14, "Per K tile the tile needs " BM " + 1 scales; each thread multiplies its two rows&#8217; partial sums by sa(row, kb) &#183; sb(nb, kb) as it adds them into its fp32 sums (the promotion figure).", 11.5, "start", "normal", "#444444")
    svg_close()
}' >figures/block_scales.svg

# ---------------------------------------------------------------------------------------------
# Figure 2: promotion. The bits: an fp32 significand is 24 bits; the FP8 wgmma's accumulator
# keeps about 14 between its k32 steps (DeepSeek-V3's report; README "Correctness").
awk $VARS "$LIB"'
BEGIN {
    STEPS = BK / KSTEP; TILES = 4; REGS = BN / 2
    W = 1240; H = 520
    CP = "#c7e9c0"; CPS = "#41ab5d"; CS = "#9ecae1"; CSS = "#2171b5"; CX = "#fdd0a2"
    svg_open(W, H, "Promotion: each K tile of " BK " summed by the tensor core in " STEPS " k" KSTEP " steps, then scaled and added into fp32 registers", 1)
    text(20, 28, "Promotion: the tensor core sums one K tile, the warpgroup adds it into fp32", 17, "start", "bold")
    text(20, 50, "Each consumer thread holds two register sets for its part of a 64 x " BN " band: part (the tensor core&#8217;s accumulator, " REGS " registers) and sum (fp32, " REGS " registers).", 12, "start", "normal", "#444444")
    text(20, 67, "A K tile is " BK " of k = " STEPS " wgmma steps of k" KSTEP ". The tensor core&#8217;s running sum between its steps keeps about 14 bits of significand (fp32 has 24):", 12, "start", "normal", "#444444")
    text(20, 84, "summed over " STEPS " steps that loses little; summed over a whole long K loop it drops the low bits of every addend (stage 2&#8217;s error, growing with K).", 12, "start", "normal", "#444444")

    X0 = 40; TW = 246; GAP = 8; Y0 = 130
    for (t = 0; t < TILES; t++) {
        x = X0 + t * (TW + GAP)
        text(x + TW / 2, Y0 - 12, "K tile t = " t ": k " t * BK " .. " t * BK + BK - 1, 12, "middle", "bold")
        sw = (TW - 10) / STEPS
        for (j = 0; j < STEPS; j++) {
            rect(x + 5 + j * sw, Y0, sw - 4, 34, "#ffffff", "#6b6b6b", 1)
            text(x + 5 + j * sw + sw / 2 - 2, Y0 + 15, "wgmma", 10.5, "middle", "normal")
            text(x + 5 + j * sw + sw / 2 - 2, Y0 + 28, "k" KSTEP " #" j, 10.5, "middle", "normal", "#555555")
            if (j > 0) arrow(x + 5 + j * sw - 5, Y0 + 17, x + 5 + j * sw - 1, Y0 + 17, "#444444", 1)
        }
        # part: the short accumulator
        py = Y0 + 70
        rrect(x + 14, py, TW - 28, 44, CP, CPS, 1.5)
        text(x + TW / 2, py + 18, "part (tensor core)", 12, "middle", "bold")
        text(x + TW / 2, py + 34, "starts at 0 (scale-d = 0), ~14 bits", 11, "middle", "normal", "#333333")
        arrow(x + TW / 2, Y0 + 36, x + TW / 2, py - 2, CPS, 2)
        # the factor
        fy = py + 76
        rrect(x + 14, fy, TW - 28, 40, CX, "#d94801", 1.2)
        text(x + TW / 2, fy + 17, "&#215; sa(row, t) &#183; sb(nb, t)", 12, "middle", "bold")
        text(x + TW / 2, fy + 32, "block scales (stage 4); per tensor: 1", 10.5, "middle", "normal", "#333333")
        arrow(x + TW / 2, py + 46, x + TW / 2, fy - 2, "#444444", 1.5)
        # into sum
        arrow(x + TW / 2, fy + 42, x + TW / 2, 372, CSS, 2)
        text(x + TW / 2 + 8, 358, "+=  (" REGS " FADD or FFMA)", 11, "start", "normal", CSS)
    }
    # the fp32 sum, across all tiles
    SY = 374
    rrect(X0, SY, TILES * (TW + GAP) - GAP, 50, CS, CSS, 2)
    text(X0 + (TILES * (TW + GAP) - GAP) / 2, SY + 21, "sum: fp32 registers (24-bit significand), one long sum over every K tile", 13, "middle", "bold")
    text(X0 + (TILES * (TW + GAP) - GAP) / 2, SY + 39, "its additions round at 2⁻²⁴ of the sum, far finer than the tensor core’s running sum (about 2⁻¹⁴)", 11, "middle", "normal", "#333333")
    arrow(X0 + TILES * (TW + GAP) - GAP + 4, SY + 25, X0 + TILES * (TW + GAP) + 34, SY + 25, CSS, 2)
    text(X0 + TILES * (TW + GAP) + 36, SY + 20, "epilogue:", 11, "start", "bold")
    text(X0 + TILES * (TW + GAP) + 36, SY + 34, "per tensor: &#215; sa &#183; sb", 10.5, "start", "normal")
    text(X0 + TILES * (TW + GAP) + 36, SY + 48, "then bf16, once", 10.5, "start", "normal")
    y = SY + 84
    text(20, y, "Order in one K tile: wait for the slot; " STEPS " wgmmas into part; commit; wait for the group (stage 3: all of it; stage 5: all but the next K tile&#8217;s, which", 11.5, "start", "normal")
    text(20, y + 17, "runs in a second accumulator meanwhile); fence part; hand the slot back; then the " REGS " adds. The tensor core never sums more than " BK " of k in its own registers.", 11.5, "start", "normal")
    text(20, y + 34, "Registers: part and sum are " 2 * REGS " of a consumer thread&#8217;s " CREGS " (stage 5 adds a second part: " 3 * REGS ").", 11.5, "start", "normal")
    svg_close()
}' >figures/promotion.svg

# ---------------------------------------------------------------------------------------------
# Figure 3: the block of stages 7-13 (their 128 x 128 tile: CONS consumers of 64 rows, a
# cluster of CLUSTER blocks sharing B), its ring and barriers, and the handed-off store.
awk $VARS -v EMPTY_CNT="$EMPTY_CNT" "$LIB"'
BEGIN {
    BM = 64 * CONS; ABYTES = BM * BK; BBYTES = BN * BK; SLOT = ABYTES + BBYTES
    E = EMPTY_CNT; gsub(/CL/, CLUSTER, E); gsub(/CONS/, CONS, E); n = split(E, f, " \\* "); ECNT = 1
    for (i = 1; i <= n; i++) ECNT *= f[i]
    STAGING = NBOX * BOXB; SMEM = DEPTH_T * SLOT + CONS * STAGING + 1024
    W = 1240; H = 790
    CPR = "#fdd0a2"; CCO = "#c6dbef"; CSL = "#f7f7f7"; CA = "#9ecae1"; CB = "#fdae6b"; CST = "#d9f0d3"
    GRN = "#2a7a2a"; RED = "#b30000"; PUR = "#7a3e9d"; BLU = "#2171b5"; ORA = "#d94801"
    svg_open(W, H, "Stages 7-9: one producer warpgroup, " CONS " consumer warpgroups, a ring of " DEPTH_T " slots, full and empty barriers, the store handed to a producer thread", 1)
    text(20, 28, "The block of stages 7-13: a producer warpgroup, " CONS " consumer warpgroups, a ring of slots, the store handed off", 17, "start", "bold")
    text(20, 50, "The " BM " x " BN " tile, per tensor, one block of a cluster of " CLUSTER ": " DEPTH_T " slots (block-scaled: " DEPTH_B ", and A&#8217;s " BM " scales of each slot&#8217;s K tile beside the ring). " 128 * (1 + CONS) " threads; setmaxnreg gives the producer", 12, "start", "normal", "#444444")
    text(20, 67, PREGS " registers a thread and each consumer " CREGS ". Shared memory: " DEPTH_T " slots of " kib(SLOT) " + " CONS " x " NBOX " staging boxes of " kib(BOXB) " + 1 KiB for alignment = " kib(SMEM) ".", 12, "start", "normal", "#444444")

    # ---- producer warpgroup ----
    PX = 20; PY = 100; PW = 300; PH = 410
    rrect(PX, PY, PW, PH, CPR, ORA, 1.5)
    text(PX + 12, PY + 22, "Producer warpgroup (warpgroup 0)", 13, "start", "bold")
    text(PX + 12, PY + 39, "setmaxnreg " PREGS "; threads 0-127", 11, "start", "normal", "#444444")
    rrect(PX + 12, PY + 54, PW - 24, 170, "#ffffff", ORA, 1)
    text(PX + 22, PY + 74, "thread " LOADER ": the loads", 12, "start", "bold")
    text(PX + 22, PY + 94, "for each K tile t of each tile:", 11, "start", "normal")
    text(PX + 22, PY + 112, "  s = slot of t (a ring of " DEPTH_T ")", 11, "start", "normal")
    text(PX + 22, PY + 130, "  wait empty[s]", 11, "start", "normal")
    text(PX + 22, PY + 148, "  expect_tx(full[s], " kib(SLOT) ")", 11, "start", "normal")
    text(PX + 22, PY + 166, "  TMA: A&#8217;s " BM " x " BK " tile (" kib(ABYTES) ")", 11, "start", "normal")
    text(PX + 22, PY + 184, "  TMA multicast: half of B&#8217;s tile", 11, "start", "normal")
    text(PX + 22, PY + 202, "    (" kib(BBYTES / CLUSTER) ", into both blocks)", 11, "start", "normal")
    rrect(PX + 12, PY + 238, PW - 24, 130, "#ffffff", ORA, 1)
    text(PX + 22, PY + 258, "thread " STORER ": the stores", 12, "start", "bold")
    text(PX + 22, PY + 278, "for each tile, each consumer c:", 11, "start", "normal")
    text(PX + 22, PY + 296, "  wait staged[c]", 11, "start", "normal")
    text(PX + 22, PY + 314, "  TMA store: " NBOX " boxes of 64 x 64 bf16", 11, "start", "normal")
    text(PX + 22, PY + 332, "  wait until they are read", 11, "start", "normal")
    text(PX + 22, PY + 350, "  arrive unstaged[c]", 11, "start", "normal")
    text(PX + 22, PY + 392, "the other 126 threads: idle", 10.5, "start", "normal", "#666666")
    # D in global memory
    rrect(PX + 40, PY + PH + 40, PW - 80, 40, "#ffffff", "#444444", 1.2)
    text(PX + PW / 2, PY + PH + 65, "D (bf16, global memory)", 12, "middle", "bold")
    arrow(PX + PW - 50, PY + 370, PX + PW - 50, PY + PH + 38, ORA, 2)

    # ---- the ring ----
    RX = 470; RY = 130; SW = 100; SH = 150; SG = 8
    text(RX, RY - 18, "The ring: " DEPTH_T " slots in shared memory, one K tile (" BK " of k) each", 13, "start", "bold")
    for (s = 0; s < DEPTH_T; s++) {
        x = RX + s * (SW + SG)
        rect(x, RY, SW, SH, CSL, "#6b6b6b", 1)
        ah = SH * ABYTES / SLOT
        rect(x + 6, RY + 6, SW - 12, ah - 9, CA, "#3182bd", 0.8)
        text(x + SW / 2, RY + ah / 2 + 2, "A " BM " x " BK, 10.5, "middle", "normal")
        rect(x + 6, RY + ah + 3, SW - 12, SH - ah - 9, CB, ORA, 0.8)
        text(x + SW / 2, RY + ah + (SH - ah) / 2, "B " BN " x " BK, 10.5, "middle", "normal")
        text(x + SW / 2, RY + SH + 16, "slot " s, 11, "middle", "bold")
        rect(x + 8, RY + SH + 24, SW - 16, 20, "#ffffff", GRN, 1.2)
        text(x + SW / 2, RY + SH + 38, "full[" s "]", 10.5, "middle", "normal", GRN)
        rect(x + 8, RY + SH + 48, SW - 16, 20, "#ffffff", RED, 1.2)
        text(x + SW / 2, RY + SH + 62, "empty[" s "]", 10.5, "middle", "normal", RED)
    }
    arrow(PX + PW + 4, PY + 140, RX - 6, RY + 60, ORA, 2)
    text(PX + PW + 24, PY + 84, "TMA loads", 11, "start", "bold", ORA)
    text(PX + PW + 24, PY + 100, "into slot s", 11, "start", "normal", ORA)
    dashed(RX - 6, RY + SH + 58, PX + PW + 4, PY + 176, RED, 1.5, 1)
    text(PX + PW + 24, PY + 232, "empty[s]", 11, "start", "bold", RED)
    text(PX + PW + 24, PY + 248, "slot free", 11, "start", "normal", RED)

    # ---- consumers ----
    CY0 = 400; CWd = 310; CHd = 130; CG = 20
    for (c = 0; c < CONS; c++) {
        x = RX + c * (CWd + CG)
        rrect(x, CY0, CWd, CHd, CCO, BLU, 1.5)
        text(x + 12, CY0 + 22, "Consumer warpgroup " c + 1 " (rows " 64 * c "-" 64 * c + 63 ")", 12.5, "start", "bold")
        text(x + 12, CY0 + 40, "setmaxnreg " CREGS "; threads " 128 * (c + 1) "-" 128 * (c + 2) - 1, 11, "start", "normal", "#444444")
        text(x + 12, CY0 + 60, "per K tile: wait full[s]; " BK / KSTEP " wgmma m64n" BN "k" KSTEP, 11, "start", "normal")
        text(x + 12, CY0 + 77, "into one of two accumulators in turn;", 11, "start", "normal")
        text(x + 12, CY0 + 94, "the K tile before it done: arrive empty[s],", 11, "start", "normal")
        text(x + 12, CY0 + 111, "promote it into the fp32 sum (" BN / 2 " adds)", 11, "start", "normal")
        arrow(x + CWd / 2, RY + SH + 72, x + CWd / 2, CY0 - 4, GRN, 2)
        text(x + CWd / 2 + 8, CY0 - 16, "full[s]: the K tile is in", 10.5, "start", "normal", GRN)
    }

    # ---- the store: staging, staged / unstaged ----
    SY = 590
    for (c = 0; c < CONS; c++) {
        x = RX + c * (CWd + CG)
        rect(x, SY, CWd, 56, CST, GRN, 1.2)
        text(x + CWd / 2, SY + 22, "staging " c + 1 ": " NBOX " boxes of " kib(BOXB), 11.5, "middle", "bold")
        text(x + CWd / 2, SY + 41, "its 64 x " BN " rows in bf16 (stmatrix)", 11, "middle", "normal")
        arrow(x + CWd / 2, CY0 + CHd + 2, x + CWd / 2, SY - 3, BLU, 2)
        text(x + CWd / 2 + 8, CY0 + CHd + 30, "stage, fence, arrive staged[" c "]", 10.5, "start", "normal", BLU)
    }
    dashed(RX - 6, SY + 14, PX + PW + 4, PY + 300, GRN, 1.5, 1)
    text(PX + PW + 42, PY + 318, "staged[c]", 11, "start", "bold", GRN)
    text(PX + PW + 42, PY + 334, "boxes ready", 11, "start", "normal", GRN)
    dashed(PX + PW + 4, PY + 350, RX - 6, SY + 46, PUR, 1.5, 1)
    text(PX + PW + 20, PY + 500, "unstaged[c]", 11, "start", "bold", PUR)
    text(PX + PW + 20, PY + 516, "boxes read", 11, "start", "normal", PUR)

    y = 680
    text(20, y, "Barriers (arrivals a phase): full[s] " FULL_CNT " (the load thread&#8217;s expect_tx) plus the slot&#8217;s " kib(SLOT) " of TMA bytes, B&#8217;s halves from either block; empty[s] " ECNT " (" EMPTY_CNT ":", 11.5, "start", "normal")
    text(20, y + 17, "lane 0 of each consumer warp of both blocks, since B&#8217;s halves land in both); staged[c] " STAGED_CNT " (every thread of consumer c); unstaged[c] " UNSTAGED_CNT " (the store thread).", 11.5, "start", "normal")
    text(20, y + 40, "A consumer waits on unstaged[c] only before staging its next tile, a whole tile later, and is back in its K loop at once: the two consumers, which reach their", 11.5, "start", "normal")
    text(20, y + 57, "stores together, no longer hold the tensor core while the stores drain. Persistent: each cluster walks its tiles in the grouped order, and the ring runs across", 11.5, "start", "normal")
    text(20, y + 74, "tile boundaries (the next tile&#8217;s loads start while this one is promoted and stored).", 11.5, "start", "normal")
    svg_close()
}' >figures/pipeline.svg

# ---------------------------------------------------------------------------------------------
# Figure 4: what a cluster of two asks of L2 per K tile. Stages 6-8 and the final's 128 x 128
# tile stack their blocks along M and share B (each block loads half of B's tile, multicast);
# the final's wide tile (256 x 128, two consumers of two 64-row bands) puts them side by side
# along N and shares A. The sizes: final07_shape's bm (64-row bands x CONS x WAVES), BN, BK,
# CLUSTER, the launchers' CONS and WAVES, and the halves the load thread multicasts.
BAND=$(awk '/static constexpr int bm = [0-9]+ \* CONS \* WAVES/ { if (match($0, /= [0-9]+ \*/)) print substr($0, RSTART + 2, RLENGTH - 4) }' "$FINAL")
need "a band's rows (final07_shape's bm)" "$BAND"
# (each grep ends in || true: one that finds nothing reaches need, which names the value)
WIDE=$(grep -o 'launch_final07<BLOCK, [0-9][0-9]*, [0-9][0-9]*, CLUSTER, false, BN, true>' "$FINAL" | head -n 1 || true)
need "the wide tile's launch (SHARE_A)" "$WIDE"
CONS_W=$(echo "$WIDE" | awk -F'[<,]' '{ gsub(/ /, "", $3); print $3 }')
WAVES_W=$(echo "$WIDE" | awk -F'[<,]' '{ gsub(/ /, "", $4); print $4 }')
need "the wide tile's consumers" "$CONS_W"; need "the wide tile's bands a consumer" "$WAVES_W"
# the shared halves: SHARE_A multicasts A's rows rank * (BM / CL) on, the others B's rows
# rank * (COLS / CL) on; row_of / col_of place the blocks along M or N
need "A's half (a_half_bytes)" "$(grep -o 'a_half_bytes = bm / CL \* BK' "$FINAL" | head -n 1 || true)"
need "B's half (b_half_bytes)" "$(grep -o 'b_half_bytes = COLS / CL \* BK' "$FINAL" | head -n 1 || true)"
need "the multicast of A's half" "$(grep -o 'm0 + (int)rank \* (BM / CL), (1u << CL) - 1' "$FINAL" | head -n 1 || true)"
need "the multicast of B's half" "$(grep -o 'n0 + (int)rank \* (COLS / CL),' "$FINAL" | head -n 1 || true)"
need "the blocks along M (row_of)" "$(grep -o 'SHARE_A ? pm : pm \* CL + (int)r' "$FINAL" | head -n 1 || true)"
need "the blocks along N (col_of)" "$(grep -o 'SHARE_A ? tn \* CL + (int)r : tn' "$FINAL" | head -n 1 || true)"
[ "$CLUSTER" = 2 ] || { echo "figures.sh: cluster_sharing.svg draws a cluster of 2 (CLUSTER = $CLUSTER)" >&2; exit 1; }

awk $VARS -v BAND=$BAND -v CONS_W=$CONS_W -v WAVES_W=$WAVES_W "$LIB"'
function bpo(b) { return (b * 10 == int(b * 10)) ? sprintf("%.1f", b) : sprintf("%.2f", b) }
function hatch(id, bg, fg) {
    printf "<defs><pattern id=\"%s\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\" patternTransform=\"rotate(45)\">", id
    printf "<rect width=\"8\" height=\"8\" fill=\"%s\"/><line x1=\"2\" y1=\"0\" x2=\"2\" y2=\"8\" stroke=\"%s\" stroke-width=\"2.5\"/></pattern></defs>\n", bg, fg
}
function pill(x, y, s1, s2, s3,   w, h) { # a label on white, centred at x, y (two or three lines)
    w = 8 + 6.4 * max(length(s1), max(length(s2), length(s3))); h = s3 == "" ? 32 : 46
    rrect(x - w / 2, y - h / 2, w, h, "#ffffff", "#9a9a9a", 0.8)
    text(x, y - h / 2 + 14, s1, 11, "middle", "bold")
    text(x, y - h / 2 + 28, s2, 10.5, "middle", "normal", "#333333")
    if (s3 != "") text(x, y - h / 2 + 42, s3, 10.5, "middle", "normal", "#333333")
}
# one cluster: A (rows x BK) left of D, B (drawn as BK x columns, a row of B per column of D)
# above it; share = "B": blocks stacked along M, each loading its own A rows and half of B;
# share = "A": side by side along N, each loading half of A and its own B rows.
function cluster(x0, share, tm, tn, cons, waves,   rows, cols, ax, dx, by, dy, r, y, x, h, w, ab, bb, o, c) {
    rows = share == "B" ? CLUSTER * tm : tm; cols = share == "B" ? tn : CLUSTER * tn
    ax = x0 + 74; dx = ax + BK * S + 22; by = Y0 + 86; dy = by + BK * S + 22
    ab = rows * BK; bb = cols * BK; o = rows * cols
    text(x0, Y0 - 6, (share == "B" ? "Stages 6-8, the final&#8217;s " tm " x " tn ": stacked along M, sharing B" : "The final&#8217;s wide tile, " tm " x " tn ": side by side along N, sharing A"), 14, "start", "bold")
    text(x0, Y0 + 12, "A block: " cons " consumer warpgroups (wg), each with " waves " band" (waves > 1 ? "s" : "") " of " BAND " rows;", 11.5, "start", "normal", "#444444")
    text(x0, Y0 + 28, "the cluster computes " rows " x " cols " outputs.", 11.5, "start", "normal", "#444444")
    # ---- A: rows x BK ----
    text(ax + BK * S / 2, dy - 26, "A&#8217;s K tile", 12.5, "middle", "bold")
    text(ax + BK * S / 2, dy - 10, rows " rows x " BK " of k (" kib(ab) ")", 10.5, "middle", "normal", "#555555")
    h = rows / CLUSTER * S
    for (r = 0; r < CLUSTER; r++) {
        y = dy + r * h
        rect(ax, y, BK * S, h, share == "A" ? "url(#hatch" r ")" : FILL[r], EDGE[r], 1.2)
        text(ax - 6, y + 12, "rows " r * rows / CLUSTER "-" (r + 1) * rows / CLUSTER - 1, 10.5, "end", "normal", "#555555")
        if (share == "A") pill(ax + BK * S / 2, y + h / 2, "block " r, kib(ab / CLUSTER) ", multicast", "to both blocks")
        else pill(ax + BK * S / 2, y + h / 2, "block " r, kib(ab / CLUSTER) ", its own")
    }
    # ---- B: a row of B per column of D ----
    text(dx + cols * S / 2, by - 38, "B&#8217;s K tile", 12.5, "middle", "bold")
    text(dx + cols * S / 2, by - 23, cols " rows (D&#8217;s columns) x " BK " of k (" kib(bb) ")", 10.5, "middle", "normal", "#555555")
    w = cols / CLUSTER * S
    for (r = 0; r < CLUSTER; r++) {
        x = dx + r * w
        rect(x, by, w, BK * S, share == "B" ? "url(#hatch" r ")" : FILL[r], EDGE[r], 1.2)
        text(x + w / 2, by - 7, "rows " r * cols / CLUSTER "-" (r + 1) * cols / CLUSTER - 1, 10.5, "middle", "normal", "#555555")
        if (share == "B") pill(x + w / 2, by + BK * S / 2, "block " r, kib(bb / CLUSTER) ",", "multicast")
        else pill(x + w / 2, by + BK * S / 2, "block " r, kib(bb / CLUSTER) ", its own")
    }
    # ---- D: the tiles of the two blocks, their bands ----
    for (r = 0; r < CLUSTER; r++) {
        x = share == "B" ? dx : dx + r * tn * S; y = share == "B" ? dy + r * tm * S : dy
        rrect(x, y, tn * S, tm * S, TINT[r], EDGE[r], 2)
        for (c = 1; c < tm / BAND; c++) { # a band boundary: ticks at both edges
            dashed(x + 3, y + c * BAND * S, x + 30, y + c * BAND * S, "#8a8a8a", 1, 0)
            dashed(x + tn * S - 30, y + c * BAND * S, x + tn * S - 3, y + c * BAND * S, "#8a8a8a", 1, 0)
        }
        text(x + tn * S / 2, y + tm * S / 2 - 22, "block " r, 14, "middle", "bold", EDGE[r])
        text(x + tn * S / 2, y + tm * S / 2 - 5, "D: " tm " x " tn, 11, "middle", "normal")
        text(x + tn * S / 2, y + tm * S / 2 + 12, "reads " (share == "B" ? "A rows " r * tm "-" (r + 1) * tm - 1 : "all of A"), 10.5, "middle", "normal", "#444444")
        text(x + tn * S / 2, y + tm * S / 2 + 26, "and " (share == "B" ? "all of B" : "B rows " r * tn "-" (r + 1) * tn - 1), 10.5, "middle", "normal", "#444444")
    }
    for (c = 0; c < rows / BAND; c++) # the bands: which consumer warpgroup computes them
        text(dx + cols * S + 6, dy + (c + 0.5) * BAND * S + 4, "wg " int((c % (tm / BAND)) / waves) + 1, 10.5, "start", "normal", "#666666")
    # ---- the bytes ----
    y = dy + rows * S + 30
    text(x0, y, "Per K tile the cluster asks L2 for A " (share == "B" ? CLUSTER " x " kib(ab / CLUSTER) : kib(ab)) " + B " (share == "B" ? kib(bb) : CLUSTER " x " kib(bb / CLUSTER)) " = " kib(ab + bb), 12, "start", "normal")
    text(x0, y + 18, "for " rows " x " cols " = " o " outputs:", 12, "start", "normal")
    text(x0, y + 44, kib(ab + bb) " / " o " = " bpo((ab + bb) / o) " bytes per output", 17, "start", "bold", share == "B" ? "#7f2704" : "#08519c")
}
BEGIN {
    TM = BAND * CONS; TW = BAND * CONS_W * WAVES_W
    S = 1.3; Y0 = 150
    FILL[0] = "#9ecae1"; EDGE[0] = "#2171b5"; TINT[0] = "#eef5fb"
    FILL[1] = "#fdd0a2"; EDGE[1] = "#d94801"; TINT[1] = "#fff3e8"
    W = 1240; H = int(Y0 + 86 + BK * S + 22 + max(2 * TM, TW) * S + 84)
    svg_open(W, H, "A cluster of two shares B (" TM " x " BN " tiles, stacked along M) or A (" TW " x " BN ", side by side along N): what each block loads per K tile, and the bytes per output", 1)
    hatch("hatch0", FILL[0], EDGE[0]); hatch("hatch1", FILL[1], EDGE[1])
    text(20, 28, "A cluster of two blocks shares one operand by TMA multicast: B for " TM " x " BN " tiles, A for " TW " x " BN, 17, "start", "bold")
    text(20, 50, "One K tile (" BK " of k; e4m3, " BK " bytes a row), drawn to scale. Every block needs its whole A and B tile in its slot; of the shared operand each block loads", 12, "start", "normal", "#444444")
    text(20, 67, "half and multicasts it into both blocks, so L2 sends it once. Colour: the block that loads the rows; hatched: multicast to both blocks; plain: loaded for itself only.", 12, "start", "normal", "#444444")
    # the legend
    lx = 20; ly = 84
    for (r = 0; r < CLUSTER; r++) {
        rect(lx, ly, 22, 14, FILL[r], EDGE[r], 1.2); text(lx + 28, ly + 11, "block " r ", for itself", 11, "start", "normal")
        rect(lx + 150, ly, 22, 14, "url(#hatch" r ")", EDGE[r], 1.2); text(lx + 178, ly + 11, "block " r ", multicast to both", 11, "start", "normal")
        lx += 390
    }
    text(lx, ly + 11, "wg: the consumer warpgroup of a " BAND "-row band", 11, "start", "normal", "#666666")
    cluster(20, "B", TM, BN, CONS, 1)
    line(560, Y0 - 24, 560, H - 16, "#cccccc", 1)
    cluster(585, "A", TW, BN, CONS_W, WAVES_W)
    svg_close()
}' >figures/cluster_sharing.svg

# --- straddle.svg: the 144-wide tile (its launch) and the boundary the kernel picks per tile ---
WIDE=$(grep -o 'launch_final07<BLOCK, 2, 1, CLUSTER, false, [0-9][0-9]*>' "$FINAL" | head -n 1 | sed 's/.*false, //; s/>//' || true)
need "the 128 x 144 tile's columns" "$WIDE"
# the unit's dispatch: "case k: run(std::integral_constant<int, G>())", k = (n0 % BN) / 16
CASES=$(tr -d '\n' <"$FINAL" | grep -o 'switch (a.n0 % BN / 16) {[^}]*}' | grep -o 'integral_constant<int, [0-9][0-9]*>' | sed 's/.*, //; s/>//' | tr '\n' ' ' || true)
need "the 128 x 144 tile's boundaries" "$CASES"

awk -v BN=$BN -v WIDE=$WIDE -v CASES="$CASES" "$LIB"'
BEGIN {
    NG = split(CASES, GB, " ")                    # GB[k + 1]: groups before the boundary
    STEP = 16                                     # a tile starts at a multiple of 16 (144 j)
    if (NG != BN / STEP) { print "figures.sh: straddle.svg: " NG " boundaries, not " BN / STEP > "/dev/stderr"; exit 1 }
    for (k = 0; k < NG; k++)
        if (GB[k + 1] != (BN - STEP * k) / 8) { print "figures.sh: straddle.svg: case " k " is " GB[k + 1] > "/dev/stderr"; exit 1 }
    T = 0; while ((T * WIDE) % BN || T == 0) T++  # tiles until the pattern repeats
    NB = T * WIDE / BN
    S = 1.0; X0 = 60; Y0 = 128; BH = 30; TH = 34
    W = X0 + NB * BN * S + 60; H = Y0 + BH + 26 + T * (TH + 8) + 60
    FILL[0] = "#9ecae1"; EDGE[0] = "#2171b5"; FILL[1] = "#fdd0a2"; EDGE[1] = "#d94801"
    svg_open(W, H, "Block-scaled " BN " x " WIDE " tiles against B&#8217;s " BN "-column scale blocks", 0)
    text(20, 28, "A " WIDE "-column tile crosses one of B&#8217;s " BN "-column scale blocks: two B scales a K tile", 17, "start", "bold")
    text(20, 50, "Tile column j covers columns " WIDE "j .. " WIDE "j + " WIDE - 1 " of D (B&#8217;s rows). Block nb of B has one scale per K tile for its " BN " columns, so the", 12, "start", "normal", "#444444")
    text(20, 67, "columns left of the boundary take block nb&#8217;s scale and the rest block nb + 1&#8217;s. Register i of a consumer holds column 8&#8901;&#8970;i/4&#8971; + 2&#8901;(lane mod 4) + i mod 2:", 12, "start", "normal", "#444444")
    text(20, 84, "group g = &#8970;i/4&#8971; of four registers holds columns 8g .. 8g + 7, and the first G of the " WIDE / 8 " groups take the first scale. The pattern repeats every " T " tiles (" T " x " WIDE " = " NB " x " BN ").", 12, "start", "normal", "#444444")
    text(20, 101, "G has " NG " values; the kernel compiles the K loop once for each and picks it per tile (its switch on (n0 mod " BN ") / " STEP "): no select per register.", 12, "start", "normal", "#444444")
    # the scale blocks of B
    text(X0 - 8, Y0 + BH / 2 + 4, "B", 13, "end", "bold")
    for (b = 0; b < NB; b++) {
        rect(X0 + b * BN * S, Y0, BN * S, BH, FILL[b % 2], EDGE[b % 2], 1.2)
        text(X0 + (b + 0.5) * BN * S, Y0 + BH / 2 + 4, "nb = " b, 11.5, "middle", "bold", EDGE[b % 2])
        text(X0 + b * BN * S, Y0 - 5, b * BN, 10, "middle", "normal", "#666666")
    }
    text(X0 + NB * BN * S, Y0 - 5, NB * BN, 10, "middle", "normal", "#666666")
    # the tiles, one row each: first the boundaries (dashed, up to B), then the tiles and labels
    for (j = 0; j < T; j++) {
        y = Y0 + BH + 26 + j * (TH + 8); n0 = j * WIDE; cut = n0 + 8 * GB[(n0 % BN) / STEP + 1]
        dashed(X0 + cut * S, Y0 + BH, X0 + cut * S, y + TH, "#555555", 0.8, 0)
    }
    for (j = 0; j < T; j++) {
        y = Y0 + BH + 26 + j * (TH + 8); n0 = j * WIDE; nb = int(n0 / BN)
        k = (n0 % BN) / STEP; g = GB[k + 1]; cut = n0 + 8 * g
        text(X0 - 8, y + TH / 2 + 4, "j = " j, 11.5, "end", "bold")
        rect(X0 + n0 * S, y, (cut - n0) * S, TH, FILL[nb % 2], EDGE[nb % 2], 1.2)
        rect(X0 + cut * S, y, (n0 + WIDE - cut) * S, TH, FILL[(nb + 1) % 2], EDGE[(nb + 1) % 2], 1.2)
        lab = "G = " g ": " 8 * g " | " WIDE - 8 * g " columns"
        lw = 6.6 * length(lab) + 6                # the label on white, over the dashed lines
        lx = j < T - 1 ? X0 + (n0 + WIDE) * S + 5 : X0 + n0 * S - 5 - lw
        rect(lx, y + TH / 2 - 9, lw, 18, "#ffffff", "#ffffff", 0)
        text(lx + 3, y + TH / 2 + 4, lab, 11.5, "start", "normal")
    }
    y = Y0 + BH + 26 + T * (TH + 8) + 22
    text(20, y, "G = 16 - (n0 mod " BN ") / 8 groups (" BN " - (n0 mod " BN ") columns) take nb = &#8970;n0 / " BN "&#8971;; a tile that starts on a block (j = 0) still crosses into the next at column " BN ".", 12, "start", "normal", "#444444")
    text(20, y + 18, "Each K tile: A&#8217;s two row scales read once (shared memory), times each block&#8217;s B scale (two loads, a K tile ahead): four factors, two FMULs more than a " BN "-wide tile.", 12, "start", "normal", "#444444")
    svg_close()
}' >figures/straddle.svg

ls figures/*.svg
