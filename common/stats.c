/* Timing statistics and error metrics. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int cmp_float(const void *x, const void *y) {
    float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}

time_stats stats_compute(float *ms, int count) {
    time_stats s;
    memset(&s, 0, sizeof s);
    if (count <= 0) return s;
    qsort(ms, (size_t)count, sizeof *ms, cmp_float);
    double sum = 0;
    for (int i = 0; i < count; i++) sum += ms[i];
    s.count = count;
    s.min_ms = ms[0];
    s.max_ms = ms[count - 1];
    s.mean_ms = sum / count;
    s.median_ms = (count % 2) ? ms[count / 2] : 0.5 * ((double)ms[count / 2 - 1] + ms[count / 2]);
    return s;
}

void metrics_init(error_metrics *m) {
    memset(m, 0, sizeof *m);
    m->first_bad = -1;
    m->worst_at = -1;
}

void metrics_finish(error_metrics *m) {
    double diff = sqrt(m->sum_sq_diff);
    double ref = sqrt(m->sum_sq_ref);
    m->rel_l2 = ref > 0 ? diff / ref : diff;
    if (m->nonfinite) m->rel_l2 = NAN;
}

bool metrics_pass(const error_metrics *m, double max_rel_l2) {
    return m->count > 0 && m->nonfinite == 0 && m->bad == 0 && m->rel_l2 <= max_rel_l2;
}

void metrics_describe(const error_metrics *m, char *buf, size_t len) {
    if (m->count == 0) {
        snprintf(buf, len, "nothing compared");
    } else if (m->first_bad >= 0) {
        snprintf(buf, len, "%ld wrong (%ld NaN/Inf), first at index %ld: got %.6g, want %.6g",
                 m->bad, m->nonfinite, m->first_bad, m->first_bad_out, m->first_bad_ref);
    } else {
        snprintf(buf, len, "rel L2 error %.3g, max abs %.3g", m->rel_l2, m->max_abs);
    }
}
