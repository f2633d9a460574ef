# The SVG helpers of the lessons' figures: NN_topic/figures.sh puts this file in front of each of
# its awk programs (awk "$(cat ../common/svg.awk)"'BEGIN { ... }'), so that every figure draws
# with one set of shapes. POSIX awk, no extensions.

function bitxor(a, b,   r, bit) {       # POSIX awk has no bit operators
    r = 0; bit = 1
    while (a > 0 || b > 0) {
        if (a % 2 != b % 2) r += bit
        a = int(a / 2); b = int(b / 2); bit *= 2
    }
    return r
}
# arrows: also define the arrow head that arrow() and dashed(..., 1) draw
function svg_open(w, h, title, arrows) {
    printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"", w, h, w, h
    printf " font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
    printf "<title>%s</title>\n", title
    if (arrows)
        printf "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#444444\"/></marker></defs>\n"
    printf "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h
}
function svg_close() { printf "</svg>\n" }
function rect(x, y, w, h, fill, stroke, sw) {
    printf "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%g\"/>\n",
        x, y, w, h, fill, stroke, sw
}
function rrect(x, y, w, h, fill, stroke, sw) {  # rounded corners
    printf "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" rx=\"5\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%g\"/>\n",
        x, y, w, h, fill, stroke, sw
}
function line(x1, y1, x2, y2, stroke, sw) {
    printf "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"%g\"/>\n",
        x1, y1, x2, y2, stroke, sw
}
function arrow(x1, y1, x2, y2, stroke, sw) {
    printf "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"%g\" marker-end=\"url(#arrow)\"/>\n",
        x1, y1, x2, y2, stroke, sw
}
function dashed(x1, y1, x2, y2, stroke, sw, head) {  # head: with an arrow head
    printf "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"%g\" stroke-dasharray=\"4 3\"%s/>\n",
        x1, y1, x2, y2, stroke, sw, head ? " marker-end=\"url(#arrow)\"" : ""
}
# anchor: start, middle or end; weight: normal or bold
function text(x, y, s, size, anchor, weight, fill) {
    if (fill == "") fill = "#222222"
    printf "<text x=\"%g\" y=\"%g\" font-size=\"%g\" text-anchor=\"%s\" font-weight=\"%s\" fill=\"%s\">%s</text>\n",
        x, y, size, anchor, weight, fill, s
}
function max(a, b) { return a > b ? a : b }
function min(a, b) { return a < b ? a : b }
function kib(b) { return (b % 1024 ? sprintf("%.1f", b / 1024) : b / 1024) " KiB" }
