#!/usr/bin/env bash
# Draws the lesson's figures: 02_reduce/figures/*.svg, from the index arithmetic of the kernels.
# Needs bash and awk (POSIX awk: mawk, gawk and busybox awk all do); nothing else.
#
#   bash 02_reduce/figures.sh
#
# tree.svg   which thread adds which pair, step by step, in a 16-thread block:
#            interleaved addressing (kernels/01, 02: index = 2*s*tid, s = 1, 2, 4, 8)
#            against sequential addressing (kernels/03: tid < s adds sdata[tid + s], s = 8 .. 1)
# banks.svg  the shared-memory bank each lane of warp 0 touches at every step of the real
#            256-thread block, coloured by how many active lanes share that bank:
#            kernels/02 (conflicts 2, 4, 8, 8, 8, 4, 2, 1-way) against kernels/03 (none)
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p figures

# ---------------------------------------------------------------------------------------------
# Figure 1: the reduction tree, 16 values (the kernels' THREADS = 256 shrunk to 16).
awk -v FINAL=figures/tree.svg '
function cx(i) { return X0 + i * P + W / 2 }
function cell(i, y, kind, label,   fill, stroke, tc) {
    if (kind == "live")   { fill = "#ffffff"; stroke = "#333333"; tc = "#222222" }
    if (kind == "write")  { fill = "#2c7fb8"; stroke = "#1d5a85"; tc = "#ffffff" }
    if (kind == "dead")   { fill = "#eeeeee"; stroke = "#cccccc"; tc = "#999999" }
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"%s\" stroke=\"%s\"/>\n",
        X0 + i * P, y, W, H, fill, stroke > OUT
    if (label != "")
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\" font-size=\"12\">%s</text>\n",
            cx(i), y + H / 2 + 4, tc, label > OUT
}
function edge(from, to, y0, y1, colour, marker) {
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.6\" marker-end=\"url(#%s)\"/>\n",
        cx(from), y0 + H, cx(to), y1 - 2, colour, marker > OUT
}
# One panel. mode 1: interleaved (kernels/02), mode 3: sequential (kernels/03).
function panel(mode, y, title, subtitle,   nlive, i, s, step, tid, dst, src, yprev, ycur, k) {
    printf "<text x=\"%d\" y=\"%d\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", 20, y, title > OUT
    printf "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#444444\">%s</text>\n", 20, y + 18, subtitle > OUT
    y += 40
    for (i = 0; i < N; i++)
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\" fill=\"#666666\">%d</text>\n",
            cx(i), y, i > OUT
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\" fill=\"#666666\">sdata index</text>\n",
        X0 - 10, y > OUT
    y += 6
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"12\">loaded</text>\n", X0 - 10, y + H / 2 + 4 > OUT
    for (i = 0; i < N; i++) cell(i, y, "live", "x" i)
    yprev = y
    for (step = 0; step < 4; step++) {
        s = (mode == 1) ? 2 ^ step : N / 2 / 2 ^ step
        ycur = yprev + H + GAP
        for (i = 0; i < N; i++) nlive[i] = 0
        for (tid = 0; tid < N; tid++) {
            if (mode == 1) { dst = 2 * s * tid; if (dst >= N) continue }   # index < THREADS
            else { if (tid >= s) continue; dst = tid }                     # tid < s
            src = dst + s
            edge(dst, dst, yprev, ycur, "#555555", "arrowGrey")
            edge(src, dst, yprev, ycur, "#e6550d", "arrowOrange")
            nlive[dst] = tid + 1                                            # 0: not written
            k = tid
        }
        for (i = 0; i < N; i++) {
            if (nlive[i]) cell(i, ycur, "write", "t" (nlive[i] - 1))
            else cell(i, ycur, "dead", "")
        }
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"13\" font-weight=\"bold\">s = %d</text>\n",
            X0 - 10, ycur + H / 2 - 1, s > OUT
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\" fill=\"#444444\">%s</text>\n",
            X0 - 10, ycur + H / 2 + 12, (k == 0 ? "t0 adds" : "t0" "&#8211;" "t" k " add") > OUT
        yprev = ycur
    }
    return yprev + H
}
BEGIN {
    N = 16; W = 34; H = 24; P = 40; GAP = 40; X0 = 110
    WIDTH = X0 + N * P + 10
    OUT = FINAL ".body"
    # legend
    y = 44
    printf "<rect x=\"20\" y=\"%d\" width=\"16\" height=\"12\" rx=\"2\" fill=\"#2c7fb8\"/><text x=\"42\" y=\"%d\">sdata[dst] += sdata[dst + s] by thread t<tspan font-style=\"italic\">n</tspan></text>\n", y, y + 10 > OUT
    printf "<rect x=\"322\" y=\"%d\" width=\"16\" height=\"12\" rx=\"2\" fill=\"#eeeeee\" stroke=\"#cccccc\"/><text x=\"344\" y=\"%d\">not read again</text>\n", y, y + 10 > OUT
    printf "<line x1=\"456\" y1=\"%d\" x2=\"478\" y2=\"%d\" stroke=\"#555555\" stroke-width=\"1.6\"/><text x=\"484\" y=\"%d\">sdata[dst]</text>\n", y + 6, y + 6, y + 10 > OUT
    printf "<line x1=\"558\" y1=\"%d\" x2=\"580\" y2=\"%d\" stroke=\"#e6550d\" stroke-width=\"1.6\"/><text x=\"586\" y=\"%d\">its partner sdata[dst + s]</text>\n", y + 6, y + 6, y + 10 > OUT
    y = panel(1, 92, "Stages 1&#8211;2, interleaved addressing: strides double, s = 1, 2, 4, 8",
        "Stage 2: thread tid adds sdata[2&#183;s&#183;tid + s] into sdata[2&#183;s&#183;tid] if 2&#183;s&#183;tid &lt; blockDim: the first threads work.")
    printf "<text x=\"20\" y=\"%d\" font-size=\"12\" fill=\"#444444\">Stage 1 adds the same pairs with other threads: tid = dst (the test tid %% 2s == 0),</text>\n", y + 22 > OUT
    printf "<text x=\"20\" y=\"%d\" font-size=\"12\" fill=\"#444444\">so t0, t2, t4, &#8230; t14 at s = 1, and t0, t8 at s = 4: the busy threads are spread over every warp.</text>\n", y + 38 > OUT
    y = panel(3, y + 74, "Stage 3, sequential addressing: strides halve, s = 8, 4, 2, 1",
        "Thread tid &lt; s adds sdata[tid + s] into sdata[tid]: partners blockDim/2 apart at first, the live values packed at the front.")
    printf "<text x=\"20\" y=\"%d\" font-size=\"12\" fill=\"#444444\">The kernels run the same trees with blockDim = 256 (eight steps, s up to 128); 16 values only fit the page better.</text>\n", y + 22 > OUT
    HEIGHT = y + 36
    close(OUT)
    printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" > FINAL
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT > FINAL
    printf "<defs>\n" > FINAL
    printf "<marker id=\"arrowGrey\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555555\"/></marker>\n" > FINAL
    printf "<marker id=\"arrowOrange\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#e6550d\"/></marker>\n" > FINAL
    printf "</defs>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", WIDTH, HEIGHT > FINAL
    printf "<text x=\"20\" y=\"28\" font-size=\"18\" font-weight=\"bold\">One block&#8217;s tree: which thread adds which pair (16 values, 16 threads)</text>\n" > FINAL
    while ((getline line < OUT) > 0) print line > FINAL
    printf "</svg>\n" > FINAL
}'
rm -f figures/tree.svg.body

# ---------------------------------------------------------------------------------------------
# Figure 2: banks hit by warp 0 at every step, 256-thread block, 32 banks of 4 bytes.
awk -v FINAL=figures/banks.svg '
function colour(d) {
    if (d == 1) return "#a6d96a"
    if (d == 2) return "#fee08b"
    if (d == 4) return "#fdae61"
    return "#d73027"
}
function swatch(x, y, d, text) {
    printf "<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"12\" rx=\"2\" fill=\"%s\" stroke=\"#888888\" stroke-width=\"0.5\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
        x, y, colour(d), x + 21, y + 10, text > OUT
}
# mode 2: kernels/02, lane tid of warp 0 touches sdata[2*s*tid] if 2*s*tid < THREADS.
# mode 3: kernels/03, lane tid touches sdata[tid] if tid < s.
function panel(mode, y, title, subtitle,   step, s, lane, active, bank, cnt, deg, i, label) {
    printf "<text x=\"20\" y=\"%d\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", y, title > OUT
    printf "<text x=\"20\" y=\"%d\" font-size=\"12\" fill=\"#444444\">%s</text>\n", y + 18, subtitle > OUT
    y += 42
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\" fill=\"#666666\">lane</text>\n", X0 - 8, y > OUT
    for (lane = 0; lane < 32; lane++)
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"#666666\">%d</text>\n",
            X0 + lane * P + W / 2, y, lane > OUT
    printf "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#666666\">conflict</text>\n", X0 + 32 * P + 10, y > OUT
    y += 6
    for (step = 0; step < 8; step++) {
        s = (mode == 2) ? 2 ^ step : THREADS / 2 / 2 ^ step
        for (i = 0; i < 32; i++) cnt[i] = 0
        for (lane = 0; lane < 32; lane++) {
            if (mode == 2) { active[lane] = (2 * s * lane < THREADS); bank[lane] = (2 * s * lane) % 32 }
            else { active[lane] = (lane < s); bank[lane] = lane % 32 }
            if (active[lane]) cnt[bank[lane]]++
        }
        deg = 0
        for (i = 0; i < 32; i++) if (cnt[i] > deg) deg = cnt[i]
        for (lane = 0; lane < 32; lane++) {
            if (active[lane])
                printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" fill=\"%s\" stroke=\"#888888\" stroke-width=\"0.5\"/><text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"%s\">%d</text>\n",
                    X0 + lane * P, y, W, H, colour(cnt[bank[lane]]), X0 + lane * P + W / 2, y + H / 2 + 4,
                    (cnt[bank[lane]] == 8 ? "#ffffff" : "#222222"), bank[lane] > OUT
            else
                printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" fill=\"#f2f2f2\" stroke=\"#dddddd\" stroke-width=\"0.5\"/>\n",
                    X0 + lane * P, y, W, H > OUT
        }
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"12\" font-weight=\"bold\">s = %d</text>\n",
            X0 - 8, y + H / 2 + 4, s > OUT
        label = (deg == 1) ? "none" : deg "-way"
        printf "<text x=\"%d\" y=\"%d\" font-size=\"12\" font-weight=\"bold\" fill=\"%s\">%s</text>\n",
            X0 + 32 * P + 10, y + H / 2 + 4, (deg >= 8 ? "#b2182b" : "#222222"), label > OUT
        DEGREES = DEGREES " " deg
        y += H + 4
    }
    return y
}
BEGIN {
    THREADS = 256; W = 19; H = 18; P = 21; X0 = 70
    WIDTH = X0 + 32 * P + 80
    OUT = FINAL ".body"
    printf "<text x=\"20\" y=\"48\" font-size=\"12\" fill=\"#444444\">Each cell: the bank (word index mod 32) that lane tid reads and writes. Colour: how many active lanes of the warp hit that bank.</text>\n" > OUT
    y = 60
    swatch(20, y, 1, "1 lane (no conflict)"); swatch(175, y, 2, "2 lanes"); swatch(265, y, 4, "4 lanes"); swatch(355, y, 8, "8 lanes")
    printf "<rect x=\"445\" y=\"%d\" width=\"16\" height=\"12\" rx=\"2\" fill=\"#f2f2f2\" stroke=\"#dddddd\"/><text x=\"466\" y=\"%d\">idle lane</text>\n", y, y + 10 > OUT
    y = panel(2, 108, "Stage 2, interleaved: lane tid touches sdata[2&#183;s&#183;tid] (and the word s after it)",
        "Active: 2&#183;s&#183;tid &lt; 256. At s = 1 warps 0&#8211;3 work, at s = 2 warps 0&#8211;1 (each as warp 0 here); from s = 4 on, warp 0 alone.")
    printf "<text x=\"20\" y=\"%d\" font-size=\"12\" fill=\"#444444\">The degree doubles with s while whole warps work, then halves with the active lanes once they all share one bank.</text>\n", y + 10 > OUT
    y = panel(3, y + 48, "Stage 3, sequential: lane tid touches sdata[tid] (and sdata[tid + s])",
        "Active: tid &lt; s. Consecutive lanes touch consecutive words, one bank each, at every step.")
    HEIGHT = y + 12
    close(OUT)
    printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" > FINAL
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT > FINAL
    printf "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", WIDTH, HEIGHT > FINAL
    printf "<text x=\"20\" y=\"28\" font-size=\"18\" font-weight=\"bold\">Shared-memory banks hit by warp 0 at each step (256-thread block)</text>\n" > FINAL
    while ((getline line < OUT) > 0) print line > FINAL
    printf "</svg>\n" > FINAL
    print "banks.svg conflict degrees, stage 2 then stage 3:" DEGREES > "/dev/stderr"
}'
rm -f figures/banks.svg.body

echo "wrote $(pwd)/figures/tree.svg $(pwd)/figures/banks.svg"
