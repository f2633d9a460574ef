#!/usr/bin/env bash
# Draws the lesson's figures: 03_softmax/figures/*.svg, from the index arithmetic of the kernels.
# Needs bash and awk (POSIX awk: mawk, gawk and busybox awk all do); nothing else.
#
#   bash 03_softmax/figures.sh
#
# regs_row.svg          stage 5 (kernels/05_regs.cu): which lane of a warp holds which columns of
#                       a 1024-wide fp32 row (E = 32 per lane, packs of V = 4: pack p of lane t is
#                       columns p * 32 * V + t * V ...), lane 0's register array v[32], and the
#                       one read / reductions in registers / one write of the kernel
# cluster_exchange.svg  stage 6 (kernels/06_cluster.cu): a 65536-wide fp32 row cut as cut_row()
#                       cuts it with the default preset (8 slices of 8192, 256 threads x 32),
#                       each block's (m_b, d_b), the exchange through distributed shared memory,
#                       the combine, the write, and the cluster barriers of the push and pull
#                       exchanges
# split_fallback.svg    stage 6's fallback without clusters (softmax_split): two kernels, the
#                       pairs through a workspace in global memory, the slice read twice
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p figures

# Helpers shared by the three figures. Each figure appends to BODY, then page() writes the file.
LIB='
function attr_font(size, weight, anchor, fill) {
    return sprintf("font-size=\"%s\"%s%s fill=\"%s\"", size,
        (weight == "b" ? " font-weight=\"bold\"" : (weight == "i" ? " font-style=\"italic\"" : "")),
        (anchor == "" || anchor == "start" ? "" : " text-anchor=\"" anchor "\""), (fill == "" ? "#222222" : fill))
}
function text(x, y, s, size, weight, anchor, fill) {
    BODY = BODY sprintf("<text x=\"%g\" y=\"%g\" %s>%s</text>\n", x, y, attr_font(size, weight, anchor, fill), s)
}
function rect(x, y, w, h, fill, stroke, extra) {
    BODY = BODY sprintf("<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"%s\" stroke=\"%s\"%s/>\n",
        x, y, w, h, fill, (stroke == "" ? "none" : stroke), extra)
}
function line(x1, y1, x2, y2, colour, width, marker, extra) {
    BODY = BODY sprintf("<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"%g\"%s%s/>\n",
        x1, y1, x2, y2, colour, width, (marker == "" ? "" : " marker-end=\"url(#" marker ")\""), extra)
}
function path(d, colour, width, marker, extra) {
    BODY = BODY sprintf("<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%g\"%s%s/>\n",
        d, colour, width, (marker == "" ? "" : " marker-end=\"url(#" marker ")\""), extra)
}
function marker(id, colour) {
    DEFS = DEFS sprintf("<marker id=\"%s\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"9\" markerHeight=\"9\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"%s\"/></marker>\n", id, colour)
}
function page(file, w, h, title) {
    printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" > file
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n", w, h, w, h > file
    printf "<title>%s</title>\n<defs>\n%s</defs>\n", title, DEFS > file
    printf "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h > file
    printf "%s</svg>\n", BODY > file
    close(file)
}
function sub_(n) { return "&#" (8320 + n) ";" }   # subscript digit
# One colour per block rank (Tableau 10) and a light tint of it.
function palette() {
    split("#4e79a7 #f28e2b #e15759 #76b7b2 #59a14f #edc948 #b07aa1 #9c755f", COL, " ")
    split("#d3deea #fce3ca #f8d5d6 #ddedec #d6e8d3 #fbf2d1 #ebdee8 #e6ddd7", TINT, " ")
}
BEGIN {
    DASH = "&#8211;"; TIMES = "&#215;"; MINUS = "&#8722;"; SIGMA = "&#931;"; DOT = "&#183;"
    RARR = "&#8594;"; LARR = "&#8592;"; ELL = "&#8230;"
    GREY = "#555555"; ORANGE = "#d95f0e"; DRAM = "#e9e9e9"; REGS = "#dbe8f5"; BAR = "#fbe3e1"; BARS = "#c0392b"
    marker("ahGrey", GREY); marker("ahOrange", ORANGE)
}
'

# ---------------------------------------------------------------------------------------------
# Figure 1: stage 5, the row in the registers of one warp.
awk "$LIB"'
BEGIN {
    # The launcher of kernels/05_regs.cu for cols <= 1024 (preset 0): one warp per row, E by
    # width; fp32, so a 16-byte pack is V = 4 floats; the kernel: first = t * V,
    # step = row_threads * V, pack p of lane t = elements first + p * step ... + V - 1.
    palette()
    COLS = 1024; VMAX = 4; LANES = 32
    E = COLS <= 32 ? 1 : COLS <= 128 ? 4 : COLS <= 256 ? 8 : COLS <= 512 ? 16 : 32
    V = E < VMAX ? E : VMAX; PACKS = E / V; STEP = LANES * V
    W = 880; H = 700

    text(20, 30, "Stage 5 (regs): a row held in the registers of the warp that owns it", 18, "b")
    text(20, 50, "Drawn for fp32, cols = " COLS " (one warp per row): E = " E " elements per lane, in " PACKS " packs of V = " V " floats (16 bytes each)", 12, "", "", "#444444")

    # Panel 1: the grid, one line per pack index p, one column per lane.
    text(20, 84, "1. Which lane holds which columns: the row drawn " STEP " columns to a line", 14, "b")
    GX = 168; GY = 108; CW = 21; CH = 20
    text(GX - 10, GY - 6, "lane", 10, "", "end", "#666666")
    for (t = 0; t < LANES; t++) text(GX + t * CW + CW / 2, GY - 6, t, 9, "", "middle", "#666666")
    for (p = 0; p < PACKS; p++) {
        y = GY + p * CH
        text(GX - 10, y + 14, "p = " p ":  columns " p * STEP DASH (p + 1) * STEP - 1, 10, "", "end")
        for (t = 0; t < LANES; t++) {
            fill = t == 0 ? COL[1] : (t % 2 ? "#eef2f7" : "#e2e9f2")
            rect(GX + t * CW, y, CW, CH, fill, "#ffffff", " stroke-width=\"1\"")
        }
    }
    # Lane 0 and lane 1 of line 0 named, and the brace of one warp-wide load.
    gy1 = GY + PACKS * CH
    path(sprintf("M%d,%d v6 h%d v-6", GX, gy1 + 4, LANES * CW), GREY, 1)
    text(GX + LANES * CW / 2, gy1 + 24, "one line = one LDG.E.128 of the warp: " LANES " lanes " TIMES " 16 bytes = " LANES * 16 " consecutive bytes; lane t&#8217;s " PACKS " packs are its column", 11, "", "middle")

    # Panel 2: lane 0 register array.
    y2 = gy1 + 66
    text(20, y2, "2. Lane 0&#8217;s registers: float v[" E "], indexed by constants only (no local memory)", 14, "b")
    RX = GX; RY = y2 + 16; RW = 19; RH = 22; GAP = 6
    text(GX - 10, RY + 15, "lane 0, v[i]:", 10, "", "end")
    for (p = 0; p < PACKS; p++) {
        gx = RX + p * (V * RW + GAP)
        for (i = 0; i < V; i++) {
            rect(gx + i * RW, RY, RW, RH, COL[1], "#ffffff")
            text(gx + i * RW + RW / 2, RY + 15, p * V + i, 9, "", "middle", "#ffffff")
        }
        j = 0 * V + p * STEP      # lane 0: first = 0
        text(gx + V * RW / 2, RY + RH + 14, "x[" j DASH j + V - 1 "]", 10, "", "middle", "#333333")
    }
    text(GX - 10, RY + RH + 14, "holds:", 10, "", "end")
    text(RX, RY + RH + 36, "Lane t in general: v[" V "p + i] = x[" STEP "p + " V "t + i], p = 0" DASH PACKS - 1 ", i = 0" DASH V - 1 ". Packs past the row&#8217;s end hold &#8722;inf (exp gives 0).", 11, "", "", "#333333")

    # Panel 3: the pipeline.
    y3 = RY + RH + 80
    text(20, y3, "3. One read, the reductions in registers and shuffles, one write", 14, "b")
    BY = y3 + 16; BW = 128; BH = 92; BG = 18; BX0 = 20
    n = 0
    box[++n] = "DRAM|x in DRAM|the row:|" COLS " floats (" COLS * 4 / 1024 " KB)"
    box[++n] = "REGS|load|" PACKS " " TIMES " LDG.E.128 a lane,|all issued before|the first is used"
    box[++n] = "REGS|max|m = max of v[0" DASH E - 1 "],|then warp_max:|5 SHFL.BFLY steps"
    box[++n] = "REGS|exp and sum|v[i] = exp(v[i] " MINUS " m),|kept in v; s = " SIGMA " v[i],|then warp_sum"
    box[++n] = "REGS|scale and store|v[i] " TIMES " (1 / s),|" PACKS " " TIMES " STG.E.128 a lane"
    box[++n] = "DRAM|y in DRAM|the row,|written once"
    for (k = 1; k <= n; k++) {
        m = split(box[k], f, "|")
        x = BX0 + (k - 1) * (BW + BG)
        rect(x, BY, BW, BH, (f[1] == "DRAM" ? DRAM : REGS), "#8a8a8a", " rx=\"6\"")
        text(x + BW / 2, BY + 22, f[2], 12, "b", "middle")
        for (i = 3; i <= m; i++) text(x + BW / 2, BY + 22 + (i - 2) * 16, f[i], 10.5, "", "middle")
        if (k < n) {
            traffic = (k == 1 || k == n - 1)
            line(x + BW + 2, BY + BH / 2, x + BW + BG - 2, BY + BH / 2, traffic ? ORANGE : GREY, traffic ? 3 : 1.5, traffic ? "ahOrange" : "ahGrey")
        }
    }
    # Legend.
    ly = BY + BH + 26
    rect(20, ly - 10, 14, 12, DRAM, "#8a8a8a"); text(40, ly, "global memory (DRAM)", 11)
    rect(200, ly - 10, 14, 12, REGS, "#8a8a8a"); text(220, ly, "registers of the row&#8217;s warp (shuffles move values between its lanes)", 11)
    line(648, ly - 4, 676, ly - 4, ORANGE, 3, "ahOrange"); text(684, ly, "DRAM traffic: 1 read + 1 write", 11)

    # Panel 4: wider rows.
    y4 = ly + 40
    BE = 16; BCOLS = 8192; BT = BCOLS / BE; BSTEP = BT * V
    text(20, y4, "Rows wider than 1024 columns: one block per row, the same layout with the block in place of the warp", 14, "b")
    text(20, y4 + 20, "ceil(cols / E) threads in whole warps, E = " BE " by default (32 for rows that would need more than 1024 threads). At " BCOLS " fp32 columns:", 11, "", "", "#333333")
    text(20, y4 + 36, BT " threads, " BE / V " packs each, and pack p of thread t holds columns " BSTEP "p + " V "t " ELL " " BSTEP "p + " V "t + " V - 1 ". The reductions become", 11, "", "", "#333333")
    text(20, y4 + 52, "block_max / block_sum: warp shuffles, then one value per warp through shared memory (two barriers each).", 11, "", "", "#333333")
    page("figures/regs_row.svg", W, y4 + 72, "Stage 5: a softmax row held in registers")
}'

# ---------------------------------------------------------------------------------------------
# Figure 2: stage 6, one row on a cluster of blocks, and its exchange.
awk "$LIB"'
# One step box of a barrier timeline.
function step(col, y, lines, kind,   m, f, i, x) {
    m = split(lines, f, "|")
    x = TX + col * (TW + TG)
    rect(x, y, TW, TH, (kind == "bar" ? BAR : "#f4f4f4"), (kind == "bar" ? BARS : "#9a9a9a"), " rx=\"5\"")
    for (i = 1; i <= m; i++) text(x + TW / 2, y + TH / 2 + 4 + (i - (m + 1) / 2) * 13, f[i], 10, "", "middle")
    if (col < 6) line(x + TW + 1, y + TH / 2, x + TW + TG - 1, y + TH / 2, GREY, 1.2, "ahGrey")
}
BEGIN {
    palette()
    for (b = 1; b <= 8; b++) marker("ah" b, COL[b])
    # cut_row() of kernels/06_cluster.cu with preset 0 {8192, 32, 8, no pack, push}, fp32:
    COLS = 65536; TARGET = 8192; PE = 32; MAXB = 8; V = 4
    N = int((COLS + TARGET - 1) / TARGET); if (N > MAXB) N = MAXB
    SLICE = int((int((COLS + N - 1) / N) + V - 1) / V) * V
    THREADS = int((SLICE + PE - 1) / PE); THREADS = int((THREADS + 31) / 32) * 32
    W = 890
    text(20, 30, "Stage 6 (cluster): one very wide row on a cluster of blocks", 18, "b")
    text(20, 50, "Drawn for fp32, cols = " COLS " with the default preset: N = " N " slices of " SLICE " columns, one per block;", 12, "", "", "#444444")
    text(20, 66, "a block is " THREADS " threads " TIMES " " PE " floats and holds its slice in registers as stage 5 holds a row.", 12, "", "", "#444444")

    X0 = 180; P = 88; BW = 80; LX = 20
    # Row 1: x in DRAM.
    y = 86
    text(LX, y + 12, "x: the row in DRAM", 12, "b"); text(LX, y + 27, COLS " floats, " COLS * 4 / 1024 " KB", 10.5, "", "", "#444444")
    for (b = 0; b < N; b++) {
        rect(X0 + b * P, y, P, 26, TINT[b + 1], "#ffffff", " stroke-width=\"1.5\"")
        text(X0 + b * P + P / 2, y + 17, "slice " b, 10.5, "", "middle")
        text(X0 + b * P + P / 2, y + 40, b * SLICE DASH (b + 1) * SLICE - 1, 9.5, "", "middle", "#444444")
    }
    for (b = 0; b < N; b++) line(X0 + b * P + P / 2, y + 46, X0 + b * P + P / 2, y + 70, ORANGE, 2.5, "ahOrange")
    text(LX, y + 62, "one read (LDG.E.128)", 10.5, "", "", ORANGE)

    # The cluster outline: blocks, exchange, combine.
    CY0 = 164; CY1 = 414
    rect(X0 - 6, CY0, N * P + 8, CY1 - CY0, "none", "#777777", " stroke-dasharray=\"6,4\" rx=\"8\"")

    # Row 2: blocks and their pairs.
    by = 172; bh = 64
    text(LX, by + 12, "each block", 12, "b")
    text(LX, by + 27, "its slice in registers;", 10.5); text(LX, by + 41, "m_b = block max,", 10.5)
    text(LX, by + 55, "d_b = " SIGMA " exp(x " MINUS " m_b)", 10.5); text(LX, by + 69, "over the slice", 10.5)
    for (b = 0; b < N; b++) {
        x = X0 + b * P + (P - BW) / 2
        rect(x, by, BW, bh, "#ffffff", COL[b + 1], " stroke-width=\"1.5\" rx=\"5\"")
        text(x + BW / 2, by + 16, "block " b, 11, "b", "middle")
        text(x + BW / 2, by + 30, "slice " b " in regs", 9, "", "middle", "#444444")
        rect(x + 8, by + 38, BW - 16, 19, COL[b + 1], "", " rx=\"3\"")
        text(x + BW / 2, by + 52, "(m" sub_(b) ", d" sub_(b) ")", 10.5, "", "middle", (b == 5 ? "#222222" : "#ffffff"))
    }

    # Row 3: the exchange, arrows drawn into block 0.
    sy = 302; sh = 22; SW = 9
    for (b = 0; b < N; b++) {
        x = X0 + b * P + (P - BW) / 2
        for (s = 0; s < N; s++) rect(x + 4 + s * SW, sy, SW, sh, COL[s + 1], "#ffffff", " stroke-width=\"0.8\"")
        text(x + BW / 2, sy + sh + 12, "lanes 0" DASH N - 1, 9, "", "middle", "#444444")
    }
    for (s = N - 1; s >= 0; s--) {
        x1 = X0 + s * P + P / 2; y1 = by + 58
        x2 = X0 + (P - BW) / 2 + 4 + s * SW + SW / 2; y2 = sy - 2
        line(x1, y1, x2, y2, COL[s + 1], 1.6, "ah" s + 1)
    }
    text(LX, sy - 34, "exchange (DSMEM)", 12, "b")
    text(LX, sy - 19, "every block gets all " N, 10.5); text(LX, sy - 5, "pairs: lane l of each", 10.5)
    text(LX, sy + 9, "warp holds (m_l, d_l)", 10.5)
    text(LX, sy + 24, "(arrows: into block 0 only)", 9.5, "i", "", "#555555")

    # Row 4: combine, in every warp of every block.
    cy = 354
    text(LX, cy + 10, "combine (each warp)", 12, "b")
    text(LX, cy + 25, "M = max m_l  (warp_max)", 10.5); text(LX, cy + 39, "D = " SIGMA " d_l " DOT " exp(m_l " MINUS " M)", 10.5)
    text(LX, cy + 53, "      (warp_sum)", 10.5)
    oy = 446
    for (b = 0; b < N; b++) {
        x = X0 + b * P + (P - BW) / 2
        rect(x, cy, BW, 28, "#f2f2f2", "#9a9a9a", " rx=\"4\"")
        text(x + BW / 2, cy + 18, "M, D", 11, "b", "middle")
        line(x + BW / 2, sy + sh + 15, x + BW / 2, cy - 1, "#9a9a9a", 1, "ahGrey")
        line(x + BW / 2, cy + 30, x + BW / 2, oy - 2, ORANGE, 2.5, "ahOrange")
    }

    # Row 5: the write.
    for (b = 0; b < N; b++) {
        rect(X0 + b * P, oy, P, 26, TINT[b + 1], "#ffffff", " stroke-width=\"1.5\"")
        text(X0 + b * P + P / 2, oy + 17, "y slice " b, 10.5, "", "middle")
    }
    text(LX, oy - 12, "one write, from registers:", 10.5, "", "", ORANGE)
    text(LX, oy + 6, "y = exp(x " MINUS " m_b)", 10.5); text(LX, oy + 20, "   " DOT " exp(m_b " MINUS " M) / D", 10.5)

    # How the pairs travel.
    my = oy + 62
    text(20, my, "How a pair reaches the other blocks", 14, "b")
    text(20, my + 20, "push (the default preset): thread r of block b sends (m_b, d_b) with st.async into slot b of block r&#8217;s shared memory;", 11)
    text(20, my + 35, "block r&#8217;s mbarrier counts the " N " " TIMES " 8 bytes as they land, and once all have landed lane l reads slot l from its own shared memory.", 11)
    text(20, my + 54, "pull (preset 11): block b writes (m_b, d_b) to its own shared memory; after cluster.sync(), lane l of every warp reads", 11)
    text(20, my + 69, "block l&#8217;s pair through cluster.map_shared_rank (a generic load, LD.E, of another block&#8217;s shared memory).", 11)

    # The barriers.
    ty = my + 108
    text(20, ty, "The cluster barriers, in the order a block meets them", 14, "b")
    TX = 130; TW = 100; TG = 9; TH = 48
    py = ty + 14; qy = py + TH + 12
    text(20, py + TH / 2 + 4, "push (default)", 11, "b")
    step(0, py, "mbarrier init;|arrive at|barrier 1", "bar")
    step(1, py, "load slice;|block_max,|block_sum", "")
    step(2, py, "wait barrier 1;|st.async pair " TIMES " " N ";|wait mbarrier", "bar")
    step(3, py, "read " N " pairs|locally;|combine", "")
    step(4, py, "arrive at|barrier 2|(relaxed)", "bar")
    step(5, py, "store slice", "")
    step(6, py, "wait at|barrier 2;|exit", "bar")
    text(20, qy + TH / 2 + 4, "pull (preset 11)", 11, "b")
    step(0, qy, "load slice;|block_max,|block_sum", "")
    step(1, qy, "pair to own|shared memory", "")
    step(2, qy, "cluster.sync()|= barrier 1|(release)", "bar")
    step(3, qy, "lane l reads|block l&#8217;s pair;|combine", "")
    step(4, qy, "arrive at|barrier 2|(relaxed)", "bar")
    step(5, qy, "store slice", "")
    step(6, qy, "wait at|barrier 2;|exit", "bar")
    ny = qy + TH + 22
    rect(20, ny - 10, 14, 12, BAR, BARS); text(40, ny, "a barrier step. Barrier 2: no block exits while another may still read its shared memory (pull) or while one", 10.5)
    text(40, ny + 15, "of its own st.async may still be on its way (push). Pull&#8217;s cluster.sync() releases at cluster scope (MEMBAR.ALL.GPU in the SASS).", 10.5)
    text(20, ny + 38, "Colour: block rank b, its slices of x and y, and its pair (m_b, d_b). Dashed outline: one cluster, " N " blocks running at once on one GPC.", 10.5, "i", "", "#555555")
    page("figures/cluster_exchange.svg", W, ny + 52, "Stage 6: a softmax row on a thread-block cluster")
}'

# ---------------------------------------------------------------------------------------------
# Figure 3: stage 6's fallback without clusters, two kernels.
awk "$LIB"'
function strip(x0, y, label, colour_text,   b) {
    for (b = 0; b < N; b++) {
        rect(x0 + b * Q, y, Q, 24, TINT[b + 1], "#ffffff", " stroke-width=\"1.5\"")
        text(x0 + b * Q + Q / 2, y + 16, b, 10, "", "middle")
    }
    text(x0, y - 6, label, 11, "b", "", colour_text)
}
function blocks(x0, y, h, what,   b, x) {
    for (b = 0; b < N; b++) {
        x = x0 + b * Q + 2
        rect(x, y, Q - 4, h, "#ffffff", COL[b + 1], " stroke-width=\"1.5\" rx=\"4\"")
        text(x + (Q - 4) / 2, y + 14, b, 10, "b", "middle")
        if (what == "pair") {
            rect(x + 3, y + 20, Q - 10, 17, COL[b + 1], "", " rx=\"2\"")
            text(x + (Q - 4) / 2, y + 33, "m" sub_(b) ",d" sub_(b), 9, "", "middle", (b == 5 ? "#222222" : "#ffffff"))
        } else text(x + (Q - 4) / 2, y + 33, "M, D", 9.5, "", "middle")
    }
}
BEGIN {
    palette()
    # The same cut as the cluster figure (cut_row, preset 0; split ignores push and pack).
    COLS = 65536; TARGET = 8192; MAXB = 8
    N = int((COLS + TARGET - 1) / TARGET); if (N > MAXB) N = MAXB
    W = 890; Q = 44
    text(20, 30, "Stage 6 fallback (split): two kernels, the pairs through global memory", 18, "b")
    text(20, 50, "Any GPU, no clusters. The same " COLS "-column fp32 row: " N " blocks per row in each kernel, each slice held in registers", 12, "", "", "#444444")

    AX = 30; BX = AX + N * Q + 130
    text(AX, 84, "kernel 1: softmax_split_stats", 13, "b")
    text(BX, 84, "kernel 2: softmax_split_finish", 13, "b")
    # Kernel 1.
    strip(AX, 112, "x (read 1)", ORANGE)
    for (b = 0; b < N; b++) line(AX + b * Q + Q / 2, 138, AX + b * Q + Q / 2, 156, ORANGE, 2.2, "ahOrange")
    blocks(AX, 158, 44, "pair")
    for (b = 0; b < N; b++) line(AX + b * Q + Q / 2, 204, AX + b * Q + Q / 2, 232, GREY, 1.2, "ahGrey")
    for (b = 0; b < N; b++) {
        rect(AX + b * Q, 234, Q, 22, COL[b + 1], "#ffffff", " stroke-width=\"1.5\"")
        text(AX + b * Q + Q / 2, 249, "m" sub_(b) ",d" sub_(b), 9, "", "middle", (b == 5 ? "#222222" : "#ffffff"))
    }
    text(AX, 272, "workspace in global memory: pairs[row " DOT " " N " + b], 8 bytes a block", 10.5, "", "", "#333333")
    text(AX, 288, "block b: block_max " RARR " m_b, block_sum of exp(x " MINUS " m_b) " RARR " d_b", 10.5, "", "", "#333333")
    # Kernel 2.
    strip(BX, 112, "x again (read 2)", ORANGE)
    for (b = 0; b < N; b++) line(BX + b * Q + Q / 2, 138, BX + b * Q + Q / 2, 156, ORANGE, 2.2, "ahOrange")
    blocks(BX, 158, 44, "MD")
    for (b = 0; b < N; b++) line(BX + b * Q + Q / 2, 204, BX + b * Q + Q / 2, 232, ORANGE, 2.2, "ahOrange")
    for (b = 0; b < N; b++) {
        rect(BX + b * Q, 234, Q, 22, TINT[b + 1], "#ffffff", " stroke-width=\"1.5\"")
        text(BX + b * Q + Q / 2, 249, b, 10, "", "middle")
    }
    text(BX, 272, "y (write)", 11, "b", "", ORANGE)
    text(BX, 288, "every block: lane l " LARR " pair l of its row; M, D; y = exp(x " MINUS " M) / D", 10.5, "", "", "#333333")
    # Workspace to kernel 2: one route into the side of kernel 2 blocks.
    wx = AX + N * Q; wy = 245
    path(sprintf("M%d,%d H%d V%d H%d", wx + 2, wy, wx + 45, 180, BX - 4), GREY, 1.6, "ahGrey")
    text(wx + 52, 206, "the row&#8217;s", 10, "i", "", "#444444")
    text(wx + 52, 219, N " pairs, to", 10, "i", "", "#444444")
    text(wx + 52, 232, "every block", 10, "i", "", "#444444")

    # Traffic.
    ty = 330
    text(20, ty, "DRAM traffic per element, against the floor of one read and one write", 14, "b")
    U = 170; LX = 190
    text(LX - 10, ty + 30, "cluster (stage 6)", 11, "b", "end")
    rect(LX, ty + 16, U, 22, REGS, "#8a8a8a"); text(LX + U / 2, ty + 31, "read x", 11, "", "middle")
    rect(LX + U, ty + 16, U, 22, "#fde0c5", "#8a8a8a"); text(LX + U * 1.5, ty + 31, "write y", 11, "", "middle")
    text(LX - 10, ty + 62, "split (fallback)", 11, "b", "end")
    rect(LX, ty + 48, U, 22, REGS, "#8a8a8a"); text(LX + U / 2, ty + 63, "read x", 11, "", "middle")
    rect(LX + U, ty + 48, U, 22, REGS, "#8a8a8a", " stroke-dasharray=\"4,2\""); text(LX + U * 1.5, ty + 63, "read x again", 11, "", "middle")
    rect(LX + 2 * U, ty + 48, U, 22, "#fde0c5", "#8a8a8a"); text(LX + U * 2.5, ty + 63, "write y", 11, "", "middle")
    text(LX + 3 * U + 10, ty + 63, "3 transfers", 11, "", "", "#444444")
    text(LX + 2 * U + 10, ty + 31, "2 transfers", 11, "", "", "#444444")
    text(20, ty + 96, "Both are measured against the floor (one read, one write), so the fallback can reach at most about 2/3 of it.", 11, "", "", "#333333")
    page("figures/split_fallback.svg", W, ty + 112, "Stage 6 fallback: a softmax row in two kernels")
}'

echo "wrote $(pwd)/figures/regs_row.svg $(pwd)/figures/cluster_exchange.svg $(pwd)/figures/split_fallback.svg"
