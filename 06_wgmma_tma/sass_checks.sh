#!/usr/bin/env bash
# Chapter 06's SASS claims beyond the opcode lists (called by tests/run.sh with the binary and
# its cuobjdump -sass; prints PASS, FAIL or SKIP lines).
# From stage 3 on (stages 3-8), the wgmmas of a K tile must be issued back to back and waited for one tile
# late (README, "Keeping wgmmas in flight"): in each pipelined kernel every fourth HGMMA carries
# the group barrier gsb0 (one commit per K tile of 4 k-steps) and some wait is
# WARPGROUP.DEPBAR.LE gsb0, 0x1. When ptxas serializes the wgmmas (info C7515: ordinary code
# touching the accumulators while one is in flight) every HGMMA carries gsb0 and is followed by
# a DEPBAR ... 0x0, and this check fails.
set -u
bin=$1 sass=$2
if ! grep -q "arch = sm_90a" "$sass"; then
    echo "SKIP wgmmas in flight: no sm_90a code in $bin"
    exit 0
fi
for kernel in pipeline_kernel warp_specialized_kernel persistent_kernel clusters_kernel epilogue_kernel final_kernel; do
    # per function: HGMMAs, HGMMAs with gsb0, waits that leave one group in flight
    awk -v k="$kernel" '
        /Function : / { fn = $3; keep = index(fn, k) > 0 && index(fn, "ex_") == 0 }
        keep && /HGMMA/ { all[fn]++; if (/gsb0/) grouped[fn]++ }
        keep && /WARPGROUP.DEPBAR.LE gsb0, 0x1/ { late[fn]++ }
        END {
            if (length(all) == 0) { print "FAIL wgmmas in flight: no function matching " k; exit }
            for (f in all) {
                name = k
                if (match(f, /ILi[0-9]+E/)) name = name " depth " substr(f, RSTART + 3, RLENGTH - 4)
                if (all[f] == 4 * grouped[f] && late[f] > 0)
                    print "PASS wgmmas in flight: " name ": " all[f] " HGMMA, one gsb0 per 4, a wait_group<1>"
                else
                    print "FAIL wgmmas in flight: " name ": " all[f] " HGMMA, " grouped[f] + 0 " with gsb0, " late[f] + 0 " DEPBAR.LE gsb0, 0x1 (serialized? ptxas info C7515)"
            }
        }' "$sass"
done
# From stage 6 on, slots go back to the partner block with CTA-scope arrivals: a MEMBAR.ALL.GPU in
# the SASS means a cluster-scope release crept into the K loop (0.37x cuBLAS when it did).
for kernel in clusters_kernel epilogue_kernel final_kernel; do
    membars=$(awk -v k="$kernel" '/Function : / { keep = index($3, k) > 0 }
                   keep && /MEMBAR.ALL.GPU/ { n++ } END { print n + 0 }' "$sass")
    if [ "$membars" = 0 ]; then echo "PASS $kernel: no MEMBAR.ALL.GPU"
    else echo "FAIL $kernel: $membars MEMBAR.ALL.GPU (a cluster-scope release in the K loop?)"; fi
done
