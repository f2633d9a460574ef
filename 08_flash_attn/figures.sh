#!/usr/bin/env bash
# Draws the lesson's figures: 08_flash_attn/figures/*.svg. Needs bash and awk (POSIX awk: mawk,
# gawk and busybox awk all do). The tile sizes, the consumer count, the named barriers, the head
# dimensions, the ring depths, the setmaxnreg values, a consumer's register arrays and the shared
# memory are read from the kernels' own sources below, so that a changed constant changes the
# figure.
#
#   bash 08_flash_attn/figures.sh
#
# online_softmax.svg  "The online softmax": one query row over three key tiles of four scores, the
#                running max m moving, l and acc rescaled by alpha = exp(m_old - m_new) when it
#                does, then O = acc / l and the LSE; every number computed here from the
#                example's scores and V column, and checked against the two-pass softmax.
# p_from_s.svg   stages 5 and 6: the fp32 accumulator of S = Q K^T (wgmma m64n128k16, one
#                consumer warpgroup) is, register for register, the A fragment of O += P V
#                (wgmma m64nDk16, the rs form): which thread holds which row and key, and how
#                two of its S registers become one register of P. The two layouts are those of
#                common/ptx/wgmma.cuh (PTX ISA "Register Fragments"); the script checks, for every
#                thread and register, that they put the same element in the same thread.
# block_walk.svg stage 5: one block's walk over an example head of 8 key tiles, its Q tile split
#                between the two consumers, the K and V tiles in order (causal: ending on the
#                diagonal tile, the only one masked), each in ring slot j % STAGES; the shared
#                memory of ATTN_WGMMA_SMEM(D) to scale, a thread's registers in each warpgroup
#                (setmaxnreg, the consumers' arrays as declared), and stage 6's rings beside it.
# pingpong.svg   stage 6: the two consumer warpgroups taking turns on the tensor cores (named
#                barriers TURN + c) while the other one's exponentials run on the MUFU units, at
#                both head dimensions. A model, not a trace: the products and the exponentials
#                take the time the H100's specified rates give them, the rest is drawn as a
#                sliver (not to scale).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p figures

# ---- the kernels' constants ------------------------------------------------------------------
define() { # FILE NAME: the value of "#define NAME value" in FILE
    local v
    v=$(awk -v n="$2" '$1 == "#define" && $2 == n { print $3; exit }' "$1")
    case $v in '' | *[!0-9]*) echo "figures.sh: no numeric #define $2 in $1" >&2; exit 1 ;; esac
    echo "$v"
}
BQ=$(define attn.h ATTN_WGMMA_BQ)                           # queries a block (128)
BK=$(define attn.h ATTN_WGMMA_BK)                           # keys a tile (128)
CONSUMERS=$(define kernels/06_fa3_sm90a.cu CONSUMERS)       # consumer warpgroups (2)
TURN=$(define kernels/06_fa3_sm90a.cu TURN)                 # consumer c waits on TURN + c
TURN_THREADS=$(define kernels/06_fa3_sm90a.cu TURN_THREADS) # 256
# The head dimensions stage 6 takes: its launcher refuses the others ("a->d != 64 && ...").
DS=$(grep -o 'a->d != [0-9][0-9]*' kernels/06_fa3_sm90a.cu | awk '{ print $3 }' | sort -rn | uniq | tr '\n' ' ')
[ -n "$DS" ] || { echo "figures.sh: no head dimension in kernels/06_fa3_sm90a.cu" >&2; exit 1; }

# Stage 5's block (kernels/05_wgmma_sm90a.cu), for block_walk.svg: its ring depth, warpgroups,
# setmaxnreg values, a consumer's register arrays, where the causal key loop ends and which tiles
# it masks; the shared memory from attn.h's ATTN_WGMMA_SMEM(D) and stage 6's rings from its
# ATTN_FA3_* macros, each macro's body evaluated by the shell.
K5=kernels/05_wgmma_sm90a.cu
STAGES=$(define attn.h ATTN_WGMMA_STAGES)                   # K slots, and V slots (2)
CONS5=$(define $K5 CONSUMERS)                               # consumer warpgroups (2)
PANEL=$(define attn_hopper.cuh ATTN_PANEL_COLS)             # a TMA box's columns (64)
TILED_BK=$(define attn.h ATTN_TILED_BK)                     # stage 2's key tile (64)
grab() { # PATTERN FILE: the digits of the first match, "." between groups
    grep -o "$1" "$2" | head -n 1 | sed 's/[^0-9][^0-9]*/./g; s/^\.//; s/\.$//'
}
need() { # NAME VALUE: stop when a value was not found
    [ -n "$2" ] || { echo "figures.sh: could not read $1 from the sources" >&2; exit 1; }
}
PREGS=$(grab 'setmaxnreg_dec<[0-9]*>' $K5); need "the producer's setmaxnreg" "$PREGS"
CREGS=$(grab 'setmaxnreg_inc<[0-9]*>' $K5); need "the consumers' setmaxnreg" "$CREGS"
# "float acc[D / 2], s[BK / 2], m[2] = ..., l[2] = ..." and "unsigned p[BK / 16][4]"
ACC_DIV=$(grab 'acc\[D / [0-9]*\]' $K5); need "acc's size" "$ACC_DIV"
S_DIV=$(grab ' s\[BK / [0-9]*\]' $K5); need "s's size" "$S_DIV"
P_DIMS=$(grab 'p\[BK / [0-9]*\]\[[0-9]*\]' $K5); need "p's size" "$P_DIMS"
ML=$(grab 'm\[[0-9]*\] = {' $K5); need "m's size" "$ML"
# The causal key loop ends at the block's last query, and only a tile that crosses a consumer's
# first query or holds keys past n is masked: the figure draws these two lines.
for s in 'kv_end = causal ? min(n, q0 + BQ) : n' \
         'if (k0 + BK > n || (causal && k0 + BK - 1 > first))'; do
    grep -qF "$s" $K5 || { echo "figures.sh: no \"$s\" in $K5" >&2; exit 1; }
done
D5=$(grep -o 'a->d != [0-9][0-9]*' $K5 | awk '{ print $3 }' | sort -rn | head -n 1)
need "stage 5's head dimension" "$D5"
macro() { # NAME D: attn.h's "#define NAME(D) ..." (continuation lines joined) at D, evaluated
    local e
    e=$(awk -v n="$1" '$1 == "#define" && index($2, n "(D)") == 1 {
                           on = 1; sub(/^#define +[A-Z0-9_]+\(D\)/, "") }
                       on { l = $0; c = sub(/\\$/, "", l); printf "%s", l; if (!c) exit }' attn.h)
    e=${e//ATTN_WGMMA_BQ/$BQ}; e=${e//ATTN_WGMMA_BK/$BK}; e=${e//ATTN_WGMMA_STAGES/$STAGES}
    e=${e//ATTN_FA3_QBUFS/$(define attn.h ATTN_FA3_QBUFS)}
    case $e in *ATTN_FA3_K_STAGES*) e=${e//ATTN_FA3_K_STAGES(D)/$(macro ATTN_FA3_K_STAGES "$2")} ;; esac
    case $e in *ATTN_FA3_V_STAGES*) e=${e//ATTN_FA3_V_STAGES(D)/$(macro ATTN_FA3_V_STAGES "$2")} ;; esac
    e=${e//(D)/($2)}
    case $e in '' | *[!0-9\ \(\)+*/?:=-]*)
        echo "figures.sh: cannot evaluate $1: $e" >&2; exit 1 ;;
    esac
    echo $(($e))
}
SMEM5=$(macro ATTN_WGMMA_SMEM "$D5")
SMEM5_64=$(macro ATTN_WGMMA_SMEM 64)
FA3_KS=$(macro ATTN_FA3_K_STAGES "$D5"); FA3_VS=$(macro ATTN_FA3_V_STAGES "$D5")
FA3_KS64=$(macro ATTN_FA3_K_STAGES 64); FA3_VS64=$(macro ATTN_FA3_V_STAGES 64)
FA3_QB=$(define attn.h ATTN_FA3_QBUFS)
SMEM6=$(macro ATTN_FA3_SMEM "$D5"); SMEM6_64=$(macro ATTN_FA3_SMEM 64)

# The SVG helpers every chapter's figures use (common/svg.awk), prepended to each awk program.
LIB=$(cat ../common/svg.awk)

# ---------------------------------------------------------------------------------------------
# Figure 1: the online softmax of "The online softmax", on one query row and three key tiles of
# four scores. The scores s_j and one column v_j of V are the example's inputs (the two lists
# below); everything else (the running max m, the rescale factor alpha = exp(m_old - m_new), the
# p_j, l, acc, O = acc / l and the LSE) is computed here, and checked against the two-pass
# softmax of the same row.
awk -v TBK="$TILED_BK" -v BK="$BK" "$LIB"'
function num(x, d,   s) {            # x to d decimals, a real minus sign
    s = sprintf("%." d "f", x)
    if (s ~ /^-/) s = "&#8722;" substr(s, 2)
    return s
}
function plus(x) { return x < 0 ? " &#8722; " num(-x, 3) : " + " num(x, 3) }
function sup(t) {                    # the superscript (t) of m, l and acc
    split("&#8304; &#185; &#178; &#179; &#8308; &#8309;", SD, " ")
    return "&#8317;" SD[t + 1] "&#8318;"
}
function fail(s) { print "figures.sh: " s > "/dev/stderr"; exit 1 }
function absv(x) { return x < 0 ? -x : x }
BEGIN {
    T = 3; KT = 4; N = T * KT
    split("0.6 1.4 -0.5 0.9   2.1 -0.8 3.0 0.2   1.7 2.6 -1.2 0.5", S, " ")    # scores
    split("0.8 -0.4 0.3 1.0   -0.6 0.5 0.9 -0.2  0.4 -0.7 0.1 0.6", V, " ")    # one column of V
    # The online pass: m, l, acc after each tile (m = -inf before the first: alpha = 0).
    have = 0; l = 0; acc = 0
    for (t = 1; t <= T; t++) {
        tm = S[(t - 1) * KT + 1] + 0
        for (k = 2; k <= KT; k++) tm = max(tm, S[(t - 1) * KT + k] + 0)
        mn = have ? max(m, tm) : tm
        a = have ? exp(m - mn) : 0
        ps = 0; pv = 0
        for (k = 1; k <= KT; k++) {
            j = (t - 1) * KT + k; P[j] = exp(S[j] - mn); ps += P[j]; pv += P[j] * V[j]
        }
        MO[t] = m; LO[t] = l; AO[t] = acc; TM[t] = tm; MN[t] = mn; A[t] = a; PS[t] = ps; PV[t] = pv
        l = a * l + ps; acc = a * acc + pv; m = mn; have = 1
        L[t] = l; ACC[t] = acc
    }
    O = acc / l; LSE = m + log(l)
    # The two-pass softmax of the same row: the max first, then the sums.
    M2 = S[1] + 0
    for (j = 2; j <= N; j++) M2 = max(M2, S[j] + 0)
    den = 0; nu = 0
    for (j = 1; j <= N; j++) { e = exp(S[j] - M2); den += e; nu += e * V[j] }
    if (absv(nu / den - O) > 1e-12 || absv(M2 + log(den) - LSE) > 1e-12) fail("the online softmax and the two-pass one disagree")

    W = 1270; H = 660
    CT[1] = "#c6dbef"; CT[2] = "#c7e9c0"; CT[3] = "#fdd0a2"        # the tiles
    ST[1] = "#6b9bd6"; ST[2] = "#41ab5d"; ST[3] = "#e6843a"
    MC = "#c0392b"; RS = "#d35400"
    svg_open(W, H, "The online softmax on one query row: three key tiles, the running max m, and O and l rescaled by exp(m_old - m_new)", 1)
    text(20, 28, "The online softmax on one query row: the running max m, and l and acc rescaled by &#945; = exp(m_old &#8722; m_new) when it moves", 17, "start", "bold")
    text(20, 50, "The scores s&#11388; = q&#183;k&#11388; / &#8730;D of one row and one column v&#11388; of V are the example&#8217;s inputs; every other number is computed by figures.sh. Tiles of " KT " keys here;", 12, "start", "normal", "#444444")
    text(20, 67, "of " TBK " in stage 2 (ATTN_TILED_BK) and " BK " in stages 5-6 (ATTN_WGMMA_BK). No score is kept after its tile: only m, l and acc go on to the next.", 12, "start", "normal", "#444444")

    # ---- the scores, the tiles and the running max ----
    CX = 170; KW = 70; TG = 34; U = 40; Y0 = 104 + 3.4 * U    # Y0: the line s = 0
    for (t = 1; t <= T; t++) {
        tx = CX + (t - 1) * (KT * KW + TG)
        rect(tx, 92, KT * KW, 4.8 * U + 16, "#fafafa", "#dddddd", 0.8)
        text(tx + KT * KW / 2, 88, "tile " t ": keys " (t - 1) * KT + 1 "-" t * KT, 12, "middle", "bold", ST[t])
        for (k = 1; k <= KT; k++) {
            j = (t - 1) * KT + k; x = tx + (k - 1) * KW + 12; s = S[j] + 0
            top = s > 0 ? Y0 - s * U : Y0; hgt = s > 0 ? s * U : -s * U
            ismax = (s == TM[t])
            rect(x, top, KW - 24, hgt, CT[t], ismax ? "#333333" : ST[t], ismax ? 1.8 : 0.8)
            text(x + (KW - 24) / 2, s >= 0 ? top - 4 : top + hgt + 13, num(s, 1), 11, "middle", ismax ? "bold" : "normal")
        }
        # m after this tile: a step of the running max, across the tile
        y = Y0 - MN[t] * U
        line(tx - 4, y, tx + KT * KW + 4, y, MC, 2.2)
        text(tx + KT * KW, y - 6, "m" sup(t) " = " num(MN[t], 1), 12, "end", "bold", MC)
        if (t > 1) dashed(tx - TG + 4, Y0 - MN[t - 1] * U, tx - 4, y, MC, 1.4, 0)
    }
    line(CX - 8, Y0, CX + T * KT * KW + (T - 1) * TG + 8, Y0, "#888888", 1)
    text(CX - 14, Y0 + 4, "s = 0", 10.5, "end", "normal", "#666666")
    text(CX - 14, 112, "score s&#11388;", 11.5, "end", "bold")
    text(CX - 14, 128, "(bars)", 10.5, "end", "normal", "#666666")
    text(CX - 14, Y0 - MN[1] * U - 4, "running", 11.5, "end", "bold", MC)
    text(CX - 14, Y0 - MN[1] * U + 11, "max m", 11.5, "end", "bold", MC)
    yv = 92 + 4.8 * U + 36
    text(CX - 14, yv, "v&#11388;", 11.5, "end", "bold")
    for (j = 1; j <= N; j++) {
        t = int((j - 1) / KT) + 1; k = (j - 1) % KT + 1
        text(CX + (t - 1) * (KT * KW + TG) + (k - 0.5) * KW, yv, num(V[j], 1), 11, "middle", "normal", "#333333")
    }

    # ---- the state, tile by tile ----
    PY = yv + 30; PH = 228; LH = 18
    rect(20, PY, 132, PH, "#f4f4f4", "#999999", 1)
    text(86, PY + 22, "before tile 1", 12, "middle", "bold")
    text(32, PY + 54, "m" sup(0) " = &#8722;&#8734;", 12, "start", "normal")
    text(32, PY + 54 + LH, "l" sup(0) " = 0", 12, "start", "normal")
    text(32, PY + 54 + 2 * LH, "acc" sup(0) " = 0", 12, "start", "normal")
    for (t = 1; t <= T; t++) {
        tx = CX + (t - 1) * (KT * KW + TG); pw = KT * KW
        rect(tx, PY, pw, PH, "#ffffff", ST[t], 1.4)
        text(tx + 10, PY + 22, "tile " t, 12.5, "start", "bold", ST[t])
        y = PY + 22 + LH + 4
        if (t == 1) {
            text(tx + 10, y, "m: &#8722;&#8734; &#8594; max(tile) = " num(MN[t], 1), 11.5, "start", "normal", MC)
            text(tx + 10, y + LH, "&#945; = exp(&#8722;&#8734;) = 0 (nothing to rescale)", 11.5, "start", "normal", "#777777")
        } else if (MN[t] > MO[t]) {
            text(tx + 10, y, "m: max(" num(MO[t], 1) ", " num(TM[t], 1) ") = " num(MN[t], 1) ": it moves", 11.5, "start", "bold", MC)
            text(tx + 10, y + LH, "&#945; = exp(" num(MO[t], 1) " &#8722; " num(MN[t], 1) ") = " num(A[t], 3), 11.5, "start", "bold", RS)
        } else {
            text(tx + 10, y, "m: max(" num(MO[t], 1) ", " num(TM[t], 1) ") = " num(MN[t], 1) ": it stays", 11.5, "start", "normal", MC)
            text(tx + 10, y + LH, "&#945; = exp(" num(MO[t], 1) " &#8722; " num(MN[t], 1) ") = " num(A[t], 3) " (no change)", 11.5, "start", "normal", "#777777")
        }
        s = ""
        for (k = 1; k <= KT; k++) s = s (k > 1 ? ", " : "") num(P[(t - 1) * KT + k], 3)
        text(tx + 10, y + 2 * LH, "p&#11388; = exp(s&#11388; &#8722; " num(MN[t], 1) "): " s, 11.5, "start", "normal")
        text(tx + 10, y + 3 * LH, "&#931; p&#11388; = " num(PS[t], 3) ",  &#931; p&#11388;&#183;v&#11388; = " num(PV[t], 3), 11.5, "start", "normal")
        wt = (t > 1 && A[t] < 1) ? "bold" : "normal"
        text(tx + 10, y + 4 * LH + 6, "new = &#945; &#183; old + the tile&#8217;s sum:", 11, "start", "normal", "#666666")
        text(tx + 10, y + 5 * LH + 6, "l" sup(t) " = " num(A[t], 3) "&#183;" num(LO[t], 3) plus(PS[t]) " = " num(L[t], 3), 11.5, "start", wt)
        text(tx + 10, y + 6 * LH + 6, "acc" sup(t) " = " num(A[t], 3) "&#183;" num(AO[t], 3) plus(PV[t]) " = " num(ACC[t], 3), 11.5, "start", wt)
        rect(tx + 6, PY + PH - 36, pw - 12, 28, CT[t], "none", 0)
        text(tx + pw / 2, PY + PH - 17, "m" sup(t) " = " num(MN[t], 1) ",  l" sup(t) " = " num(L[t], 3) ",  acc" sup(t) " = " num(ACC[t], 3), 11.5, "middle", "bold")
        # the state it takes from the box before
        fx = (t == 1) ? 152 : tx - TG
        arrow(fx + 2, PY + PH / 2, tx - 2, PY + PH / 2, "#444444", 1.4)
    }
    ex = CX + T * (KT * KW + TG); ew = W - 20 - ex
    arrow(ex - TG + 2, PY + PH / 2, ex - 2, PY + PH / 2, "#444444", 1.4)
    rect(ex, PY, ew, PH, "#fff5eb", "#555555", 1.4)
    text(ex + ew / 2, PY + 22, "after the last tile", 12, "middle", "bold")
    text(ex + 10, PY + 54, "O = acc" sup(T) " / l" sup(T), 12, "start", "normal")
    text(ex + 10, PY + 54 + LH, "   = " num(O, 4), 12, "start", "bold")
    text(ex + 10, PY + 54 + 2.6 * LH, "LSE = m" sup(T) " + log l" sup(T), 12, "start", "normal")
    text(ex + 10, PY + 54 + 3.6 * LH, "   = " num(LSE, 4), 12, "start", "bold")

    y = PY + PH + 30
    mv = ""; st = ""
    for (t = 2; t <= T; t++) if (MN[t] > MO[t]) mv = mv (mv == "" ? "tile " : ", ") t; else st = st (st == "" ? "tile " : ", ") t
    text(20, y, "When m moves (" mv ") every earlier term exp(s&#11388; &#8722; m_old) becomes exp(s&#11388; &#8722; m_new) by one multiplication by &#945;, in l and in acc alike; when it stays (" st ") &#945; = 1.", 12, "start", "normal", "#333333")
    text(20, y + 20, "The two-pass softmax of the same " N " scores (the max " num(M2, 1) " first, then &#931; exp(s&#11388; &#8722; " num(M2, 1) ")&#183;v&#11388; / &#931; exp(s&#11388; &#8722; " num(M2, 1) ")) gives O = " num(nu / den, 4) " and LSE = " num(M2 + log(den), 4) ": the same (figures.sh checks it to 1e-12).", 12, "start", "normal", "#333333")
    svg_close()
}' > figures/online_softmax.svg

# ---------------------------------------------------------------------------------------------
# Figure 2: S's accumulator registers are P's A fragment.
# wgmma m64nN accumulator (fp32, N / 2 registers a thread), thread t = 32 w + l of the
# warpgroup, register i:   row 16 w + l / 4 + 8 ((i / 2) % 2),   column 8 (i / 4) + 2 (l % 4) + i % 2
# wgmma k16 A fragment (16-bit, 4 registers of two halves), register r, half h (0: low bits):
#                          row 16 w + l / 4 + 8 (r % 2),         k 2 (l % 4) + 8 (r / 2) + h
# Stage 5 and 6 pack P's register r of k-step kk from S's registers 8 kk + 2 r + h
# (fa2.cuh, attn_pack_p): the script asserts that the two name the same element.
awk -v BQ="$BQ" -v BK="$BK" -v CONSUMERS="$CONSUMERS" "$LIB"'
function srow(w, l, i) { return 16 * w + int(l / 4) + 8 * (int(i / 2) % 2) }
function scol(w, l, i) { return 8 * int(i / 4) + 2 * (l % 4) + i % 2 }
function arow(w, l, r) { return 16 * w + int(l / 4) + 8 * (r % 2) }
function acol(w, l, r, h) { return 2 * (l % 4) + 8 * int(r / 2) + h }
function fail(s) { print "figures.sh: " s > "/dev/stderr"; bad = 1; exit 1 }
BEGIN {
    ROWS = BQ / CONSUMERS; WARPS = ROWS / 16; KSTEPS = BK / 16; SREGS = BK / 2
    if (ROWS != 64) fail("a consumer of " ROWS " rows: wgmma is m64")
    # The check: every (thread, k-step, register, half) of P is the S element it is packed from.
    for (t = 0; t < 128; t++) {
        w = int(t / 32); l = t % 32
        for (kk = 0; kk < KSTEPS; kk++) for (r = 0; r < 4; r++) for (h = 0; h < 2; h++) {
            i = 8 * kk + 2 * r + h
            if (srow(w, l, i) != arow(w, l, r) || scol(w, l, i) != 16 * kk + acol(w, l, r, h))
                fail("thread " t " k-step " kk " register " r ": S and P disagree")
        }
    }
    REG[0] = "#a6cee3"; REG[1] = "#fdbf6f"; REG[2] = "#b2df8a"; REG[3] = "#cab2d6"
    SW = 1; SK = 1                          # the warp and the k-step shown enlarged
    HT = 32 * SW + 5                        # the thread followed in the bottom strip
    W = 1050; H = 926
    svg_open(W, H, "P from the accumulator: S = Q K^T in fp32 registers becomes the A operand of O += P V", 1)
    text(20, 28, "P never leaves the registers: S&#8217;s accumulator is the A operand of P&#183;V (stages 5 and 6)", 17, "start", "bold")
    text(20, 50, "One consumer warpgroup (128 threads, 4 warps): S = Q&#183;K&#7488; is wgmma m64n" BK "k16, " ROWS " rows &#215; " BK " keys, fp32, " SREGS " registers s[0.." SREGS - 1 "] a thread.", 12, "start", "normal", "#444444")
    text(20, 67, "O += P&#183;V is " KSTEPS " wgmma m64nDk16 in the rs form: k-step kk takes keys 16kk .. 16kk+15 of P as A, four registers p[kk][0..3] of two 16-bit values a thread.", 12, "start", "normal", "#444444")

    # Panel A: the consumer tile, warps down, k-steps across.
    ax = 72; ay = 136; cw = 2; ch = 3
    text(20, ay - 40, "S (and P): " ROWS " rows &#215; " BK " keys", 13, "start", "bold")
    for (kk = 0; kk < KSTEPS; kk++) {
        text(ax + (16 * kk + 8) * cw, ay - 8, kk, 9.5, "middle", "normal", "#666666")
        for (w = 0; w < WARPS; w++)
            rect(ax + 16 * kk * cw, ay + 16 * w * ch, 16 * cw, 16 * ch,
                 (w == SW && kk == SK) ? "#fbd9a8" : ((w + kk) % 2 ? "#eef2f7" : "#f8f9fb"), "#9aa5b1", 0.6)
    }
    text(ax + BK * cw / 2, ay - 22, "k-step kk of P&#183;V (16 keys each)", 10, "middle", "normal", "#666666")
    for (w = 0; w < WARPS; w++) {
        text(ax - 6, ay + 16 * w * ch + 8 * ch + 4, "warp " w, 10, "end", "normal", "#444444")
    }
    rect(ax, ay, BK * cw, ROWS * ch, "none", "#333333", 1.2)
    rect(ax + 16 * SK * cw, ay + 16 * SW * ch, 16 * cw, 16 * ch, "none", "#000000", 2)
    y = ay + ROWS * ch + 22
    text(20, y, "Warp w holds rows 16w .. 16w+15, every key:", 11, "start", "normal")
    text(20, y + 16, "the shaded block is enlarged on the right.", 11, "start", "normal")

    # The legend of the colours: P&#8217;s register r.
    y += 48; ax = 20
    text(ax, y, "Colour: the register of P it goes to", 12, "start", "bold")
    split("row g, keys 2q, 2q+1|row g+8, keys 2q, 2q+1|row g, keys 2q+8, 2q+9|row g+8, keys 2q+8, 2q+9", RD, "|")
    for (r = 0; r < 4; r++) {
        rect(ax, y + 12 + 34 * r, 14, 14, REG[r], "#7a7a7a", 0.6)
        text(ax + 22, y + 23 + 34 * r, "p[kk][" r "] = s[8kk+" 2 * r "], s[8kk+" 2 * r + 1 "]", 11, "start", "bold")
        text(ax + 22, y + 38 + 34 * r, RD[r + 1], 10.5, "start", "normal", "#555555")
    }
    y += 12 + 34 * 4 + 14
    text(ax, y, "lane l of the warp: g = l / 4, q = l % 4;", 10.5, "start", "normal", "#555555")
    text(ax, y + 15, "keys counted from the k-step&#8217;s first", 10.5, "start", "normal", "#555555")

    # Panel B: warp SW&#8217;s 16 rows and k-step SK&#8217;s 16 keys: thread and S register of every element.
    bx = 410; by = 136; bw = 38; bh = 32
    text(bx - 20, by - 40, "Warp " SW ", k-step " SK ": rows " 16 * SW "-" 16 * SW + 15 ", keys " 16 * SK "-" 16 * SK + 15, 13, "start", "bold")
    for (c = 0; c < 16; c++) text(bx + c * bw + bw / 2, by - 8, 16 * SK + c, 9.5, "middle", "normal", "#666666")
    for (r = 0; r < 16; r++) text(bx - 6, by + r * bh + bh / 2 + 4, 16 * SW + r, 9.5, "end", "normal", "#666666")
    text(bx + 8 * bw, by - 22, "key", 10, "middle", "normal", "#666666")
    for (l = 0; l < 32; l++) {
        t = 32 * SW + l
        for (i = 8 * SK; i < 8 * SK + 8; i++) {
            rr = srow(SW, l, i) - 16 * SW; cc = scol(SW, l, i) - 16 * SK
            x = bx + cc * bw; y = by + rr * bh
            rect(x, y, bw, bh, REG[int((i % 8) / 2)], "#8c8c8c", 0.5)
            text(x + bw / 2, y + 13, "T" t, 10, "middle", (t == HT ? "bold" : "normal"))
            text(x + bw / 2, y + 26, "s[" i "]", 9, "middle", "normal", "#444444")
            if (t == HT) { nh++; HX[nh] = x; HY[nh] = y }
        }
    }
    line(bx, by + 8 * bh, bx + 16 * bw, by + 8 * bh, "#333333", 1.4)
    line(bx + 8 * bw, by, bx + 8 * bw, by + 16 * bh, "#333333", 1.4)
    rect(bx, by, 16 * bw, 16 * bh, "none", "#333333", 1.4)
    for (k = 1; k <= nh; k++) rect(HX[k] + 1, HY[k] + 1, bw - 2, bh - 2, "none", "#000000", 2.4)
    text(bx, by + 16 * bh + 20, "T: the thread of the warpgroup (32w + l). Each thread holds two rows, g and g+8, and two neighbouring keys", 10.5, "start", "normal", "#444444")
    text(bx, by + 16 * bh + 35, "in each 8: in S&#8217;s accumulator layout and in P&#8217;s A layout alike, so P is packed where it lies.", 10.5, "start", "normal", "#444444")

    # Bottom strip: thread HT&#8217;s registers of k-step SK, fp32 in S, packed in pairs into P.
    sy = by + 16 * bh + 78; sx = 20; fw = 118; gap = 8
    text(sx, sy - 14, "Thread T" HT " (warp " SW ", lane " HT % 32 "): its eight S registers of k-step " SK " become its four P registers, no shuffle, no shared memory", 13, "start", "bold")
    for (j = 0; j < 8; j++) {
        i = 8 * SK + j; x = sx + j * (fw + gap)
        rect(x, sy, fw, 40, REG[int(j / 2)], "#7a7a7a", 0.8)
        text(x + fw / 2, sy + 16, "s[" i "]  fp32", 11, "middle", "bold")
        text(x + fw / 2, sy + 32, "row " srow(SW, HT % 32, i) ", key " scol(SW, HT % 32, i), 10.5, "middle", "normal", "#333333")
    }
    py = sy + 92
    for (r = 0; r < 4; r++) {
        x = sx + 2 * r * (fw + gap)
        arrow(x + fw / 2, sy + 42, x + fw / 2 + 30, py - 4, "#444444", 1.1)
        arrow(x + fw + gap + fw / 2, sy + 42, x + fw + gap + fw / 2 - 30, py - 4, "#444444", 1.1)
        rect(x, py, 2 * fw + gap, 40, REG[r], "#333333", 1.2)
        text(x + fw + gap / 2, py + 16, "p[" SK "][" r "]: two 16-bit values", 11, "middle", "bold")
        text(x + fw + gap / 2, py + 32, "low half s[" 8 * SK + 2 * r "], high half s[" 8 * SK + 2 * r + 1 "]", 10.5, "middle", "normal", "#333333")
    }
    text(sx, py + 66, "The packing rounds each pair to fp16 or bf16 (attn_pack_p in fa2.cuh, one F2FP a register). Then O += P&#183;V issues wgmma m64nDk16 with p[kk] as A,", 10.5, "start", "normal", "#555555")
    text(sx, py + 81, "V from shared memory as B. The same holds for every warp and k-step: the script that draws this checks it for all 128 threads and " KSTEPS " k-steps.", 10.5, "start", "normal", "#555555")
    svg_close()
}' > figures/p_from_s.svg

# ---------------------------------------------------------------------------------------------
# Figure 3: one block of stage 5 and its walk. An example head of 8 key tiles (n = 8 BK); the
# block of q tile QT (the kernel's q0 = QT * BQ) walks key tiles j = 0, 1, ... in order, all of
# them, or, causal, up to the one holding its last query (kv_end = min(n, q0 + BQ)), masking a
# tile only if it crosses a consumer's first query or holds keys past n (the lines checked
# above). What sits in shared memory (ATTN_WGMMA_SMEM(D): the Q tile, the K and V rings, slot
# j % STAGES) and in a thread's registers (the setmaxnreg values; a consumer's arrays, as
# declared).
awk -v BQ="$BQ" -v BK="$BK" -v STAGES="$STAGES" -v CONS="$CONS5" -v PANEL="$PANEL" -v D="$D5" \
    -v PREGS="$PREGS" -v CREGS="$CREGS" -v ACC_DIV="$ACC_DIV" -v S_DIV="$S_DIV" -v P_DIMS="$P_DIMS" \
    -v ML="$ML" -v SMEM="$SMEM5" -v SMEM64="$SMEM5_64" -v KS6="$FA3_KS" -v VS6="$FA3_VS" \
    -v KS6_64="$FA3_KS64" -v VS6_64="$FA3_VS64" -v QB6="$FA3_QB" -v SMEM6="$SMEM6" \
    -v SMEM6_64="$SMEM6_64" "$LIB"'
function fail(s) { print "figures.sh: " s > "/dev/stderr"; exit 1 }
function sub_(j,   s, i, ch) {   # j as subscript characters (digits, or the letter j)
    if (j == "j") return "&#11388;"
    s = ""
    for (i = 1; i <= length(j ""); i++) { ch = substr(j "", i, 1); s = s "&#" 8320 + ch ";" }
    return s
}
BEGIN {
    split(P_DIMS, PD, "."); PREG = BK / PD[1] * PD[2]; SREG = BK / S_DIV; OREG = D / ACC_DIV
    ROWS = BQ / CONS
    if (BQ != BK) fail("the figure draws q tiles as wide as key tiles")
    NT = 8; QT = 5; n = NT * BK                       # the example: n = 1024 at BK = 128
    q0 = QT * BQ; kv_end = min(n, q0 + BQ); KT = int((kv_end + BK - 1) / BK)
    for (j = 0; j < NT; j++) {                        # the masked tiles of the causal walk
        MASKED[j] = 0
        for (c = 0; c < CONS; c++) if (j < KT && (j * BK + BK > n || j * BK + BK - 1 > q0 + ROWS * c)) MASKED[j] = 1
    }
    W = 1290; H = 725
    CQ[0] = "#6baed6"; CQ[1] = "#fd8d3c"                 # the consumers
    LQ[0] = "#deebf7"; LQ[1] = "#fee6ce"
    CK = "#74c476"; CV = "#9e9ac8"; WALK = "#08519c"; MK = "#cb181d"
    svg_open(W, H, "Stage 5: one block walks its Q tile across the K and V tiles; what sits in shared memory and in registers", 1)
    text(20, 28, "One block of stage 5: its Q tile of " BQ " queries walks the key tiles in order; K and V through a ring, S, P and O in registers", 17, "start", "bold")
    text(20, 50, "An example head of n = " n " keys (" NT " tiles of " BK "), D = " D "; the block of q tile " QT ", queries " q0 "-" q0 + BQ - 1 ", split between " CONS " consumer warpgroups of " ROWS " rows.", 12, "start", "normal", "#444444")
    text(20, 67, "Sizes from the sources: ATTN_WGMMA_BQ, _BK, _STAGES and _SMEM(D) in attn.h, the setmaxnreg values and the register arrays of kernels/05_wgmma_sm90a.cu.", 12, "start", "normal", "#444444")

    # ---- the matrices: Q left of S, K^T above, V^T below, O right; a tile TS px ----
    TS = 46; DW = D / BK * TS
    QX = 40; SX = QX + DW + 24; KY = 112; SY = KY + DW + 24; SW = NT * TS
    VY = SY + SW + 24; OX = SX + SW + 24
    # S: every tile faint; the block&#8217;s band
    for (r = 0; r < NT; r++) for (j = 0; j < NT; j++)
        rect(SX + j * TS, SY + r * TS, TS, TS, r == QT ? "#ffffff" : "#f6f6f6", "#d9d9d9", 0.6)
    for (j = 0; j < NT; j++) {
        x = SX + j * TS; y = SY + QT * TS; causal = j < KT
        for (c = 0; c < CONS; c++) rect(x, y + c * TS / CONS, TS, TS / CONS, causal ? LQ[c] : "#ffffff", "none", 0)
        if (!causal) { dashed(x + 2, y + 2, x + TS - 2, y + 2, "#888888", 0.8); dashed(x + 2, y + TS - 2, x + TS - 2, y + TS - 2, "#888888", 0.8) }
        if (MASKED[j])                                  # causal: key > query, element by element
            for (i = 0; i < 16; i++) rect(x + (i + 1) * TS / 16, y + i * TS / 16, TS - (i + 1) * TS / 16, TS / 16, MK, "none", 0)
        rect(x, y, TS, TS, "none", causal ? WALK : "#999999", causal ? 1.6 : 0.8)
        text(x + 5, y + TS - 6, "S" sub_(j), 11.5, "start", "bold", causal ? WALK : "#888888")
    }
    line(SX, SY + QT * TS + TS / 2, SX + SW, SY + QT * TS + TS / 2, "#ffffff", 1)
    ya = SY + QT * TS + TS + 12
    arrow(SX + 4, ya, SX + KT * TS - 4, ya, WALK, 2)
    dashed(SX + KT * TS + 2, ya, SX + SW - 4, ya, "#888888", 1.4, 1)
    text(SX + 6, ya + 15, "the walk: j = 0, 1, &#8230;", 10.5, "start", "bold", WALK)
    rect(SX, SY, SW, SW, "none", "#555555", 1)
    text(QX, KY - 14, "The block&#8217;s band of S = Q&#183;K&#7488; (never stored), key tile after key tile", 13, "start", "bold")
    # Q and O
    rect(QX, SY, DW, SW, "#f6f6f6", "#999999", 0.8)
    for (c = 0; c < CONS; c++) rect(QX, SY + QT * TS + c * TS / CONS, DW, TS / CONS, CQ[c], "#333333", 0.8)
    text(QX + DW / 2, SY - 8, "Q", 12, "middle", "bold")
    rect(OX, SY, DW, SW, "#f6f6f6", "#999999", 0.8)
    for (c = 0; c < CONS; c++) rect(OX, SY + QT * TS + c * TS / CONS, DW, TS / CONS, LQ[c], "#333333", 0.8)
    text(OX + DW / 2, SY - 8, "O", 12, "middle", "bold")
    for (c = 0; c < CONS; c++) {
        text(QX - 4, SY + QT * TS + c * TS / CONS + TS / CONS / 2 + 4, "c" c, 10.5, "end", "bold", CQ[c])
        text(OX + DW + 6, SY + QT * TS + c * TS / CONS + TS / CONS / 2 + 4, "rows " q0 + c * ROWS "-" q0 + (c + 1) * ROWS - 1, 10.5, "start", "normal", "#333333")
    }
    text(OX + DW + 6, SY + QT * TS + TS + 14, "O / l, stored once", 10.5, "start", "normal", "#555555")
    text(OX + DW + 6, SY + QT * TS + TS + 28, "after the last tile", 10.5, "start", "normal", "#555555")
    # K^T above, V^T below: tile j in slot j % STAGES
    for (j = 0; j < NT; j++) {
        x = SX + j * TS; causal = j < KT
        rect(x, KY, TS, DW, causal ? CK : "#f0f0f0", causal ? "#333333" : "#999999", causal ? 0.9 : 0.7)
        text(x + TS / 2, KY + DW / 2 - 2, "K" sub_(j), 12, "middle", "bold", causal ? "#ffffff" : "#888888")
        text(x + TS / 2, KY + DW / 2 + 14, "slot " j % STAGES, 9.5, "middle", "normal", causal ? "#ffffff" : "#888888")
        rect(x, VY, TS, DW, causal ? CV : "#f0f0f0", causal ? "#333333" : "#999999", causal ? 0.9 : 0.7)
        text(x + TS / 2, VY + DW / 2 - 2, "V" sub_(j), 12, "middle", "bold", causal ? "#ffffff" : "#888888")
        text(x + TS / 2, VY + DW / 2 + 14, "slot " j % STAGES, 9.5, "middle", "normal", causal ? "#ffffff" : "#888888")
    }
    text(SX - 6, KY + DW / 2 + 4, "K&#7488;", 12, "end", "bold")
    text(SX - 6, VY + DW / 2 + 4, "V&#7488;", 12, "end", "bold")
    for (j = 0; j <= NT; j += 2) text(SX + j * TS, VY + DW + 14, j * BK, 9.5, "middle", "normal", "#666666")
    text(SX + SW, VY + DW + 28, "key", 10, "end", "normal", "#666666")
    y = VY + DW + 50
    text(QX, y, "All " NT " key tiles; causal, " KT ": the loop ends at min(n, q0 + " BQ ") = " kv_end ", only the diagonal", 11.5, "start", "normal")
    text(QX, y + 17, "tile is masked (red: key after query), and the dashed tiles are never loaded.", 11.5, "start", "normal")
    text(QX, y + 34, "A consumer&#8217;s S of a tile is " ROWS " &#215; " BK ", its O " ROWS " &#215; " D ", its rows only.", 11.5, "start", "normal")

    # ---- shared memory: the layout of ATTN_WGMMA_SMEM(D), to scale ----
    RX = OX + DW + 118; RW = W - 20 - RX; y0 = 112
    text(RX, y0 - 12, "Shared memory (one block an SM): " kib(SMEM) " at D = " D " (" kib(SMEM64) " at D = 64)", 13, "start", "bold")
    QB = BQ * D * 2; KB = BK * D * 2; PX = RW / SMEM; x = RX
    NS = 1 + 2 * STAGES
    for (i = 1; i <= NS; i++) {
        b = i == 1 ? QB : KB
        f = i == 1 ? "#c6dbef" : (i <= 1 + STAGES ? CK : CV)
        rect(x, y0, b * PX, 46, f, "#333333", 1)
        for (p = 1; p < D / PANEL; p++) {
            line(x + p * b * PX / (D / PANEL), y0, x + p * b * PX / (D / PANEL), y0 + 7, "#333333", 1)
            line(x + p * b * PX / (D / PANEL), y0 + 39, x + p * b * PX / (D / PANEL), y0 + 46, "#333333", 1)
        }
        nm = i == 1 ? "Q tile" : (i <= 1 + STAGES ? "K slot " i - 2 : "V slot " i - 2 - STAGES)
        text(x + b * PX / 2, y0 + 19, nm, 11.5, "middle", "bold", i == 1 ? "#222222" : "#ffffff")
        text(x + b * PX / 2, y0 + 36, kib(b), 10.5, "middle", "normal", i == 1 ? "#222222" : "#ffffff")
        if (i > 1) {
            s = ""; k = (i - 2) % STAGES
            for (j = k; j < NT; j += STAGES) s = s (s == "" ? "" : ", ") j
            text(x + b * PX / 2, y0 + 60, (i <= 1 + STAGES ? "K" : "V") " tiles " s, 10, "middle", "normal", "#444444")
        } else text(x + b * PX / 2, y0 + 60, "loaded once", 10, "middle", "normal", "#444444")
        x += b * PX
    }
    text(RX, y0 + 82, "Each slot is D / " PANEL " = " D / PANEL " TMA boxes of " PANEL " columns (the ticks), 128-byte swizzled; + 1 KiB of alignment slack.", 10.5, "start", "normal", "#555555")
    text(RX, y0 + 98, "Each slot has a full barrier (TMA&#8217;s bytes landed) and an empty one (the consumers have read it).", 10.5, "start", "normal", "#555555")

    # ---- registers: a thread of each warpgroup, 2 px a register ----
    y0 = 262; RP = 1.8; LW = 160
    text(RX, y0 - 12, "Registers of one thread (setmaxnreg: the producer " PREGS ", each consumer " CREGS ")", 13, "start", "bold")
    text(RX, y0 + 15, "warpgroup 0: producer", 11.5, "start", "bold")
    rect(RX + LW, y0, PREGS * RP, 22, "#d9d9d9", "#333333", 1)
    text(RX + LW + PREGS * RP / 2, y0 + 15, PREGS, 10.5, "middle", "bold")
    text(RX + LW + PREGS * RP + 8, y0 + 15, "its thread 0 issues every TMA copy: Q once, then K" sub_("j") ", V" sub_("j") " into slot j % " STAGES, 10.5, "start", "normal", "#333333")
    for (c = 0; c < CONS; c++) {
        y = y0 + 44 + c * 66
        text(RX, y + 15, "consumer " c, 11.5, "start", "bold", CQ[c])
        text(RX, y + 31, "warpgroup " c + 1 ", rows " q0 + c * ROWS "-" q0 + (c + 1) * ROWS - 1, 10, "start", "normal", "#555555")
        x = RX + LW
        rect(x, y, CREGS * RP, 22, "#f4f4f4", "#333333", 1)
        rect(x, y, SREG * RP, 22, "#fcbba1", "#333333", 0.8)
        text(x + SREG * RP / 2, y + 15, "S: s[" SREG "] fp32", 10.5, "middle", "bold")
        rect(x + SREG * RP, y, OREG * RP, 22, LQ[c], "#333333", 0.8)
        text(x + SREG * RP + OREG * RP / 2, y + 15, "O: acc[" OREG "] fp32", 10.5, "middle", "bold")
        rect(x + (SREG + OREG) * RP, y, 2 * ML * RP, 22, "#555555", "#333333", 0.8)
        text(x + CREGS * RP - 4, y + 15, CREGS, 10.5, "end", "normal", "#666666")
        rect(x, y + 25, PREG * RP, 12, "#fee0d2", "#333333", 0.6)
        text(x + PREG * RP + 6, y + 35, "P: p[" BK / PD[1] "][" PD[2] "], " PREG " registers of two 16-bit values, packed from S", 10, "start", "normal", "#444444")
    }
    y = y0 + 44 + CONS * 66
    text(RX + LW, y, "Dark: m[" ML "], l[" ML "], a thread&#8217;s two rows (g, g + 8). The rest: addresses, indices, free.", 10, "start", "normal", "#555555")
    # ---- a consumer&#8217;s key tile ----
    y0 = 474
    text(RX, y0, "A consumer, key tile j (slot j % " STAGES "):", 13, "start", "bold")
    split("wait K full; S = Q&#183;K" sub_("j") "&#7488;: " D / 16 " wgmma m64n" BK "k16, Q and K from shared memory|release K (empty barrier)|mask S if the tile crosses the diagonal (causal) or holds keys past n|online softmax: m, l; O &#215;= &#945;; P packed from S|wait V full; O += P&#183;V" sub_("j") ": " BK / 16 " wgmma m64n" D "k16, P from registers|release V; then tile j + 1", ST, "|")
    for (i = 1; i <= 6; i++) text(RX + 8, y0 + 6 + 18 * i, i ". " ST[i], 11, "start", "normal")
    text(RX, y0 + 140, "After the last tile: O / l stored, and the LSE (fa2.cuh&#8217;s attn_store).", 11, "start", "normal")
    y0 = 640
    text(RX, y0, "Stage 6 keeps the tiles and the registers; its rings hold " KS6 " K and " VS6 " V slots", 11, "start", "normal", "#8a2b0e")
    text(RX, y0 + 16, "beside " QB6 " Q buffers at D = " D " (" kib(SMEM6) "; " KS6_64 " + " VS6_64 " at D = 64, " kib(SMEM6_64) "), and a block walks", 11, "start", "normal", "#8a2b0e")
    text(RX, y0 + 32, "several (pair, q tile) items, the rings running on from one to the next.", 11, "start", "normal", "#8a2b0e")
    svg_close()
}' > figures/block_walk.svg

# ---------------------------------------------------------------------------------------------
# Figure 4: the ping-pong of stage 6 (kernels/06_fa3_sm90a.cu), as a model. Turns alternate
# 0, 1, 0, 1, ...: consumer c waits on named barrier TURN + c (bar.sync, TURN_THREADS threads),
# issues its S_j and P_{j-1} V_{j-1}, and arrives on TURN + 1 - c (bar.arrive). Its S lands,
# the row maxima run under its P V, the wait for P V (ptxas puts it before the exponentials),
# the exponentials, the rescale of O and the packing of P; then its next turn.
# Durations from the H100's specified rates: the tensor cores 4096 dense 16-bit FLOPs a clock
# an SM (989 TFLOPS over 132 SMs at 1830 MHz), the MUFU 16 ex2 a clock an SM. A consumer's S
# is 2 * 64 * BK * D FLOPs and so is its P V; its exponentials are (BK / 2 + 2) a thread (the
# scores and two rescale factors: 66 MUFU.EX2 in the SASS at BK = 128) times 128 threads.
awk -v BQ="$BQ" -v BK="$BK" -v CONSUMERS="$CONSUMERS" -v TURN="$TURN" -v TT="$TURN_THREADS" -v DS="$DS" "$LIB"'
# A block on lane `lane` from clock t0 to t1, clipped to the window.
function block(lane, t0, t1, fill, label, tc,   x, w) {
    if (t0 >= TMAX || t1 <= t0) return
    t1 = min(t1, TMAX)
    x = PX + t0 * S; w = (t1 - t0) * S
    rect(x, LY[lane], w, LH, fill, "#555555", 0.7)
    if (label != "" && w > 6.4 * length(label) + 4) text(x + w / 2, LY[lane] + LH / 2 + 4, label, 10.5, "middle", "normal", tc)
}
# One panel: the schedule of NT turns at head dimension D, drawn from y0.
function panel(D, y0,   k, c, j, t, tS, tE, tc, mu, rdy, iss, s0, s1, p1, e0, e1, arr, x, y) {
    tS = 2 * 64 * BK * D / TCR; tE = 128 * (BK / 2 + 2) / MUR
    TS[D] = tS; TE[D] = tE
    text(20, y0, "D = " D ": S and P&#183;V " tS " clocks each on the tensor cores, a tile&#8217;s exponentials " tE " clocks on the MUFU units", 13, "start", "bold")
    split("tensor cores|MUFU (ex2)|consumer 0|consumer 1", NM, "|")
    split("wgmma of both consumers|exponentials of both|warpgroup 1, rows 0-63|warpgroup 2, rows 64-127", SUB, "|")
    for (k = 0; k < 4; k++) {
        LY[k] = y0 + 24 + k * (LH + 26)
        text(PX - 10, LY[k] + 15, NM[k + 1], 11.5, "end", "bold")
        text(PX - 10, LY[k] + 29, SUB[k + 1], 9.5, "end", "normal", "#666666")
        rect(PX, LY[k], TMAX * S, LH, "#f7f7f7", "#dddddd", 0.5)
    }
    # The simulation, turn after turn: a wgmma starts once issued and the tensor cores are free,
    # the exponentials once the P V has landed (the wait ptxas puts before them) and the MUFU
    # units are free; the consumer&#8217;s next bar.sync passes once it has packed P and the other
    # has arrived (right after issuing its own turn).
    tc = 0; mu = 0; rdy[0] = 0; rdy[1] = 0; iss = -ISS
    for (k = 0; k < NT; k++) {
        c = k % 2; j = int(k / 2)
        t = max(rdy[c], iss + ISS); iss = t             # bar.sync TURN + c passes: issue
        s0 = max(tc, t); s1 = s0 + tS                   # S_j
        p1 = j > 0 ? s1 + tS : s1                       # P_{j-1} V_{j-1} (tile 0: S alone)
        if (k >= 2) IDLE[D] += s0 - tc                  # the tensor cores idle before this turn
        tc = p1
        e0 = max(p1, mu); e1 = e0 + tE; mu = e1         # the exponentials of S_j
        rdy[c] = e1 + PACK                              # O rescaled, P_j packed
        block(0, s0, s1, SC[c], "S" j, "#ffffff")
        if (j > 0) block(0, s1, p1, PC[c], "P" j - 1 "V" j - 1, "#222222")
        block(1, e0, e1, SC[c], "exp S" j, "#ffffff")
        block(2 + c, t, s1, "#e8e8e8", "wait", "#555555")
        if (j > 0) {
            block(2 + c, s1, s1 + MAXW, "#bdbdbd", "", "")
            block(2 + c, s1 + MAXW, p1, "#e8e8e8", "wait", "#555555")
        }
        block(2 + c, p1, e0, "#e8e8e8", "wait", "#555555")   # for the MUFU units
        block(2 + c, e0, e1, SC[c], "exp S" j, "#ffffff")
        block(2 + c, e1, e1 + PACK, "#555555", "", "")
        if (t >= TMAX) continue
        x = PX + t * S
        line(x, LY[2 + c] - 6, x, LY[2 + c] + LH + 6, "#000000", 2)
        if (c == 0) text(x + 3, LY[2] - 9, "bar.sync " TURN, 9.5, "start", "bold")
        else text(x + 3, LY[3] + LH + 15, "bar.sync " TURN + 1, 9.5, "start", "bold")
        if (k > 0) arrow(PX + arr * S, LY[2 + 1 - c] + (c == 1 ? LH : 0), x, LY[2 + c] + (c == 1 ? 0 : LH), "#444444", 1.1)
        arr = t + ISS
    }
    for (t = 0; t <= TMAX; t += 512) {
        line(PX + t * S, LY[3] + LH + 24, PX + t * S, LY[3] + LH + 29, "#888888", 1)
        text(PX + t * S, LY[3] + LH + 41, t, 9.5, "middle", "normal", "#666666")
    }
    text(PX + TMAX * S, LY[3] + LH + 55, "clocks of one SM", 10, "end", "normal", "#666666")
}
BEGIN {
    TCR = 4096; MUR = 16                # the specified rates, per SM and clock
    ISS = 16; MAXW = 40; PACK = 64      # issue, row maxima, rescale + pack: slivers, not to scale
    if (BQ / CONSUMERS != 64 || CONSUMERS != 2) { print "figures.sh: two consumers of 64 rows expected" > "/dev/stderr"; exit 1 }
    SC[0] = "#2f6db3"; PC[0] = "#6b9bd6"; SC[1] = "#d96b0b"; PC[1] = "#f0a35e"
    nd = split(DS, DL, " ")
    NT = 12; TMAX = 5120; PX = 190; S = 0.19; LH = 34
    W = PX + TMAX * S + 30; PH = 4 * (LH + 26) + 100
    H = 166 + nd * PH + 60
    svg_open(W, H, "FlashAttention-3 ping-pong in stage 6: two consumer warpgroups take turns on the tensor cores", 1)
    text(20, 28, "Stage 6&#8217;s ping-pong: the consumers take turns on the tensor cores, one&#8217;s exponentials under the other&#8217;s products", 17, "start", "bold")
    text(20, 50, "Consumer c waits on named barrier " TURN "+c (bar.sync, " TT " threads: its " TT / 2 " and the other&#8217;s " TT / 2 "), issues S_j = Q&#183;K_j&#7488; and P_j-1&#183;V_j-1, and arrives on the", 12, "start", "normal", "#444444")
    text(20, 67, "other&#8217;s id (bar.arrive) without waiting: the arrows. Then S lands, its row maxima run under its own P&#183;V (light grey sliver), P&#183;V lands, the exponentials", 12, "start", "normal", "#444444")
    text(20, 84, "run, O is rescaled and P packed (dark sliver), and the consumer waits for its next turn. Tile 0 of each consumer is S alone (startup).", 12, "start", "normal", "#444444")
    text(20, 104, "A model, not a trace: products and exponentials take what the H100&#8217;s specified rates give (4096 dense 16-bit FLOPs and 16 ex2 a clock per SM); slivers not to scale.", 11.5, "start", "normal", "#8a2b0e")
    for (c = 0; c < 2; c++) {
        x = 20 + 300 * c
        rect(x, 116, 14, 14, SC[c], "#555555", 0.7); rect(x + 16, 116, 14, 14, PC[c], "#555555", 0.7)
        text(x + 36, 127, "consumer " c ": S_j, then P_j-1&#183;V_j-1 (lighter)", 11, "start", "normal")
    }
    rect(620, 116, 14, 14, "#e8e8e8", "#555555", 0.7)
    text(640, 127, "waiting for its own wgmma", 11, "start", "normal")
    for (d = 1; d <= nd; d++) panel(DL[d] + 0, 166 + (d - 1) * PH)
    y = 166 + nd * PH
    for (d = 1; d <= nd; d++) {
        D = DL[d] + 0
        if (TE[D] <= 2 * TS[D])
            text(20, y, "D = " D ": a consumer&#8217;s exponentials (" TE[D] " clocks) fit under the other&#8217;s two products (" 2 * TS[D] "): after the startup the tensor cores never wait.", 11.5, "start", "normal", "#333333")
        else
            text(20, y, "D = " D ": the products halve, the exponentials do not (" TE[D] " clocks against the other&#8217;s " 2 * TS[D] "): the MUFU units run back to back and set the pace; the tensor cores wait.", 11.5, "start", "normal", "#333333")
        y += 18
    }
    svg_close()
}' > figures/pingpong.svg

ls figures/*.svg
