#!/usr/bin/env bash
# A stage's bottleneck, measured: Nsight Compute on one launch of each stage, a few metrics a
# line, as a CSV that a README shows through --table-from (a "# profile:" CSV: its long form
# prints every column). Needs a GPU and ncu on the PATH.
#
#   bash common/profile.sh OUT.csv BINARY 'SIZE OPTIONS' ROW=KERNEL_REGEX [ROW=KERNEL_REGEX ...]
#
# For each ROW, BINARY runs `--kernel ROW --no-library --iters 1 --warmup 0 --format csv SIZE
# OPTIONS` under ncu, which profiles the first launch whose function name (no template arguments,
# no parameters) matches KERNEL_REGEX: the launch that the binary's check makes, on the same
# inputs as the timed ones (the reference and the harness's own kernels do not match).
# One line a ROW: the size label the binary prints, the row, the kernel's time under the profiler,
# the share of the time the SMs were active (a grid's idle SMs lower it), how busy the tensor pipe
# was (of its peak, over the cycles the SMs were active), the issue slots used, the warps resident
# (of the maximum), DRAM bandwidth (of peak), the L2 hit rate, registers a thread, and the two
# largest warp stall reasons, each with its stall cycles per issued instruction
# (smsp__average_warps_issue_stalled_*_per_issue_active; "selected" and "not_selected" are issue,
# not stall, and left out). Exit: 0, 2 bad usage, 3 no ncu or no GPU, 1 a row that did not profile
# (its line says why; the others still run).
set -u
usage() { echo "usage: bash common/profile.sh OUT.csv BINARY 'SIZE OPTIONS' ROW=KERNEL_REGEX..." >&2; exit 2; }
[ $# -ge 4 ] || usage
out=$1 bin=$2 size=$3
shift 3
[ -x "$bin" ] || { echo "profile.sh: $bin is not an executable (build it first)" >&2; exit 2; }
for pair in "$@"; do
    case $pair in *=?*) ;; *) echo "profile.sh: '$pair' is not ROW=KERNEL_REGEX" >&2; exit 2 ;; esac
done
# PROFILE_DRY_RUN=1: print "ROW<TAB>KERNEL_REGEX<TAB>SIZE OPTIONS" a row and stop (make test checks
# each chapter's profile_ladder.sh against its binary's rows this way, without a GPU).
if [ "${PROFILE_DRY_RUN:-0}" = 1 ]; then
    for pair in "$@"; do printf '%s\t%s\t%s\n' "${pair%%=*}" "${pair#*=}" "$size"; done
    exit 0
fi
command -v ncu >/dev/null || { echo "profile.sh: ncu (Nsight Compute) is not on the PATH" >&2; exit 3; }

STALLS="barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard
math_pipe_throttle membar mio_throttle misc no_instruction short_scoreboard sleeping tex_throttle wait"
metrics=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,launch__registers_per_thread
for s in $STALLS; do metrics+=,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio; done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0 header_done=0
: >"$out.body"
for pair in "$@"; do
    row=${pair%%=*} regex=${pair#*=}
    # shellcheck disable=SC2086 # SIZE OPTIONS are words
    if ! ncu --metrics "$metrics" --kernel-name "regex:$regex" --launch-count 1 -f -o "$work/$row" \
        "$bin" --kernel "$row" --no-library --iters 1 --warmup 0 --format csv $size \
        >"$work/$row.app" 2>&1 || [ ! -f "$work/$row.ncu-rep" ]; then
        echo "profile.sh: $row did not profile: $(grep -v '^==PROF==' "$work/$row.app" | tail -n 2 | tr '\n' ' ')" >&2
        rc=1
        continue
    fi
    if [ $header_done = 0 ]; then
        {
            grep -m1 '^# GPU:' "$work/$row.app" || sed -n 's/^GPU: /# GPU: /p' "$work/$row.app" | head -n 1
            grep -m1 -E '^#? ?driver ' "$work/$row.app" | sed 's/^#* *//; s/^/# /'
            echo "# profile: $(ncu --version | tail -n 1), one launch a row (the check's), $(basename "$bin") $size"
            echo "size,kernel,time (us),SMs active %,tensor pipe %,issue active %,warps active %,DRAM %,L2 hit %,registers,top stall,second stall"
        } >"$out.head"
        header_done=1
    fi
    label=$(awk -F, -v row="$row" '$2 == row { print $1; exit }' "$work/$row.app")
    ncu -i "$work/$row.ncu-rep" --csv --page raw --print-units base >"$work/$row.csv" 2>&1
    awk -v label="${label:-?}" -v row="$row" -v stalls="$STALLS" '
        function split_quoted(line, out,   n) { # every field of ncu'"'"'s CSV is quoted
            sub(/^"/, "", line); sub(/"[\r]*$/, "", line)
            return split(line, out, /","/)
        }
        # a metric in its base unit: ncu scales each value to a unit of its own, a row at a time
        # (usecond, msecond; cycle, Kcycle, Mcycle), and writes large numbers with commas
        function base(name,   x, u) {
            if (!(name in col)) return 0
            x = v[col[name]]; gsub(/,/, "", x); u = unit[col[name]]
            if (u ~ /^nsecond/) return x * 1e-9
            if (u ~ /^usecond/) return x * 1e-6
            if (u ~ /^msecond/) return x * 1e-3
            if (u ~ /^K/) return x * 1e3
            if (u ~ /^M/) return x * 1e6
            if (u ~ /^G/) return x * 1e9
            return x + 0
        }
        /^"ID"/ { n = split_quoted($0, head); for (i = 1; i <= n; i++) col[head[i]] = i; units = 1; next }
        units { split_quoted($0, unit); units = 0; next } # the line after the header: each column'"'"'s unit
        n && /^"[0-9]/ && !done {
            split_quoted($0, v); done = 1
            t = base("gpu__time_duration.sum") * 1e6 # microseconds
            # the active cycles of the SMs over the elapsed ones: idle SMs (a grid tail) show here,
            # not in "warps active", which counts the SMs that run
            e = base("sm__cycles_elapsed.avg"); sms = e > 0 ? 100 * base("sm__cycles_active.avg") / e : 0
            ns = split(stalls, names, /[ \n]+/)
            best1 = best2 = ""; b1 = b2 = -1
            for (i = 1; i <= ns; i++) {
                m = "smsp__average_warps_issue_stalled_" names[i] "_per_issue_active.ratio"
                if (!(m in col)) continue
                x = base(m)
                if (x > b1) { best2 = best1; b2 = b1; best1 = names[i]; b1 = x }
                else if (x > b2) { best2 = names[i]; b2 = x }
            }
            printf "%s,%s,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%d,%s %.2f,%s %.2f\n", label, row, t, sms,
                base("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
                base("smsp__issue_active.avg.pct_of_peak_sustained_active"),
                base("sm__warps_active.avg.pct_of_peak_sustained_active"),
                base("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
                base("lts__t_sector_hit_rate.pct"), base("launch__registers_per_thread"),
                best1, b1, best2, b2
        }
        END { if (!done) exit 1 }' "$work/$row.csv" >>"$out.body" ||
        { echo "profile.sh: $row: no launch of '$regex' in the report" >&2; rc=1; }
done
if [ $header_done = 1 ]; then cat "$out.head" "$out.body" >"$out"; fi
rm -f "$out.head" "$out.body"
[ $header_done = 1 ] || { echo "profile.sh: nothing profiled" >&2; exit 1; }
exit $rc
