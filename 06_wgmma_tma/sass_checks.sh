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
                else if (k == "final_kernel") { # <type, BN, CONS, cluster CM, CN>
                    args = index(f, "bfloat16") ? "bf16" : "f16"
                    for (s = f; match(s, /Li[0-9]+E/); s = substr(s, RSTART + RLENGTH))
                        args = args "," substr(s, RSTART + 2, RLENGTH - 3)
                    name = name " <" args ">"
                }
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
# Stage 8's cluster shapes (final_kernel<T, BN, CONS, CM, CN>): with 2x1 the producer loads A
# plainly and multicasts B (one UTMALDG.2D.MULTICAST), with 2x2 it multicasts both; each
# release arrives on the empty barriers of the CTAs that write into the slot, CM + CN - 1 of
# them (2 and 3; two releases in the code, after a K tile and after a tile's last).
# (chapter 05's final_kernel, linked into this binary, has the same name: ours take tensor maps)
awk '/Function : / { fn = $3; if (index(fn, "final_kernel") && index(fn, "CUtensorMap")) seen[fn] = 1 }
     (fn in seen) && /UTMALDG.2D.MULTICAST/ { mc[fn]++ }
     (fn in seen) && /SYNCS.ARRIVE.TRANS64.RED.A1T0/ { arr[fn]++ }
     END {
         if (length(seen) == 0) { print "FAIL final_kernel cluster shapes: no final_kernel"; exit }
         for (f in seen) {
             s = f; n = 0; delete v
             while (match(s, /Li[0-9]+E/)) { v[++n] = substr(s, RSTART + 2, RLENGTH - 3); s = substr(s, RSTART + RLENGTH) }
             cm = v[n - 1]; cn = v[n]; want_mc = cn == 1 ? 1 : 2; want_arr = 2 * (cm + cn - 1)
             what = "final_kernel <" (index(f, "bfloat16") ? "bf16" : "f16") "," v[1] "," v[2] ", cluster " cm "x" cn ">: " mc[f] + 0 " multicast loads, " arr[f] + 0 " remote arrivals"
             if (mc[f] == want_mc && arr[f] == want_arr) print "PASS " what
             else print "FAIL " what " (want " want_mc " and " want_arr ")"
         }
     }' "$sass"
