/* README tables from saved bench CSVs: `build/bin/NN_topic --table-from CSV [options]` prints,
 * as Markdown through the harness's table printer (table.c), a table that a chapter README shows,
 * computed from the CSV that --save wrote. No GPU is needed and nothing runs. The READMEs keep
 * each such table between markers that `make tables` rewrites and `make test` checks
 * (common/readme_tables.sh; docs/design.md, "README tables").
 *
 * Options (every one optional but --table-from; lists are comma-separated):
 *   --table-from CSV[,CSV...]  the CSVs (repeatable); where the rows shown come from several CSVs
 *                              of different names, each row names its CSV: by its GPU, from the
 *                              CSV's "# GPU: NVIDIA H100 ..." line ("H100"), or NAME for a CSV
 *                              given as NAME=CSV (two runs on one GPU: 2026-11-22=h100.csv);
 *                              CSV#RUN reads one run of a bundle: a file of several CSVs,
 *                              each after a line "# run: RUN" (an experiment's runs in one
 *                              file: measured/ab_h100.csv#final.r1)
 *   --kernel NAME[,NAME...]    the rows, in this order (repeatable); default: every row of the
 *                              CSVs but the exercises (ex_*), in table order
 *   --shape S[,S...]           the sizes, in this order (repeatable): the CSV's size label, each
 *                              dimension a size (4096, 4K, 2^12) or * for any ("64x*x*");
 *                              default: every size of the CSVs
 *   --columns C[,C...]         the long form's columns, of shape, gpu, kernel, dtype, time,
 *                              tput, pct, ratio, err, status (default: kernel, dtype, time,
 *                              tput, pct, ratio, err where the CSV has them, after gpu with
 *                              several CSVs and shape with several sizes)
 *   --pivot                    kernels down, sizes across, one value a cell
 *   --transpose                with --pivot: sizes down, kernels across
 *   --value M                  the pivot's cell or the target's measure: time, tput, pct or
 *                              ratio. time and tput carry the row's ratio in parentheses (its
 *                              "x LIB" column, else its "% CEILING" column); default tput for
 *                              --pivot, ratio (else pct) for --target
 *   --target OPVALUE           one row per kernel and CSV: the measure at every size selected
 *                              (up to 3 listed, else the lowest to the highest), compared with
 *                              the target (>=1.00, >92%, <=, <): "met", or "not met (k of n)"
 *   --best                     with --pivot or --target: the kernels selected as one line, at
 *                              each size the best of them by the measure, named in the cell
 *   --pool                     with --target: the kernels selected as one line, each of them at
 *                              each size one measurement (fp16 and bf16, causal and not)
 *   --versus FROM=TO           the ratio column becomes "x TO": a row whose name holds FROM is
 *                              divided by the row named with TO in its place, at the same size,
 *                              from its own CSV or another of the same GPU (or NAME)
 *                              (08: h100.csv,h100_sdpa.csv --versus fa2_tuned=sdpa_cudnn)
 *   --base NAME                the ratio column becomes "x NAME": each row over the same kernel
 *                              at the same size in the CSV given as NAME=CSV (A/B tables: each
 *                              variant of a stage over the stage itself, common/ab.sh); with
 *                              --pivot --value ratio the base's own rows (all 1.000) are left out
 *   --label HEAD=TEXT          a first column HEAD with TEXT in every row (repeatable)
 *
 * The long form (neither --pivot nor --target) has one line per CSV, size and kernel.
 *
 * Besides the bench CSVs of the harness (size label, kernel, [dtype], time (us), throughput,
 * ratio columns, rel err, status) it reads the CSVs of 08_flash_attn/compare_sdpa.py (B×H×N, D,
 * dtype, causal, backend, ...): a row there is named as 08 names its own, its dtype's prefix,
 * sdpa_ and the backend, _causal for the causal mask ("bf16_sdpa_cudnn_causal"), at the size
 * B×H×N×D. And the CSVs of common/profile.sh (a "# profile:" line): size, kernel, then Nsight
 * Compute's metrics, printed in the long form with every column as it is (--kernel, --shape and
 * --label only; alone, not beside bench CSVs): a stage's measured bottleneck in a README. */
#ifndef TABLE_FROM_H
#define TABLE_FROM_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Prints the table the arguments ask for to out. argv[0] is the program; every other argument
 * is one of the options above (the chapter's own options are refused). Returns 0, or
 * EXIT_BAD_USAGE with the reason in err (an unknown option, a CSV that cannot be read, a kernel
 * or a size that no CSV has, a cell longer than the table printer keeps). */
int table_from_main(int argc, char **argv, FILE *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
