#!/usr/bin/env bash
# Draws the lesson's figures: 08_flash_attn/figures/*.svg. Needs bash and awk (POSIX awk: mawk,
# gawk and busybox awk all do). The tile sizes, the consumer count, the named barriers and the
# head dimensions are read from the kernels' own sources below, so that a changed constant
# changes the figure.
#
#   bash 08_flash_attn/figures.sh
#
# p_from_s.svg   stages 5 and 6: the fp32 accumulator of S = Q K^T (wgmma m64n128k16, one
#                consumer warpgroup) is, register for register, the A fragment of O += P V
#                (wgmma m64nDk16, the rs form): which thread holds which row and key, and how
#                two of its S registers become one register of P. The two layouts are those of
#                common/ptx/wgmma.cuh (PTX ISA "Register Fragments"); the script checks, for every
#                thread and register, that they put the same element in the same thread.
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

# The SVG helpers every chapter's figures use (common/svg.awk), prepended to each awk program.
LIB=$(cat ../common/svg.awk)

# ---------------------------------------------------------------------------------------------
# Figure 1: S's accumulator registers are P's A fragment.
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
# Figure 2: the ping-pong of stage 6 (kernels/06_fa3_sm90a.cu), as a model. Turns alternate
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
