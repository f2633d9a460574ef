#!/usr/bin/env bash
# Draws the lesson's figures, 01_elementwise/figures/*.svg, with bash, printf and awk alone:
#   bash 01_elementwise/figures.sh
# Each figure is drawn from what kernels/ does (the index arithmetic is spelled out beside each
# drawing below); fusion.svg takes its times from measured/h100.csv.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out="$here/figures"
csv="$here/measured/h100.csv"
mkdir -p "$out"

FONT='DejaVu Sans, Helvetica, Arial, sans-serif'

# Palette: blue = fp32 data, green = fp16/bf16 data, orange = the scalar path, grey = not this
# instruction's bytes. Each has a dark and a light shade so neighbouring lanes can be told apart.
F32_D='#2f6ea8' F32_L='#9cc3e6'
F16_D='#3c8c3c' F16_L='#a8d8a0'
SCA_D='#d9822b' SCA_L='#f5c28f'
GREY='#e4e4e4' INK='#222222' MUTED='#555555' BAD='#c0392b'

svg_open() { # width height
    printf '<?xml version="1.0" encoding="UTF-8"?>\n'
    printf '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">\n' \
        "$1" "$2" "$1" "$2" "$FONT"
    printf '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>\n' "$1" "$2"
}
svg_close() { printf '</svg>\n'; }

# text x y size anchor(start|middle|end) weight(normal|bold) colour string
text() {
    printf '<text x="%s" y="%s" font-size="%s" text-anchor="%s" font-weight="%s" fill="%s">%s</text>\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" "$7"
}
# rect x y w h fill [stroke] [stroke-width]
rect() {
    printf '<rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="%s" stroke-width="%s"/>\n' \
        "$1" "$2" "$3" "$4" "$5" "${6:-none}" "${7:-0}"
}
# line x1 y1 x2 y2 colour width [dasharray] [opacity]
line() {
    printf '<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s" stroke-dasharray="%s" stroke-opacity="%s"/>\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" "${7:-none}" "${8:-1}"
}
title() { # width title subtitle
    text 24 30 18 start bold "$INK" "$2"
    text 24 50 12 start normal "$MUTED" "$3"
}

# ---------------------------------------------------------------------------------------------
# 1. warp_access.svg: the bytes one warp's load instruction reads, per stage.
#    naive   (01_naive.cu):  i = blockIdx.x * blockDim.x + threadIdx.x; a[i] is 4 bytes, so lane
#            l of a warp reads bytes 4l..4l+3 of the warp's 128: one 128-byte line (LDG.E).
#    float4  (03_float4.cu): a4[i], i = tid: lane l reads bytes 16l..16l+15, 512 bytes in all,
#            four 128-byte lines, 4 floats per lane (LDG.E.128).
#    pack8   (04_half8.cu):  a8[i] is a uint4 of 8 halves: the same 512 bytes, 8 elements per
#            lane, added as 4 half2 / bfloat162 pairs (HADD2).
#    cudaMalloc'd arrays are 256-byte aligned and a warp starts at a multiple of 32 elements, so
#    the warp's first byte is on a 128-byte line boundary in all three.
# ---------------------------------------------------------------------------------------------
warp_access() {
    local W=880 H=520 x0=56 s=3 # s: pixels per 2 bytes (1.5 px per byte; 512 bytes = 768 px)
    local span=768 line_px=192  # 512 bytes, 128 bytes
    local l x k y

    svg_open $W $H
    title $W "One warp, one load instruction: the bytes its 32 lanes read" \
        "Lane l of a warp reads the l-th piece of a contiguous run in every stage, shown for a (b is read and c written alike)."

    # Byte ruler with the 128-byte line boundaries.
    y=84
    line $x0 $y $((x0 + span)) $y "$INK" 1
    for k in 0 1 2 3 4; do
        x=$((x0 + k * line_px))
        line $x $y $x $((y + 6)) "$INK" 1
        text $x $((y - 6)) 11 middle normal "$INK" "$((k * 128)) B"
    done
    for k in 0 1 2 3; do
        text $((x0 + k * line_px + line_px / 2)) $((y - 6)) 11 middle normal "$MUTED" "128-byte line $k"
    done

    # Row 1: naive, 4 bytes per lane.
    y=124
    text $x0 $((y - 8)) 13 start bold "$INK" "naive (01_naive.cu): LDG.E, 4 bytes per lane, one float each"
    for ((l = 0; l < 32; l++)); do
        rect $((x0 + l * 6)) $y 6 30 "$([ $((l % 2)) = 0 ] && echo $F32_D || echo $F32_L)"
    done
    for k in 1 2 3; do
        rect $((x0 + k * line_px)) $y $line_px 30 "$GREY"
        text $((x0 + k * line_px + line_px / 2)) $((y + 20)) 12 middle normal "$MUTED" "warp w+$k: its own LDG.E"
    done
    text $x0 $((y + 44)) 10 start normal "$MUTED" "lane 0"
    text $((x0 + line_px)) $((y + 44)) 10 end normal "$MUTED" "lane 31"
    text $x0 $((y + 62)) 12 start normal "$INK" "32 lanes × 4 B = 128 B: one line per instruction, 32 elements per warp instruction"

    # Rows 2 and 3: 16 bytes per lane.
    lanes16() { # y dark light elements-per-lane
        local y=$1 d=$2 lt=$3 per=$4 l x j
        for ((l = 0; l < 32; l++)); do
            x=$((x0 + l * 24))
            rect $x $y 24 30 "$([ $((l % 2)) = 0 ] && echo "$d" || echo "$lt")"
            if [ "$per" = 4 ]; then
                for j in 6 12 18; do line $((x + j)) $y $((x + j)) $((y + 30)) '#ffffff' 1 none 0.9; done
            else
                for j in 3 9 15 21; do line $((x + j)) $((y + 8)) $((x + j)) $((y + 22)) '#ffffff' 0.8 none 0.8; done
                for j in 6 12 18; do line $((x + j)) $y $((x + j)) $((y + 30)) '#ffffff' 1.5 none 1; done
            fi
            text $((x + 12)) $((y + 43)) 9 middle normal "$MUTED" "$l"
        done
    }

    y=234
    text $x0 $((y - 8)) 13 start bold "$INK" "float4 (03_float4.cu): LDG.E.128, 16 bytes per lane, 4 floats each"
    lanes16 $y "$F32_D" "$F32_L" 4
    text $x0 $((y + 62)) 12 start normal "$INK" "32 lanes × 16 B = 512 B: four lines per instruction, 128 elements: a quarter of naive's instructions for the same bytes"

    y=344
    text $x0 $((y - 8)) 13 start bold "$INK" "f16_pack8, bf16_pack8 (04_half8.cu): LDG.E.128, 16 bytes per lane, 8 halves each"
    lanes16 $y "$F16_D" "$F16_L" 8
    text $x0 $((y + 62)) 12 start normal "$INK" "32 lanes × 16 B = 512 B: four lines per instruction, 256 elements; each lane adds 4 pairs (4 HADD2)"

    # Line boundaries through every strip (not through the labels).
    for k in 1 2 3; do
        x=$((x0 + k * line_px))
        for y in 124 234 344; do line $x $((y - 4)) $x $((y + 34)) "$INK" 1.2 "5,3" 0.8; done
    done

    # Legend.
    y=440
    rect $x0 $y 14 14 "$F32_D"; rect $((x0 + 14)) $y 14 14 "$F32_L"
    text $((x0 + 36)) $((y + 11)) 11 start normal "$INK" "fp32 lanes (shades alternate lane by lane); thin lines: the 4-byte floats"
    rect $((x0 + 480)) $y 14 14 "$GREY"
    text $((x0 + 502)) $((y + 11)) 11 start normal "$INK" "bytes of other warps' instructions"
    y=462
    rect $x0 $y 14 14 "$F16_D"; rect $((x0 + 14)) $y 14 14 "$F16_L"
    text $((x0 + 36)) $((y + 11)) 11 start normal "$INK" "fp16/bf16 lanes; bold lines: the 4-byte pairs, thin: the 2-byte halves"
    line $((x0 + 487)) $((y - 1)) $((x0 + 487)) $((y + 15)) "$INK" 1.2 "5,3" 0.8
    text $((x0 + 502)) $((y + 11)) 11 start normal "$INK" "128-byte line boundary"
    text $x0 $((y + 42)) 11 start normal "$MUTED" \
        "The 16-byte rows need a, b and c 16-byte aligned; if one is not, the launcher runs every element on the scalar loop (vector_split.svg)."
    svg_close
}

# ---------------------------------------------------------------------------------------------
# 2. vector_split.svg: which elements go down which path, n = 38 as the example.
#    float4:  nvec = aligned16(a) && aligned16(b) && aligned16(c) ? n / 4 : 0; the vector loop
#             runs i = tid, tid + stride, ... < nvec; then the scalar loop i = 4 * nvec + tid ... < n.
#    pack8:   the same with npack = n / 8 and 8 * npack.
#    One box per element; tN is the global thread index (tid) that handles it, the grid being
#    wider than the work here (each thread makes at most one trip of each loop).
# ---------------------------------------------------------------------------------------------
vector_split() {
    local W=880 H=540 x0=60 cw=20 n=38
    local i y x g

    svg_open $W $H
    title $W "Which path each element takes: vector body, scalar tail, scalar fallback" \
        "n = 38 as the example: one box per element, and under it the thread (tid) that adds it in kernels/03_float4.cu and 04_half8.cu."

    # Element index ruler.
    y=82
    for ((i = 0; i <= n; i += 4)); do
        text $((x0 + i * cw)) $y 10 middle normal "$MUTED" "$i"
        line $((x0 + i * cw)) $((y + 3)) $((x0 + i * cw)) $((y + 8)) "$MUTED" 1
    done
    text $((x0 - 8)) $y 10 end normal "$MUTED" "i ="

    row() { # y per(4|8|0) dark light tail_dark tail_light
        local y=$1 per=$2 d=$3 lt=$4 td=$5 tl=$6 i g nv x fill lab
        if [ "$per" = 0 ]; then nv=0; else nv=$((n / per)); fi
        for ((i = 0; i < n; i++)); do
            x=$((x0 + i * cw))
            if [ "$per" != 0 ] && [ $i -lt $((nv * per)) ]; then
                g=$((i / per))
                fill=$([ $((g % 2)) = 0 ] && echo "$d" || echo "$lt")
                lab=""
            else
                fill=$([ $((i % 2)) = 0 ] && echo "$td" || echo "$tl")
                lab="t$((i - nv * per))"
            fi
            rect $x $y $cw 28 "$fill" '#ffffff' 1
            [ -n "$lab" ] && text $((x + cw / 2)) $((y + 42)) 9 middle normal "$INK" "$lab"
        done
        if [ "$per" != 0 ]; then
            for ((g = 0; g < nv; g++)); do
                x=$((x0 + g * per * cw))
                rect $x $y $((per * cw)) 28 none "$INK" 1.5
                text $((x + per * cw / 2)) $((y + 42)) 10 middle bold "$INK" "t$g"
            done
        fi
    }

    y=124
    text $x0 $((y - 10)) 13 start bold "$INK" "float4, a, b, c 16-byte aligned: nvec = n / 4 = 9 float4s (LDG.E.128), then n % 4 = 2 floats (LDG.E)"
    row $y 4 "$F32_D" "$F32_L" "$SCA_D" "$SCA_L"

    y=214
    text $x0 $((y - 10)) 13 start bold "$INK" "f16_pack8 / bf16_pack8, aligned: npack = n / 8 = 4 packs of 8 (LDG.E.128), then n % 8 = 6 halves"
    row $y 8 "$F16_D" "$F16_L" "$SCA_D" "$SCA_L"

    y=304
    text $x0 $((y - 10)) 13 start bold "$INK" "any of a, b, c not 16-byte aligned: nvec = 0 (npack = 0), all 38 elements on the scalar loop"
    row $y 0 "$F32_D" "$F32_L" "$SCA_D" "$SCA_L"

    # Why the fallback is needed: a float4 at a + 1 straddles a 16-byte boundary.
    y=402
    text $x0 $((y - 10)) 13 start bold "$INK" "Why: a float4 must start on a 16-byte boundary; at a + 1 (byte 4) it would not"
    for ((i = 0; i < 12; i++)); do
        rect $((x0 + i * 40)) $y 40 24 "$([ $((i / 4 % 2)) = 0 ] && echo '#f4f4f4' || echo '#dcdcdc')" '#ffffff' 1
        text $((x0 + i * 40 + 20)) $((y + 16)) 10 middle normal "$MUTED" "a[$i]"
    done
    for i in 0 4 8 12; do
        line $((x0 + i * 40)) $((y - 4)) $((x0 + i * 40)) $((y + 30)) "$INK" 1.5
        text $((x0 + i * 40)) $((y + 44)) 10 middle normal "$INK" "byte $((i * 4))"
    done
    rect $((x0 + 40)) $((y - 3)) 160 30 none "$BAD" 2.5
    text $((x0 + 500)) $((y + 8)) 11 start normal "$BAD" "16 bytes from byte 4 to 19 cross the"
    text $((x0 + 500)) $((y + 22)) 11 start normal "$BAD" "boundary at 16: a 128-bit load there stops"
    text $((x0 + 500)) $((y + 36)) 11 start normal "$BAD" "the kernel (misaligned address error)"

    # Legend.
    y=490
    rect $x0 $y 14 14 "$F32_D"; rect $((x0 + 14)) $y 14 14 "$F32_L"
    text $((x0 + 36)) $((y + 11)) 11 start normal "$INK" "fp32 float4 (4 elements)"
    rect $((x0 + 220)) $y 14 14 "$F16_D"; rect $((x0 + 234)) $y 14 14 "$F16_L"
    text $((x0 + 256)) $((y + 11)) 11 start normal "$INK" "fp16/bf16 pack (8 elements)"
    rect $((x0 + 460)) $y 14 14 "$SCA_D"; rect $((x0 + 474)) $y 14 14 "$SCA_L"
    text $((x0 + 496)) $((y + 11)) 11 start normal "$INK" "one element: scalar loop (4 B fp32, 2 B fp16)"
    text $x0 $((y + 36)) 11 start normal "$MUTED" \
        "Both loops are grid-stride; at n = 38 one block covers everything, so the tail's threads are threads 0, 1, ... again."
    svg_close
}

# ---------------------------------------------------------------------------------------------
# 3. fusion.svg: array passes of relu(a + b) unfused (add kernel, then relu in place) and fused,
#    with the times and GB/s of the largest n in measured/h100.csv.
# ---------------------------------------------------------------------------------------------
fusion() {
    local W=880 H=300 x0=150 u=110 # u: pixels per array pass
    local nmax unf fus y x k gib lg ratio

    nmax=$(awk -F, '!/^#/ && $1 ~ /^[0-9]+$/ && $1 > m { m = $1 } END { print m }' "$csv")
    unf=$(awk -F, -v n="$nmax" '$1 == n && $2 == "relu_unfused" { print $4 " µs, " $5 " GB/s" }' "$csv")
    fus=$(awk -F, -v n="$nmax" '$1 == n && $2 == "relu_fused" { print $4 " µs, " $5 " GB/s" }' "$csv")
    gib=$(awk -v n="$nmax" 'BEGIN { printf "%g", n * 4 / 1073741824 }')
    lg=$(awk -v n="$nmax" 'BEGIN { k = 0; while (2 ^ k < n) k++; print (2 ^ k == n) ? "2^" k : n }')
    ratio=$(awk -F, -v n="$nmax" '$1 == n && $2 == "relu_unfused" { u = $4 } $1 == n && $2 == "relu_fused" { f = $4 }
        END { printf "%.2f", f / u }' "$csv")
    [ -n "$unf" ] && [ -n "$fus" ] || { echo "figures.sh: relu rows missing from $csv" >&2; exit 1; }

    svg_open $W $H
    title $W "Fusion: relu(a + b) moves 5 array passes as two kernels, 3 as one" \
        "Each box is one pass over an fp32 array of n elements ($gib GiB at n = $lg); times: measured/h100.csv, H100, at that n."

    pass() { # x y label fill
        rect "$1" "$2" $u 34 "$4" '#ffffff' 2
        text $(($1 + u / 2)) $(($2 + 22)) 12 middle bold '#ffffff' "$3"
    }
    y=100
    text $((x0 - 12)) $((y + 14)) 13 end bold "$INK" "relu_unfused"
    text $((x0 - 12)) $((y + 30)) 11 end normal "$MUTED" "2 kernels"
    x=$x0
    for k in "read a" "read b" "write c"; do pass $x $y "$k" "$F32_D"; x=$((x + u)); done
    for k in "read c" "write c"; do pass $x $y "$k" "$SCA_D"; x=$((x + u)); done
    text $((x + 12)) $((y + 22)) 12 start normal "$INK" "$unf"
    text $((x0 + 3 * u / 2)) $((y + 52)) 11 middle normal "$MUTED" "add_f32_unroll (stage 5)"
    text $((x0 + 3 * u + u)) $((y + 52)) 11 middle normal "$MUTED" "relu_inplace_kernel: c = max(c, 0)"

    y=180
    text $((x0 - 12)) $((y + 14)) 13 end bold "$INK" "relu_fused"
    text $((x0 - 12)) $((y + 30)) 11 end normal "$MUTED" "1 kernel"
    x=$x0
    for k in "read a" "read b" "write c"; do pass $x $y "$k" "$F32_D"; x=$((x + u)); done
    text $((x + 12)) $((y + 22)) 12 start normal "$INK" "$fus: $ratio of the unfused time"
    text $((x0 + 3 * u / 2)) $((y + 52)) 11 middle normal "$MUTED" "max(a + b, 0) in registers, one store"

    # Legend.
    y=262
    rect $x0 $y 14 14 "$F32_D"
    text $((x0 + 22)) $((y + 11)) 11 start normal "$INK" "passes both versions make"
    rect $((x0 + 230)) $y 14 14 "$SCA_D"
    text $((x0 + 252)) $((y + 11)) 11 start normal "$INK" "the intermediate c going back through DRAM: only the unfused version"
    svg_close
}

warp_access > "$out/warp_access.svg"
vector_split > "$out/vector_split.svg"
fusion > "$out/fusion.svg"
echo "wrote $out/warp_access.svg $out/vector_split.svg $out/fusion.svg"
