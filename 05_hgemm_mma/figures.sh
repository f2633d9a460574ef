#!/usr/bin/env bash
# Draws the lesson's figures: 05_hgemm_mma/figures/*.svg, from the index formulas of the kernels
# and of the PTX ISA. Needs bash and awk (POSIX awk: mawk, gawk and busybox awk all do).
#
#   bash 05_hgemm_mma/figures.sh
#
# mma_fragments.svg  mma.sync.m16n8k16 .f16 -> .f32: which lane holds which element of A (16x16),
#                    B (16x8) and C/D (16x8); lane l: g = l / 4, t = l % 4 (common/ptx/mma.cuh,
#                    PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point type")
# ldmatrix_x4.svg    ldmatrix.x4: the lane that gives each row address of the four 8x8 matrices,
#                    with the address formulas of kernels/03_mma_ldmatrix.cu for A and for B, and
#                    which lane receives which element of one 8x8 matrix
# swizzle.svg        kernels/05_swizzle.cu's swz(): logical 16-byte chunk j of row r at physical
#                    chunk j ^ (r & 7); the bank groups of one ldmatrix phase, unswizzled and
#                    swizzled
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p figures

# The SVG helpers every chapter's figures use (common/svg.awk), prepended to each awk program.
LIB=$(cat ../common/svg.awk)

# Register colours, shared by figures 1 and 2: colour k = fragment register k of A and B, which
# is also matrix k of an ldmatrix.x4 (lanes 8k .. 8k+7 give its row addresses).
COLOURS='
BEGIN {
    REG[0] = "#a6cee3"; REG[1] = "#fdbf6f"; REG[2] = "#b2df8a"; REG[3] = "#cab2d6"
    CCOL[0] = "#fb9a99"; CCOL[1] = "#ffff99"
}
'

# ---------------------------------------------------------------------------------------------
# Figure 1: mma.m16n8k16 fragment layouts.
awk "$LIB$COLOURS"'
# One cell: lane, element name, fill. Remembers lane-5 cells for the outline drawn last.
function cell(x, y, lane, name, fill) {
    rect(x, y, CW, CH, fill, "#8c8c8c", 0.5)
    text(x + CW / 2, y + 11.5, "T" lane, 10, "middle", "normal")
    text(x + CW / 2, y + 22, name, 8.5, "middle", "normal", "#444444")
    if (lane == HL) { nhl++; HX[nhl] = x; HY[nhl] = y }
}
function grid_lines(x, y, cols) {   # 8x8 block boundaries and the frame
    line(x, y + 8 * CH, x + cols * CW, y + 8 * CH, "#333333", 1.5)
    if (cols == 16) line(x + 8 * CW, y, x + 8 * CW, y + 16 * CH, "#333333", 1.5)
    rect(x, y, cols * CW, 16 * CH, "none", "#333333", 1.5)
}
function indices(x, y, cols,   i) {
    for (i = 0; i < cols; i++) text(x + i * CW + CW / 2, y - 6, i, 9, "middle", "normal", "#666666")
    for (i = 0; i < 16; i++) text(x - 4, y + i * CH + CH / 2 + 3, i, 9, "end", "normal", "#666666")
}
function swatch(x, y, fill, s) {
    rect(x, y - 10, 12, 12, fill, "#8c8c8c", 0.5)
    text(x + 18, y, s, 11, "start", "normal")
}
BEGIN {
    CW = 23; CH = 26; HL = 5
    AX = 46; BX = AX + 16 * CW + 40; CX = BX + 8 * CW + 40; GY = 104
    W = CX + 8 * CW + 16; H = 686
    svg_open(W, H, "mma.sync.m16n8k16 fragment layouts: which lane holds which element of A, B and C/D")
    text(16, 26, "mma.sync.m16n8k16, f16 inputs, f32 accumulators: which lane holds which element", 16, "start", "bold")
    text(16, 46, "Lane l (0-31) of the warp: g = l / 4 (groupID), t = l % 4 (threadID_in_group). Cell: the lane (T5 = lane 5) and the", 11.5, "start", "normal", "#444444")
    text(16, 62, "element&#8217;s name in that lane&#8217;s fragment; colour: the register it is in (each A and B register holds two halves).", 11.5, "start", "normal", "#444444")

    text(AX, 84, "A: 16&#215;16 (m &#215; k)", 12.5, "start", "bold")
    text(BX, 84, "B: 16&#215;8 (k &#215; n)", 12.5, "start", "bold")
    text(CX, 84, "C, D: 16&#215;8 (m &#215; n)", 12.5, "start", "bold")
    indices(AX, GY, 16); indices(BX, GY, 8); indices(CX, GY, 8)

    # A: a0,a1 (g, 2t..2t+1)  a2,a3 (g+8, 2t..)  a4,a5 (g, 2t+8..)  a6,a7 (g+8, 2t+8..)
    for (lane = 0; lane < 32; lane++) {
        g = int(lane / 4); t = lane % 4
        for (e = 0; e < 8; e++) {
            r = g + 8 * (int(e / 2) % 2); c = 2 * t + e % 2 + 8 * int(e / 4)
            cell(AX + c * CW, GY + r * CH, lane, "a" e, REG[int(e / 2)])
        }
        # B: b0,b1 (k = 2t, 2t+1; n = g)  b2,b3 (k = 2t+8, 2t+9; n = g)
        for (e = 0; e < 4; e++) {
            k = 2 * t + e % 2 + 8 * int(e / 2)
            cell(BX + g * CW, GY + k * CH, lane, "b" e, REG[int(e / 2)])
        }
        # C/D, fp32: c0,c1 (g, 2t..2t+1)  c2,c3 (g+8, 2t..2t+1), one register each
        for (e = 0; e < 4; e++) {
            r = g + 8 * int(e / 2); c = 2 * t + e % 2
            cell(CX + c * CW, GY + r * CH, lane, "c" e, CCOL[int(e / 2)])
        }
    }
    grid_lines(AX, GY, 16); grid_lines(BX, GY, 8); grid_lines(CX, GY, 8)
    for (i = 1; i <= nhl; i++) rect(HX[i] + 1, HY[i] + 1, CW - 2, CH - 2, "none", "#000000", 2.4)

    y = GY + 16 * CH + 26
    swatch(AX, y,      REG[0], "a0, a1: register a[0], row g, columns 2t, 2t+1")
    swatch(AX, y + 18, REG[1], "a2, a3: register a[1], row g+8, columns 2t, 2t+1")
    swatch(AX, y + 36, REG[2], "a4, a5: register a[2], row g, columns 2t+8, 2t+9")
    swatch(AX, y + 54, REG[3], "a6, a7: register a[3], row g+8, columns 2t+8, 2t+9")
    swatch(BX, y,      REG[0], "b0, b1: register b[0], rows k = 2t, 2t+1, column n = g")
    swatch(BX, y + 18, REG[1], "b2, b3: register b[1], rows k = 2t+8, 2t+9, column n = g")
    swatch(BX, y + 36, CCOL[0], "c0, c1 (one fp32 register each): row g, columns 2t, 2t+1")
    swatch(BX, y + 54, CCOL[1], "c2, c3: row g+8, columns 2t, 2t+1")
    rect(AX, y + 70, 12, 12, "none", "#000000", 2.4)
    text(AX + 18, y + 80, "Bold outline: everything lane 5 holds (g = 1, t = 1): 8 halves of A, 4 of B, 4 floats of C.", 11, "start", "normal")
    text(16, H - 12, "The colours of A match the four matrices of an ldmatrix.x4 (next figure): register k is matrix k.", 10.5, "start", "normal", "#555555")
    svg_close()
}' > figures/mma_fragments.svg

# ---------------------------------------------------------------------------------------------
# Figure 2: ldmatrix.x4 addressing, for A and for B as kernels/03 (and 05-10) issue it.
awk "$LIB$COLOURS"'
function bars(x, y, title, sub1, sub2, rowname, isB,   l, r, ch, m) {
    text(x - 30, y - 58, title, 12.5, "start", "bold")
    text(x - 30, y - 41, sub1, 11, "start", "normal", "#444444")
    text(x - 30, y - 26, sub2, 11, "start", "normal", "#444444")
    text(x + BW / 2, y - 8, "k 0-7 (16 bytes)", 10.5, "middle", "normal", "#444444")
    text(x + BW + GAPX + BW / 2, y - 8, "k 8-15 (16 bytes)", 10.5, "middle", "normal", "#444444")
    text(x - 6, y - 8, rowname, 10.5, "end", "normal", "#444444")
    for (l = 0; l < 32; l++) {
        if (isB) { r = l % 8 + 8 * int(l / 16); ch = int(l / 8) % 2 }   # kernels/03, B
        else     { r = l % 16;                  ch = int(l / 16) }      # kernels/03, A
        m = int(l / 8)                                                  # ldmatrix: matrix of lane l
        rect(x + ch * (BW + GAPX), y + r * RH, BW, RH - 3, REG[m], "#7a7a7a", 0.6)
        text(x + ch * (BW + GAPX) + BW / 2, y + r * RH + RH / 2 + 2.5, "lane " l, 10.5, "middle", "normal")
    }
    for (r = 0; r < 16; r++) text(x - 6, y + r * RH + RH / 2 + 2.5, r, 9.5, "end", "normal", "#666666")
    line(x - 20, y + 8 * RH - 1.5, x + 2 * BW + GAPX + 4, y + 8 * RH - 1.5, "#333333", 1.2)
}
BEGIN {
    BW = 100; GAPX = 4; RH = 21
    AX = 52; BX = AX + 2 * BW + GAPX + 70; IX = BX + 2 * BW + GAPX + 60; GY = 150; IC = 25
    W = 880; H = 614
    svg_open(W, H, "ldmatrix.x4 addressing: lanes 8j..8j+7 give the row addresses of matrix j")
    text(16, 26, "ldmatrix.sync.aligned.m8n8.x4.shared.b16: four 8&#215;8 matrices of halves in one instruction", 16, "start", "bold")
    text(16, 46, "Each lane gives the shared-memory address of one 16-byte row: lanes 8j .. 8j+7 address the rows of matrix j", 11.5, "start", "normal", "#444444")
    text(16, 62, "(colour), and register j of every lane receives a piece of matrix j. Which row a lane addresses is the kernel&#8217;s choice:", 11.5, "start", "normal", "#444444")

    bars(AX, GY, "A fragment: As[m][k], 16&#215;16", "lane gives row lane % 16,", "k-chunk lane / 16", "row", 0)
    bars(BX, GY, "B fragments: Bs[n][k], 16&#215;16", "lane gives row lane % 8 + 8 (lane / 16),", "k-chunk (lane / 8) % 2", "n", 1)

    # inset: one 8x8 matrix, which lane receives which pair
    text(IX, GY - 58, "Inside matrix j, lane t receives", 12.5, "start", "bold")
    text(IX, GY - 41, "row t / 4, columns 2 (t % 4) and", 11, "start", "normal", "#444444")
    text(IX, GY - 26, "2 (t % 4) + 1, in its register j", 11, "start", "normal", "#444444")
    for (c = 0; c < 8; c++) text(IX + c * IC + IC / 2, GY - 8, c, 9.5, "middle", "normal", "#666666")
    for (r = 0; r < 8; r++) {
        text(IX - 5, GY + r * IC + IC / 2 + 3, r, 9.5, "end", "normal", "#666666")
        for (q = 0; q < 4; q++) {
            lane = 4 * r + q
            rect(IX + 2 * q * IC, GY + r * IC, 2 * IC, IC, (q % 2 ? "#f0f0f0" : "#ffffff"), "#555555", 1)
            line(IX + (2 * q + 1) * IC, GY + r * IC, IX + (2 * q + 1) * IC, GY + r * IC + 4, "#999999", 0.8)
            line(IX + (2 * q + 1) * IC, GY + (r + 1) * IC - 4, IX + (2 * q + 1) * IC, GY + (r + 1) * IC, "#999999", 0.8)
            text(IX + (2 * q + 1) * IC, GY + r * IC + IC / 2 + 4, "T" lane, 11, "middle", "normal")
        }
    }
    y = GY + 8 * IC + 24
    text(IX, y,      "That is the mma fragment layout:", 11, "start", "normal")
    text(IX, y + 16, "for A, matrix j becomes register a[j]", 11, "start", "normal")
    text(IX, y + 32, "(row g, columns 2t, 2t+1 of its 8&#215;8", 11, "start", "normal")
    text(IX, y + 48, "quarter, previous figure); for B stored", 11, "start", "normal")
    text(IX, y + 64, "[n][k] the rows are n and the columns k:", 11, "start", "normal")
    text(IX, y + 80, "b0, b1 at n = g, k = 2t, 2t+1.", 11, "start", "normal")

    # legend
    y = GY + 16 * RH + 30
    split("0-7 8-15 16-23 24-31", LN, " ")
    split("b[0] of n-tile j|b[1] of n-tile j|b[0] of n-tile j+1|b[1] of n-tile j+1", BR, "|")
    for (j = 0; j < 4; j++) {
        x = 16 + j * 216
        rect(x, y - 10, 12, 12, REG[j], "#7a7a7a", 0.6)
        text(x + 18, y, "matrix " j " = lanes " LN[j + 1], 11, "start", "bold")
        text(x + 18, y + 16, "&#8594; register " j ": A&#8217;s a[" j "],", 11, "start", "normal")
        text(x + 18, y + 32, "B&#8217;s " BR[j + 1], 11, "start", "normal")
    }
    y += 16
    text(16, y + 44, "A: one ldmatrix.x4 fills a[0..3] of a 16&#215;16 A fragment. B: one ldmatrix.x4 fills b[0], b[1] of two 16&#215;8 fragments (n-tiles j, j+1).", 10.5, "start", "normal", "#555555")
    text(16, y + 60, "Row addresses as in kernels/03_mma_ldmatrix.cu; stages 5-9 use the same rows and chunks through swz(), stage 10&#8217;s B uses ldmatrix.trans.", 10.5, "start", "normal", "#555555")
    svg_close()
}' > figures/ldmatrix_x4.svg

# ---------------------------------------------------------------------------------------------
# Figure 3: the XOR swizzle of kernels/05_swizzle.cu: swz(row, chunk) = row * 128 +
# ((chunk ^ (row & 7)) << 4). A cell at physical chunk p of row r holds logical chunk j = p ^ r.
awk "$LIB"'
function panel(x, y, title, subt, swizzled,   r, p, j, n, worst, g) {
    text(x - 40, y - 58, title, 13, "start", "bold")
    text(x - 40, y - 41, subt, 11, "start", "normal", "#444444")
    text(x + 4 * CW, y - 22, "physical chunk p = bank group p (banks 4p .. 4p+3)", 10.5, "middle", "normal", "#444444")
    for (p = 0; p < 8; p++) text(x + p * CW + CW / 2, y - 6, p, 10, "middle", "normal", "#666666")
    text(x - 8, y - 6, "r &amp; 7", 10, "end", "normal", "#666666")
    for (g = 0; g < 8; g++) CNT[g] = 0
    for (r = 0; r < 8; r++) {
        text(x - 8, y + r * CH + CH / 2 + 4, r, 10, "end", "normal", "#666666")
        for (p = 0; p < 8; p++) {
            j = swizzled ? bitxor(p, r) : p
            rect(x + p * CW, y + r * CH, CW, CH, COL[j], "#8c8c8c", 0.6)
            text(x + p * CW + CW / 2, y + r * CH + CH / 2 + 4.5, j, 12.5, "middle", "normal")
            if (j == HJ) { CNT[p]++; hx[r] = x + p * CW }
        }
    }
    for (r = 0; r < 8; r++) rect(hx[r] + 1.2, y + r * CH + 1.2, CW - 2.4, CH - 2.4, "none", "#000000", 2.6)
    rect(x, y, 8 * CW, 8 * CH, "none", "#333333", 1.4)
    # the bank groups of the highlighted phase
    yb = y + 8 * CH + 34
    text(x - 8, yb + 6, "outlined", 10, "end", "normal", "#444444")
    text(x - 8, yb + 17, "chunks in", 10, "end", "normal", "#444444")
    text(x - 8, yb + 28, "group p", 10, "end", "normal", "#444444")
    worst = 0
    for (p = 0; p < 8; p++) {
        n = CNT[p]; if (n > worst) worst = n
        rect(x + p * CW + 3, yb, CW - 6, 28, (n > 1 ? "#e34a33" : (n == 1 ? "#a1d99b" : "#f7f7f7")), "#8c8c8c", 0.6)
        text(x + p * CW + CW / 2, yb + 19, n, 12.5, "middle", "bold", (n > 1 ? "#ffffff" : "#222222"))
    }
    if (worst > 1)
        text(x + 4 * CW, yb + 54, worst " rows in one bank group: " worst " wavefronts (" worst "-way conflict)", 11.5, "middle", "bold", "#b30000")
    else
        text(x + 4 * CW, yb + 54, "one row per bank group: 1 wavefront (conflict-free)", 11.5, "middle", "bold", "#2a7a2a")
}
BEGIN {
    split("#8dd3c7 #ffffb3 #bebada #fb8072 #80b1d3 #fdb462 #b3de69 #fccde5", C, " ")
    for (j = 0; j < 8; j++) COL[j] = C[j + 1]
    CW = 38; CH = 27; HJ = 2
    LX = 86; RX = LX + 8 * CW + 110; GY = 166
    W = 880; H = 586
    svg_open(W, H, "XOR swizzle of stage 5: logical chunk j of row r stored at chunk j ^ (r &amp; 7)")
    text(16, 26, "The XOR swizzle of stage 5: chunk j of row r is stored at chunk j ^ (r &amp; 7)", 16, "start", "bold")
    text(16, 46, "A tile row is BK = 64 halves = 128 bytes = 8 chunks of 16 bytes: it spans the 32 banks once. Number and colour: the", 11.5, "start", "normal", "#444444")
    text(16, 62, "logical chunk j (halves k = 8j .. 8j+7) stored at that place. Rows 8 .. 127 repeat the pattern: only r &amp; 7 matters.", 11.5, "start", "normal", "#444444")
    for (j = 0; j < 8; j++) {
        x = 16 + j * 107
        rect(x, 74, 14, 14, COL[j], "#8c8c8c", 0.6)
        text(x + 20, 85, "j = " j " (k " 8 * j "-" 8 * j + 7 ")", 10.5, "start", "normal")
    }
    panel(LX, GY, "Unswizzled 128-byte rows: p = j", "what stage 5 would be without the XOR", 0)
    panel(RX, GY, "Stage 5: p = j ^ (r &amp; 7)", "swz(row, chunk) in kernels/05_swizzle.cu", 1)
    y = GY + 8 * CH + 122
    rect(16, y - 10, 12, 12, "none", "#000000", 2.6)
    text(34, y, "Bold outline: one ldmatrix phase, the 8 row addresses of lanes 0-7 of the A ldmatrix at kk = 1 (logical chunk 2 of rows 0-7).", 11, "start", "normal")
    text(34, y + 17, "Shared memory serves them in one wavefront only if the 8 chunks are in 8 different bank groups.", 11, "start", "normal")
    text(16, y + 42, "cp.async writes: thread t copies chunk t % 8 of row t / 8, so 8 consecutive lanes write one whole row, which covers", 10.5, "start", "normal", "#555555")
    text(16, y + 57, "the 8 bank groups once in either layout: conflict-free too. (Stage 4, with 32-wide k-tiles, pads its rows to 80 bytes instead.)", 10.5, "start", "normal", "#555555")
    svg_close()
}' > figures/swizzle.svg

ls figures/*.svg
