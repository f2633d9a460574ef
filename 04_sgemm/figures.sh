#!/usr/bin/env bash
# Draws the figures of the chapter's README as SVG into 04_sgemm/figures/. bash, printf and awk
# only: no GPU, no build, nothing to install.
#   tiling.svg          stage 8's map: block tile -> warp tiles -> one lane's 8x8 outputs
#                       (kernels/08_warptile.cu), with stage 10's default tiles named
#   register_banks.svg  the README's register-bank model, one run of FFMAs of configuration 7's
#                       main loop as cuobjdump prints it, the COLS order of a k step and the
#                       conflicts each FFMA order counts (README, "Register banks")
# usage: bash 04_sgemm/figures.sh
# Every size below is the code's; if a kernel's tiles change, change them here too.
set -eu
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
out=$here/figures
mkdir -p "$out"

FONT='DejaVu Sans, Helvetica, Arial, sans-serif'
# Colours. Four float4 groups (g, h) of one lane; two register banks; neutrals.
G00='#2f6db3' G01='#e07b1a' G10='#2e9a48' G11='#8a5cc2'
BANK0_FILL='#c6dbef' BANK0_LINE='#2171b5' BANK1_FILL='#fdd0a2' BANK1_LINE='#d94801'
INK='#222222' GREY='#666666' LIGHT='#f3f3f3' RULE='#bbbbbb'

svg_open() { # width height title
    printf '<?xml version="1.0" encoding="UTF-8"?>\n'
    printf '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">\n' \
        "$1" "$2" "$1" "$2" "$FONT"
    printf '<title>%s</title>\n' "$3"
    printf '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>\n' "$1" "$2"
    printf '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker></defs>\n' "$GREY"
}
svg_close() { printf '</svg>\n'; }
rect() { # x y w h fill stroke [stroke-width] [extra attributes]
    printf '<rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="%s" stroke-width="%s"%s/>\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" "${7:-1}" "${8:+ $8}"
}
text() { # x y size anchor fill content [extra attributes]; content is XML-escaped by the caller
    printf '<text x="%s" y="%s" font-size="%s" text-anchor="%s" fill="%s"%s>%s</text>\n' \
        "$1" "$2" "$3" "$4" "$5" "${7:+ $7}" "$6"
}
line() { # x1 y1 x2 y2 stroke [width] [extra attributes]
    printf '<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/>\n' \
        "$1" "$2" "$3" "$4" "$5" "${6:-1}" "${7:+ $7}"
}

# ---- Figure 1: tiling -----------------------------------------------------------------------
# Stage 8 (kernels/08_warptile.cu): BM = BN = 128, BK = 8, WM = 64, WN = 32, TM = TN = 8,
# 256 threads. Warp w: wm = 64 * (w / 4), wn = 32 * (w % 4). Lane l: rows
# wm + 4 * (l / 4) + 32 * g + i, columns wn + 4 * (l % 4) + 16 * h + j (g, h = 0, 1; i, j = 0..3).
tiling() {
    local BM=128 BN=128 WM=64 WN=32 TM=8 TN=8
    local TRM=$((WM / TM)) TRN=$((WN / TN))  # 8 x 4 lanes
    local WARPS_N=$((BN / WN))
    local W=900 H=625
    local SHOW_WARP=7 SHOW_LANE=9
    local lane_m=$((SHOW_LANE / TRN)) lane_n=$((SHOW_LANE % TRN))
    local colours=("$G00" "$G01" "$G10" "$G11")
    svg_open $W $H "Stage 8 (warptile): block tile, warp tiles and one thread's outputs"
    text 30 32 19 start "$INK" "Stage 8 (warptile): who computes which element of C" 'font-weight="bold"'
    text 30 54 12.5 start "$GREY" "Block tile ${BM} x ${BN} (BK = 8) → 8 warp tiles of ${WM} x ${WN} → 32 lanes with ${TM} x ${TN} outputs each, 4 x 4 at a time"

    # Panel 1: the block tile, 2 px per element.
    local x1=70 y1=124 s1=2
    text $((x1 + BN * s1 / 2)) 82 14 middle "$INK" "Block tile of C: ${BM} x ${BN}" 'font-weight="bold"'
    local w x y
    for w in 0 1 2 3 4 5 6 7; do
        x=$((x1 + (w % WARPS_N) * WN * s1)) y=$((y1 + (w / WARPS_N) * WM * s1))
        local fill='#e6edf5'
        [ "$w" = "$SHOW_WARP" ] && fill='#fbd9a8'
        rect $x $y $((WN * s1)) $((WM * s1)) "$fill" "$INK" 1.2
        text $((x + WN * s1 / 2)) $((y + WM * s1 / 2 - 2)) 15 middle "$INK" "w$w" 'font-weight="bold"'
        text $((x + WN * s1 / 2)) $((y + WM * s1 / 2 + 15)) 10.5 middle "$GREY" "$(((w / WARPS_N) * WM)), $(((w % WARPS_N) * WN))"
    done
    for x in 0 32 64 96 128; do text $((x1 + x * s1)) $((y1 - 6)) 10.5 middle "$GREY" $x; done
    for y in 0 64 128; do text $((x1 - 6)) $((y1 + y * s1 + 4)) 10.5 end "$GREY" $y; done
    text $((x1 - 34)) $((y1 + BM * s1 / 2)) 11 middle "$GREY" "row" "transform=\"rotate(-90 $((x1 - 34)) $((y1 + BM * s1 / 2)))\""
    text $((x1 + BN * s1 / 2)) $((y1 - 20)) 11 middle "$GREY" "column"
    text $((x1 + BN * s1 / 2)) $((y1 + BM * s1 + 22)) 11.5 middle "$INK" "warp w starts at (wm, wn) ="
    text $((x1 + BN * s1 / 2)) $((y1 + BM * s1 + 38)) 11.5 middle "$INK" "(64·(w / 4), 32·(w mod 4)),"
    text $((x1 + BN * s1 / 2)) $((y1 + BM * s1 + 54)) 11.5 middle "$INK" "printed under its name"

    # Panel 2: the shown warp's tile, 5 px per element, in 4x4 pieces labelled with their lane.
    local x2=400 y2=124 s2=5 r c lane
    local px=$((4 * s2))
    text $((x2 + WN * s2 / 2)) 82 14 middle "$INK" "Warp tile of w$SHOW_WARP: ${WM} x ${WN}" 'font-weight="bold"'
    # zoom lines from the warp in panel 1
    local zx=$((x1 + (SHOW_WARP % WARPS_N + 1) * WN * s1)) zy=$((y1 + (SHOW_WARP / WARPS_N) * WM * s1))
    line $zx $zy $x2 $y2 '#999999' 1 'stroke-dasharray="4 3"'
    line $zx $((zy + WM * s1)) $x2 $((y2 + WM * s2)) '#999999' 1 'stroke-dasharray="4 3"'
    for ((r = 0; r < WM / 4; r++)); do
        for ((c = 0; c < WN / 4; c++)); do
            lane=$((TRN * (r % TRM) + c % TRN))
            x=$((x2 + c * px)) y=$((y2 + r * px))
            if [ $lane = $SHOW_LANE ]; then
                rect $x $y $px $px "${colours[$((2 * (r / TRM) + c / TRN))]}" '#ffffff' 0.8
                text $((x + px / 2)) $((y + px / 2 + 4)) 10 middle '#ffffff' $lane 'font-weight="bold"'
            else
                rect $x $y $px $px "$LIGHT" "$RULE" 0.6
                text $((x + px / 2)) $((y + px / 2 + 3)) 9 middle "$GREY" $lane
            fi
        done
    done
    rect $x2 $y2 $((WN * s2)) $((WM * s2)) none "$INK" 1.5
    line $x2 $((y2 + TRM * 4 * s2)) $((x2 + WN * s2)) $((y2 + TRM * 4 * s2)) "$INK" 1.5
    line $((x2 + TRN * 4 * s2)) $y2 $((x2 + TRN * 4 * s2)) $((y2 + WM * s2)) "$INK" 1.5
    for x in 0 16 32; do text $((x2 + x * s2)) $((y2 - 6)) 10.5 middle "$GREY" $x; done
    for y in 0 32 64; do text $((x2 - 6)) $((y2 + y * s2 + 4)) 10.5 end "$GREY" $y; done
    text $((x2 + WN * s2 / 2)) $((y2 - 20)) 11 middle "$GREY" "column in the warp tile"
    text $((x2 - 30)) $((y2 + WM * s2 / 2)) 11 middle "$GREY" "row in the warp tile" "transform=\"rotate(-90 $((x2 - 30)) $((y2 + WM * s2 / 2)))\""
    local cx2=$((x2 + WN * s2 / 2)) cy2=$((y2 + WM * s2 + 22))
    text $cx2 $cy2 11.5 middle "$INK" "Each 4 x 4 piece shows the lane"
    text $cx2 $((cy2 + 16)) 11.5 middle "$INK" "that owns it: an 8 x 4 grid of"
    text $cx2 $((cy2 + 32)) 11.5 middle "$INK" "lanes, repeated 32 rows and"
    text $cx2 $((cy2 + 48)) 11.5 middle "$INK" "16 columns further on"

    # Panel 3: the shown lane's TM x TN accumulators, gaps between its float4 groups.
    local x3=660 y3=154 s3=26 gap=8 i j
    text 764 82 14 middle "$INK" "Lane $SHOW_LANE: acc[i][j], ${TM} x ${TN}" 'font-weight="bold"'
    text $((x3 + 4 * s3 + gap / 2)) $((y3 - 24)) 11 middle "$GREY" "column in the warp tile"
    text $((x3 - 34)) $((y3 + 4 * s3 + gap / 2)) 11 middle "$GREY" "row in the warp tile" "transform=\"rotate(-90 $((x3 - 34)) $((y3 + 4 * s3 + gap / 2)))\""
    for ((j = 0; j < TN; j++)); do
        x=$((x3 + j * s3 + (j / 4) * gap))
        text $((x + s3 / 2)) $((y3 - 7)) 10.5 middle "$INK" $((4 * lane_n + TRN * 4 * (j / 4) + j % 4))
    done
    for ((i = 0; i < TM; i++)); do
        y=$((y3 + i * s3 + (i / 4) * gap))
        text $((x3 - 6)) $((y + s3 / 2 + 4)) 10.5 end "$INK" $((4 * lane_m + TRM * 4 * (i / 4) + i % 4))
        for ((j = 0; j < TN; j++)); do
            x=$((x3 + j * s3 + (j / 4) * gap))
            rect $x $y $s3 $s3 "${colours[$((2 * (i / 4) + j / 4))]}" '#ffffff' 1
            text $((x + s3 / 2)) $((y + s3 / 2 + 4)) 9.5 middle '#ffffff' "$i,$j"
        done
    done
    # legend: the four groups
    local ly=$((y3 + 8 * s3 + gap + 26)) k
    local g h r0 c0
    text $((x3 - 40)) $((ly - 6)) 11.5 start "$INK" "colour: float4 group (g, h) of lane $SHOW_LANE"
    for k in 0 1 2 3; do
        g=$((k / 2)) h=$((k % 2))
        r0=$((4 * lane_m + TRM * 4 * g)) c0=$((4 * lane_n + TRN * 4 * h))
        rect $((x3 - 40)) $((ly + 4 + k * 18)) 12 12 "${colours[$k]}" none 0
        text $((x3 - 22)) $((ly + 14 + k * 18)) 11 start "$INK" "g = $g, h = $h: rows $r0-$((r0 + 3)), columns $c0-$((c0 + 3))"
    done

    # The formula and stage 10's default, at the bottom.
    local by=$((H - 70))
    line 30 $((by - 20)) $((W - 30)) $((by - 20)) "$RULE" 1
    text 30 $by 12 start "$INK" "Lane l of warp w owns rows wm + 4·(l / 4) + 32·g + i and columns wn + 4·(l mod 4) + 16·h + j,"
    text 30 $((by + 17)) 12 start "$INK" "with g, h ∈ {0, 1} and i, j ∈ 0..3 (kernels/08_warptile.cu; g picks the row group, h the column group)."
    text 30 $((by + 40)) 12 start "$GREY" "Stage 10's default (configuration 7): block tile 128 x 256 x 8, 8 warps of 64 x 64, the same 8 x 4 lanes,"
    text 30 $((by + 57)) 12 start "$GREY" "8 x 16 outputs per thread: 2 row groups 32 apart and 4 column groups 16 apart."
    svg_close
}

# ---- Figure 2: register banks ---------------------------------------------------------------
# The model is the README's ("Register banks") and ffma_banks.sh's: the bank of Rn is n mod 2; an
# FFMA is counted as a conflict when its source registers not marked .reuse include two in one
# bank. The run of FFMAs below is copied from the main loop of configuration 7
# (sgemm_tuned_kernel<128, 256, 8, 64, 64, 8, 16, 3, 1, COLS, true, true>, sm_90a, CUDA 13.0):
#   cuobjdump -sass -arch sm_90a -fun '_Z18sgemm_tuned_kernelILi128ELi256ELi8ELi64ELi64ELi8ELi16ELi3ELi1EL10ffma_order1ELb1ELb1EEviiifPKfS2_fPf' build/bin/04_sgemm
# its first eight FFMAs. Another compiler version may assign other registers; the figure says so.
SASS_RUN='R149 R68.reuse R76 R149
R160 R68.reuse R77 R160
R125 R68.reuse R78 R125
R120 R68.reuse R79 R120
R95 R68.reuse R72 R95
R48 R68.reuse R73 R48
R27 R68.reuse R74 R27
R22 R68 R75 R22'

register_banks() {
    local W=900 H=765
    svg_open $W $H "Register banks and the FFMA order (stage 10, configuration 7)"
    text 30 32 19 start "$INK" "Register banks and the FFMA order (stage 10, configuration 7)" 'font-weight="bold"'
    text 30 54 12.5 start "$GREY" "The README's model: the bank of register Rn is n mod 2, two banks. It fits the measurements; NVIDIA does not document the banks."

    # Panel A: the model.
    local ax=30 ay=92 k x
    text $ax $ay 14 start "$INK" "The model" 'font-weight="bold"'
    text $ax $((ay + 27)) 11.5 start "$INK" "bank 0"
    text $ax $((ay + 57)) 11.5 start "$INK" "bank 1"
    for k in 0 1 2 3 4; do
        x=$((ax + 52 + k * 44))
        rect $x $((ay + 10)) 40 24 "$BANK0_FILL" "$BANK0_LINE" 1
        text $((x + 20)) $((ay + 27)) 11.5 middle "$INK" "R$((2 * k))"
        rect $x $((ay + 40)) 40 24 "$BANK1_FILL" "$BANK1_LINE" 1
        text $((x + 20)) $((ay + 57)) 11.5 middle "$INK" "R$((2 * k + 1))"
    done
    text $((ax + 52 + 5 * 44 + 4)) $((ay + 27)) 12 start "$GREY" "…"
    text $((ax + 52 + 5 * 44 + 4)) $((ay + 57)) 12 start "$GREY" "…"
    local ty=$((ay + 95)) t=0 l
    local lines=("FFMA d, s1, s2, s3 computes s1·s2 + s3" "and reads three source registers." ""
        "A source marked .reuse is served by the" "operand reuse cache: it is not counted." ""
        "Two counted sources in one bank are read" "one after the other: a conflict." ""
        "Three counted sources in two banks" "always include a conflict.")
    for l in "${lines[@]}"; do
        [ -n "$l" ] && text $ax $((ty + t)) 12 start "$INK" "$l"
        if [ -n "$l" ]; then t=$((t + 16)); else t=$((t + 8)); fi
    done

    # Panel B: the run of FFMAs, registers coloured by bank.
    local bx=360 by=92 rh=25 n=0 d a b c verdict y
    local cols=(0 34 104 204 276 348) # #, d, a, b, c, counted
    text $bx $by 14 start "$INK" "Eight FFMAs of configuration 7's main loop (cuobjdump -sass)" 'font-weight="bold"'
    local hy=$((by + 24))
    text $((bx + cols[0] + 12)) $hy 11 middle "$GREY" "#"
    text $((bx + cols[1] + 32)) $hy 11 middle "$GREY" "d (written)"
    text $((bx + cols[2] + 47)) $hy 11 middle "$GREY" "s1"
    text $((bx + cols[3] + 33)) $hy 11 middle "$GREY" "s2"
    text $((bx + cols[4] + 33)) $hy 11 middle "$GREY" "s3"
    text $((bx + cols[5] + 4)) $hy 11 start "$GREY" "counted by ffma_banks.sh"
    cell() { # x y w register
        local reg=$4 num
        case $reg in
        *.reuse)
            rect "$1" "$2" "$3" $((rh - 4)) '#ededed' '#9a9a9a' 1 'stroke-dasharray="3 2"'
            text $(($1 + $3 / 2)) $(($2 + 15)) 11 middle '#8a8a8a' "$reg" ;;
        *)
            num=${reg#R}
            if [ $((num % 2)) = 0 ]; then
                rect "$1" "$2" "$3" $((rh - 4)) "$BANK0_FILL" "$BANK0_LINE" 1
            else
                rect "$1" "$2" "$3" $((rh - 4)) "$BANK1_FILL" "$BANK1_LINE" 1
            fi
            text $(($1 + $3 / 2)) $(($2 + 15)) 11.5 middle "$INK" "$reg" ;;
        esac
    }
    while read -r d a b c; do
        n=$((n + 1))
        y=$((hy + 8 + (n - 1) * rh))
        text $((bx + cols[0] + 12)) $((y + 15)) 11 middle "$GREY" $n
        rect $((bx + cols[1])) $y 64 $((rh - 4)) '#ffffff' "$RULE" 1
        text $((bx + cols[1] + 32)) $((y + 15)) 11.5 middle "$GREY" "$d"
        cell $((bx + cols[2])) $y 94 "$a"
        cell $((bx + cols[3])) $y 66 "$b"
        cell $((bx + cols[4])) $y 66 "$c"
        verdict=$(printf '%s\n%s\n%s\n' "$a" "$b" "$c" | awk '
            !/\.reuse$/ { n = substr($0, 2) % 2; if (n in seen) { hit = seen[n] ", " $0; hb = n } else seen[n] = $0 }
            END { if (hit) print "conflict (" hit " " (hb ? "odd" : "even") ")"; else print "no conflict" }')
        case $verdict in
        conflict*)
            text $((bx + cols[5] + 4)) $((y + 15)) 11.5 start '#c0392b' "$verdict" 'font-weight="bold"' ;;
        *) text $((bx + cols[5] + 4)) $((y + 15)) 11.5 start "$GREY" "$verdict" ;;
        esac
    done <<<"$SASS_RUN"
    local ny=$((hy + 8 + 8 * rh + 18))
    text $bx $ny 11.5 start "$INK" "R68 is one b[j]: it feeds the eight FFMAs of one column of the 8 x 16 tile in the same slot."
    text $bx $((ny + 16)) 11.5 start "$INK" "In the first seven it is marked .reuse, and the two counted sources, a value of A and"
    text $bx $((ny + 32)) 11.5 start "$INK" "an accumulator, sit in opposite banks. The eighth has no .reuse: three counted sources."
    # legend
    local gy=$((ny + 54))
    rect $bx $((gy - 11)) 14 14 "$BANK0_FILL" "$BANK0_LINE" 1
    text $((bx + 20)) $gy 11 start "$INK" "bank 0 (even)"
    rect $((bx + 110)) $((gy - 11)) 14 14 "$BANK1_FILL" "$BANK1_LINE" 1
    text $((bx + 130)) $gy 11 start "$INK" "bank 1 (odd)"
    rect $((bx + 215)) $((gy - 11)) 14 14 '#ededed' '#9a9a9a' 1 'stroke-dasharray="3 2"'
    text $((bx + 235)) $gy 11 start "$INK" ".reuse: not counted"
    rect $((bx + 355)) $((gy - 11)) 14 14 '#ffffff' "$RULE" 1
    text $((bx + 375)) $gy 11 start "$INK" "written, not read"

    # Panel C: the order of one k step in the source, 8 x 16 accumulators.
    local cx=64 cy=474 s=22 i j
    text 30 $((cy - 40)) 14 start "$INK" "One k step in the source: COLS order" 'font-weight="bold"'
    text $((cx + 8 * s)) $((cy - 8)) 11 middle "$GREY" "j = 0 … 15, b[j]"
    text $((cx - 12)) $((cy + 4 * s)) 11 middle "$GREY" "i = 0 … 7, a[i]" "transform=\"rotate(-90 $((cx - 12)) $((cy + 4 * s)))\""
    for ((i = 0; i < 8; i++)); do
        for ((j = 0; j < 16; j++)); do rect $((cx + j * s)) $((cy + i * s)) $s $s "$LIGHT" "$RULE" 0.6; done
    done
    rect $cx $cy $((16 * s)) $((8 * s)) none "$INK" 1.2
    for ((j = 0; j < 16; j++)); do
        x=$((cx + j * s + s / 2))
        text $x $((cy + 15)) 9 middle "$INK" $((8 * j + 1))
        text $x $((cy + 7 * s + 15)) 9 middle "$INK" $((8 * j + 8))
        line $x $((cy + s + 1)) $x $((cy + 7 * s - 2)) "$GREY" 1.2 'marker-end="url(#arrow)"'
    done
    text 30 $((cy + 8 * s + 24)) 11.5 start "$INK" "multiply_step&lt;COLS&gt;: j outer, i inner; the numbers"
    text 30 $((cy + 8 * s + 40)) 11.5 start "$INK" "are the order of the 128 FFMAs. Each b[j] feeds"
    text 30 $((cy + 8 * s + 56)) 11.5 start "$INK" "eight FFMAs in a row, as R68 does above."

    # Panel D: the conflicts of each order (README's table, 8x16 tile).
    local dx=460 dy=474 unit=6
    local bar0=$((dx + 92))
    text $dx $((dy - 40)) 14 start "$INK" "The three orders (8 x 16 tile)" 'font-weight="bold"'
    text $bar0 $((dy - 8)) 11 start "$GREY" "FFMAs counted as conflicts"
    local rows=("ROWS|i outer|24" "COLS|j outer|18" "SNAKE|rows, zigzag|22")
    local r name what pct fill
    for k in 0 1 2; do
        IFS='|' read -r name what pct <<<"${rows[$k]}"
        y=$((dy + 8 + k * 40))
        fill='#b7b7b7'
        [ "$name" = COLS ] && fill='#4a4a4a'
        text $dx $((y + 12)) 12 start "$INK" "$name" 'font-weight="bold"'
        text $dx $((y + 27)) 10.5 start "$GREY" "$what"
        rect $bar0 $y $((pct * unit)) 22 "$fill" none 0
        text $((bar0 + pct * unit + 6)) $((y + 16)) 12 start "$INK" "$pct %"
    done
    text $dx $((dy + 152)) 11.5 start "$INK" "COLS, the order configuration 7 uses, has the fewest"
    text $dx $((dy + 168)) 11.5 start "$INK" "and measured the fastest. Counts: the README's table"
    text $dx $((dy + 184)) 11.5 start "$INK" "in \"Register banks\" (ffma_banks.sh)."

    line 30 $((H - 42)) $((W - 30)) $((H - 42)) "$RULE" 1
    text 30 $((H - 22)) 11 start "$GREY" "Registers as ptxas assigned them in this build (sm_90a, CUDA 13.0); another compiler version may assign others. ffma_banks.sh counts any build."
    svg_close
}

tiling >"$out/tiling.svg"
register_banks >"$out/register_banks.svg"
echo "wrote $out/tiling.svg $out/register_banks.svg"
