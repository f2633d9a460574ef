/* build/bin/from_csv: the README tables and charts from saved bench CSVs, with no chapter built
 * and no GPU (make tables, make plots, and make test's checks of both use it).
 *
 *   from_csv --table-from CSV[,CSV...] [options]   a README table (common/table_from.h)
 *   from_csv --plot-from CSV --plot FILE.svg        a ladder chart (common/plot.h)
 *
 * Every chapter binary answers the same two options with the same output (common/runner.c);
 * this program is them without the chapters' kernels, so that drawing a chart or printing a
 * table costs a few C files to compile instead of every chapter. Exit 0, or 2 with the reason. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "plot.h"
#include "table_from.h"

static int usage(const char *prog) {
    fprintf(stderr,
            "usage: %s --table-from CSV[,CSV...] [options]   (options: common/table_from.h)\n"
            "       %s --plot-from CSV --plot FILE.svg\n",
            prog, prog);
    return EXIT_BAD_USAGE;
}

int main(int argc, char **argv) {
    const char *prog = "from_csv";
    char err[2048] = "";
    for (int i = 1; i < argc; i++) /* as a chapter binary reads it: anywhere on the line */
        if (!strncmp(argv[i], "--table-from", 12) && (!argv[i][12] || argv[i][12] == '=')) {
            const int rc = table_from_main(argc, argv, stdout, err, sizeof err);
            if (rc) fprintf(stderr, "%s: %s\n", prog, err);
            return rc;
        }
    const char *csv = NULL, *svg = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--plot-from")) csv = argv[i + 1];
        else if (!strcmp(argv[i], "--plot")) svg = argv[i + 1];
        else return usage(prog);
    }
    if (argc != 5 || !csv || !svg) return usage(prog);
    /* the title from the CSV's run line: "06_wgmma_tma: seed ..." or "07_fp8_gemm (gemm): ..." */
    if (plot_csv_file(csv, svg, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, csv, err);
        return EXIT_BAD_USAGE;
    }
    return EXIT_ALL_OK;
}
