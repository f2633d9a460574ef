/* The ladder chart: a chapter's benchmark table (the CSV that --save writes) drawn as an SVG.
 *
 * One panel per size, each with its own throughput axis (sizes differ by orders of magnitude);
 * in each panel one bar per stage, in table order, coloured along a ramp from the first stage to
 * the last so that the climb reads at a glance; the baselines (rows whose ratio column is "-":
 * the library, memcpy) as dashed lines across the panel. Rows without a throughput (TODO, skip,
 * FAIL) are left out. Every bar and line carries a <title> with its numbers, which a browser shows
 * on hover. SVG is text: no plotting library is needed, and the file reads in any browser and on
 * the repository's web page.
 *
 * The CSV: '#' lines first (GPU, versions, run; the first three become the chart's subtitle),
 * then a header row whose columns are the size label, "kernel", optionally "dtype", "time (us)",
 * the throughput (its header is the unit: "TFLOPS", "GB/s"), then ratio columns ("x cuBLAS",
 * "% memcpy"), "rel err", "status". Fields may be quoted as table.c writes them. */
#ifndef PLOT_H
#define PLOT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Draws the chart of csv (len bytes, need not end in a NUL) to out. title: the chart's heading
 * (the chapter name), or NULL to take it from the CSV's run line. Returns 0, or -1 with the
 * reason in err (no header row, no throughput column, nothing to draw). */
int plot_csv(const char *csv, size_t len, const char *title, FILE *out, char *err, size_t errlen);

/* The same from a file to a file. */
int plot_csv_file(const char *csv_path, const char *svg_path, const char *title, char *err,
                  size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
