/* Storage types shared by host C and device CUDA code. In CUDA they are the toolkit's types;
 * in C they are plain integers of the same size, so a launcher declared once in a chapter
 * header links from both sides (only pointers to them cross the boundary). */
#ifndef TYPES_H
#define TYPES_H

#include <stdint.h>

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
typedef __half f16_t;
typedef __nv_bfloat16 bf16_t;
typedef __nv_fp8_e4m3 e4m3_t;
#else
typedef uint16_t f16_t;
typedef uint16_t bf16_t;
typedef uint8_t e4m3_t;
#endif

#endif
