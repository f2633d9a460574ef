/* Two kernels for the test of common/compare.sh (tests/run.sh, "compare"): the same copy written
 * well and badly. `copy_vec4` moves 16 bytes per load and store; `copy_spilled` moves 4 bytes at
 * a time and goes through an array indexed at run time, which lives in local memory. compare.sh
 * must tell them apart: LDG.E.128 in the first only, local memory in the second only. */
extern "C" __global__ void copy_vec4(const float4 *__restrict__ in, float4 *__restrict__ out,
                                     int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

extern "C" __global__ void copy_spilled(const float *__restrict__ in, float *__restrict__ out,
                                        int n, int pick) {
    float staged[64]; /* written and read at indices known only at run time: local memory */
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 64; j++) staged[(j * pick) & 63] = i + j < n ? in[i + j] : 0.0f;
    if (i < n) out[i] = staged[(pick + i) & 63];
}
