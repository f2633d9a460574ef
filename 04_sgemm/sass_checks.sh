#!/usr/bin/env bash
# Chapter 04's SASS claims beyond the opcode lists (called by tests/run.sh with the binary and
# its cuobjdump -sass; prints PASS, FAIL or SKIP lines).
# The register-bank lesson (README, "Register banks"): in the same tiles, the FFMA order the tuned
# stage uses must leave fewer bank conflicts in its main loop than the textbook order
# (configuration 7, COLS, against 20, ROWS; on sm_90a, where it was measured).
set -u
bin=$1 sass=$2
here=$(dirname "$0")
tiles='ILi128ELi256ELi8ELi64ELi64ELi8ELi16ELi3ELi1EL10ffma_order'
if ! grep -q "arch = sm_90a" "$sass"; then
    echo "SKIP FFMA order and register banks: no sm_90a code in $bin"
    exit 0
fi
conflicts() { # order number -> conflicting FFMAs in the main loop of configuration 7's tiles
    bash "$here/ffma_banks.sh" "$bin" "${tiles}$1ELb1ELb1E" sm_90a "$sass" 2>&1 |
        sed -n 's/.*, \([0-9]*\) FFMA with a bank conflict.*/\1/p'
}
cols=$(conflicts 1)
rows=$(conflicts 0)
if [ -n "$cols" ] && [ -n "$rows" ] && [ "$cols" -lt "$rows" ]; then
    echo "PASS COLS order has fewer bank conflicts than ROWS ($cols < $rows)"
else
    echo "FAIL COLS order: ${cols:-?} bank conflicts, ROWS: ${rows:-?}"
fi
