/* Opening the GPU and the header every table starts with. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <string.h>

#include "gpu.h"

static void read_driver_version(char *buf, size_t len, int api_version) {
    /* The kernel module's version (e.g. 580.159.04) says more than the API level. Its line reads
     * "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  580.159.04  Release Build ...":
     * take the first word made of digits and dots. */
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        char line[512];
        bool found = false;
        if (fgets(line, sizeof line, f)) {
            char *save = NULL;
            for (char *w = strtok_r(line, " \t\n", &save); w && !found;
                 w = strtok_r(NULL, " \t\n", &save)) {
                size_t n = strspn(w, "0123456789.");
                if (n == strlen(w) && strchr(w, '.') && isdigit((unsigned char)w[0]) && n < len) {
                    snprintf(buf, len, "%s", w);
                    found = true;
                }
            }
        }
        fclose(f);
        if (found) return;
    }
    snprintf(buf, len, "API %d.%d", api_version / 1000, (api_version % 1000) / 10);
}

int gpu_open(gpu_report *g, char *err, size_t errlen) {
    memset(g, 0, sizeof *g);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        /* The runtime says "CUDA driver version is insufficient for CUDA runtime version" also
         * when there is no driver at all, which sends a newcomer after a driver upgrade. The
         * kernel module's file tells the two apart. */
        FILE *f = fopen("/proc/driver/nvidia/version", "r");
        bool driver_loaded = f != NULL;
        if (f) fclose(f);
        if (!driver_loaded && (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice ||
                               count == 0))
            snprintf(err, errlen, "no usable CUDA GPU: no NVIDIA driver or GPU was found on this "
                     "machine (/proc/driver/nvidia is absent); the kernels need a CUDA GPU");
        else if (e == cudaErrorInsufficientDriver) {
            int rt = 0;
            cudaRuntimeGetVersion(&rt);
            snprintf(err, errlen, "no usable CUDA GPU: the NVIDIA driver is older than this "
                     "program's CUDA runtime %d.%d needs: update the driver, or build with an "
                     "older CUDA Toolkit", rt / 1000, (rt % 1000) / 10);
        } else
            snprintf(err, errlen, "no usable CUDA GPU: %s",
                     e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports no device");
        return EXIT_NO_GPU;
    }
    int dev = 0;
    struct cudaDeviceProp p;
    if ((e = cudaGetDeviceProperties(&p, dev)) != cudaSuccess || (e = cudaSetDevice(dev)) != cudaSuccess) {
        snprintf(err, errlen, "cannot open GPU 0: %s", cudaGetErrorString(e));
        return EXIT_NO_GPU;
    }
    g->device = dev;
    g->cc = p.major * 10 + p.minor;
    snprintf(g->name, sizeof g->name, "%s", p.name);
    if (gpu_image_check(err, errlen) != 0) return EXIT_NO_GPU;
    const int fake = arch_cc_override(getenv("HARNESS_CC"));
    if (fake < 0) {
        snprintf(err, errlen, "HARNESS_CC=%s: not a compute capability such as 86 or 120",
                 getenv("HARNESS_CC"));
        return EXIT_BAD_USAGE;
    }
    g->rows_cc = fake ? fake : g->cc;
    if (fake)
        fprintf(stderr, "HARNESS_CC=%d: rows are kept or skipped as on an sm_%d GPU; those kept "
                        "run on this %s (sm_%d)\n", fake, fake, g->name, g->cc);
    g->sms = p.multiProcessorCount;
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
    g->sm_clock_mhz = khz / 1000;
    cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev);
    g->mem_clock_mhz = khz / 1000;
    cudaDeviceGetAttribute(&g->bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
    g->l2_bytes = (size_t)p.l2CacheSize;
    g->smem_optin_bytes = (int)p.sharedMemPerBlockOptin;
    g->global_bytes = p.totalGlobalMem;
    size_t free_b = 0, total_b = 0;
    if ((e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess) {
        snprintf(err, errlen, "cannot query GPU memory: %s", cudaGetErrorString(e));
        return EXIT_NO_GPU;
    }
    g->free_bytes = free_b;
    cudaRuntimeGetVersion(&g->runtime_version);
    cudaDriverGetVersion(&g->driver_api_version);
    int maj = 0, min = 0, pat = 0;
    cublasGetProperty(MAJOR_VERSION, &maj);
    cublasGetProperty(MINOR_VERSION, &min);
    cublasGetProperty(PATCH_LEVEL, &pat);
    g->cublas_version = maj * 10000 + min * 100 + pat;
    read_driver_version(g->driver, sizeof g->driver, g->driver_api_version);
    return 0;
}

void gpu_print_header(const gpu_report *g, FILE *f, table_format fmt) {
    const char *pre = fmt == FORMAT_CSV ? "# " : (fmt == FORMAT_MD ? "" : "");
    char mem[32], l2[32];
    fmt_size(mem, sizeof mem, (double)g->global_bytes);
    fmt_size(l2, sizeof l2, (double)g->l2_bytes);
    fprintf(f,
            "%sGPU: %s (sm_%d, %d SMs, SM clock %d MHz, memory clock %d MHz, %d-bit bus, %s, L2 %s)%s\n",
            pre, g->name, g->cc, g->sms, g->sm_clock_mhz, g->mem_clock_mhz, g->bus_width_bits, mem, l2,
            fmt == FORMAT_MD ? "  " : "");
    fprintf(f, "%sdriver %s, CUDA driver API %d.%d, CUDA runtime %d.%d, cuBLAS %d.%d.%d%s\n", pre,
            g->driver, g->driver_api_version / 1000, (g->driver_api_version % 1000) / 10,
            g->runtime_version / 1000, (g->runtime_version % 1000) / 10, g->cublas_version / 10000,
            (g->cublas_version / 100) % 100, g->cublas_version % 100, fmt == FORMAT_MD ? "  " : "");
}

bool gpu_fits(const gpu_report *g, double bytes) {
    /* Keep room for the L2 flush buffer, the library's workspace and the context. */
    double headroom = 4.0 * (double)g->l2_bytes + 512.0 * (1 << 20);
    return bytes + headroom <= (double)g->free_bytes;
}

void print_sass_spec(FILE *f, const char *chapter, const kernel_info *k) {
    fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\n", chapter, k->name,
            k->arch == ARCH_SM90A ? "sm_90a" : "all", k->sass_symbol ? k->sass_symbol : "-",
            k->sass_must && *k->sass_must ? k->sass_must : "-",
            k->sass_must_not && *k->sass_must_not ? k->sass_must_not : "-");
}
