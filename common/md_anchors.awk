# The headings of a Markdown file and the anchors GitHub gives them, one a line:
#   LINE<TAB>LEVEL<TAB>HEADING<TAB>ANCHOR
# (tests/docs_check.sh checks #fragments with it; common/progress.sh links a stage's section.)
# An anchor is the heading lowercased, links replaced by their text, every character but
# letters, digits, spaces, '-' and '_' dropped, spaces made '-'; a repeated heading gets -1,
# -2, ... mawk reads bytes, so every non-ASCII character is dropped, which is right for the
# punctuation of these pages (an em dash, ×, ≥); no heading here has a non-ASCII letter, which
# GitHub would keep. Headings inside fenced code are not headings.
/^[ \t]*```/ { fence = !fence; next }
fence { next }
/^#+[ \t]/ {
    h = $0
    level = index(h, " ") - 1
    sub(/^#+[ \t]+/, "", h); sub(/[ \t]+#*[ \t]*$/, "", h)
    text = h
    gsub(/`/, "", h)
    while (match(h, /\[[^]]*\]\([^)]*\)/)) {
        t = substr(h, RSTART, RLENGTH); sub(/\]\(.*/, "", t); sub(/^\[/, "", t)
        h = substr(h, 1, RSTART - 1) t substr(h, RSTART + RLENGTH)
    }
    h = tolower(h)
    out = ""
    n = split(h, ch, "")
    for (i = 1; i <= n; i++) {
        c = ch[i]
        if (c ~ /[a-z0-9_-]/) out = out c
        else if (c == " ") out = out "-"
    }
    if (out in seen) { seen[out]++; out = out "-" seen[out] } else seen[out] = 0
    print NR "\t" level "\t" text "\t" out
}
