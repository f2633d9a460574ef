#!/usr/bin/env bash
# Counts the register-bank conflicts a kernel's main loop may pay, from its SASS (README,
# "Register banks"). For the first loop of the kernel (the code between a backward branch and
# its target), it prints the number of instructions, of FFMAs, and of FFMAs whose source
# registers not marked .reuse include two in the same bank, taking the bank of Rn as n mod 2.
# That model is ours, not NVIDIA's documentation; it tracks the measured speed of the tuned
# stage's configurations (NOTES.md, "The FFMA order").
# usage: 04_sgemm/ffma_banks.sh BINARY PATTERN [ARCH [SASS]]
#   e.g. 04_sgemm/ffma_banks.sh build/bin/04_sgemm 'tuned_kernelILi128ELi256ELi8E'
# PATTERN is a grep -E regex on the mangled name (cuobjdump -sass lists them); the first
# matching kernel for ARCH (default sm_90a) is counted. SASS: the binary's `cuobjdump -sass`
# already written to a file (make test's), read instead of disassembling the binary again.
set -eu
bin=$1 pattern=$2 arch=${3:-sm_90a} sass=${4:-}
if [ -z "$sass" ] && ! command -v cuobjdump >/dev/null; then
    echo "cuobjdump not found (pip install nvidia-cuda-cuobjdump)" >&2
    exit 2
fi
# The listing of ARCH's functions: from the file, or from cuobjdump.
listing() {
    if [ -n "$sass" ]; then
        awk -v a="$arch" '/^[ \t]*arch = / { on = ($3 == a) } on' "$sass"
    else cuobjdump -sass -arch "$arch" "$bin"; fi
}
names=$(listing | awk '/Function :/ { print $3 }')
sym=$(echo "$names" | grep -E -m1 -- "$pattern") ||
    { echo "no kernel matching '$pattern' for $arch in $bin" >&2; exit 2; }
echo "$sym"
listing 2>/dev/null | awk -v f="$sym" '/Function :/ { on = ($3 == f) } on' | awk '
    function hex(h,    v, i) {                          # strtonum is gawk-only
        v = 0
        for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
        return v
    }
    match($0, /\/\*[0-9a-f]+\*\/ +[^;]*;/) {
        line = substr($0, RSTART, RLENGTH)
        addr = hex(substr(line, 3, index(line, "*/") - 3))
        text = substr(line, index(line, "*/") + 2); sub(/^ +/, "", text); sub(/ *;$/, "", text)
        n++; at[n] = addr; ins[n] = text
    }
    END {
        for (i = 1; i <= n; i++)
            if (match(ins[i], /BRA ([A-Z0-9!]+, )?0x[0-9a-f]+/)) {
                t = substr(ins[i], RSTART, RLENGTH); sub(/.*0x/, "", t); target = hex(t)
                if (target < at[i]) { lo = target; hi = at[i]; break }
            }
        if (!hi) { print "no loop found"; exit 1 }
        for (i = 1; i <= n; i++) {
            if (at[i] < lo || at[i] > hi) continue
            total++
            if (ins[i] !~ /^FFMA /) continue
            ffma++
            split(substr(ins[i], 6), op, ",")
            delete bank
            clash = 0
            for (s = 2; s <= 4; s++) {
                o = op[s]; gsub(/ /, "", o); sub(/^-/, "", o)
                if (o !~ /^R[0-9]+$/) continue      # .reuse, RZ, constants, immediates
                b = substr(o, 2) % 2
                if (b in bank) clash = 1
                bank[b] = 1
            }
            conflicts += clash
        }
        printf "main loop: %d instructions, %d FFMA (%.0f%%), ", total, ffma, 100 * ffma / total
        share = ffma ? 100 * conflicts / ffma : 0
        printf "%d FFMA with a bank conflict (%.0f%%)\n", conflicts, share
    }'
