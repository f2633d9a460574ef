/* What runs where (harness.h): a row's architecture against the GPU's compute capability. Host
 * code with no CUDA call, so that the unit tests can try any GPU. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Every kernel of the course needs sm_80 (cp.async, mma.sync, bf16, the harness's own fills are
 * built for sm_80 and later). ARCH_SM90A kernels use wgmma, setmaxnreg and TMA with wgmma, which
 * exist on compute capability 9.0 only: not on Blackwell (10.x, 12.x), whose tensor cores have
 * other instructions. The rest run on any newer GPU, from the PTX the build embeds. */
const char *arch_skip_reason(kernel_arch arch, int cc) {
    if (cc < 80) return "skip: needs sm_80";
    if (arch == ARCH_SM80 && cc < 80) return "skip: needs sm_80";
    if (arch == ARCH_SM90A && cc != 90) return "skip: needs sm_90a";
    return NULL;
}

int arch_cc_override(const char *value) {
    if (!value || !*value) return 0;
    char *end;
    long cc = strtol(value, &end, 10);
    if (*end != '\0' || cc < 10 || cc > 999) return -1;
    return (int)cc;
}
