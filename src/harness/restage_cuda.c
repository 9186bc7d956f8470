/* SPDX-License-Identifier: Apache-2.0 */
/* restage_cuda.c -- the inputs re-staged at a shifted address before every
 * warmup and timed iteration (--restage on; run_cuda_parts.h), as the
 * official evaluator's ShiftingMemoryPoolAllocator (core/bench/io.py) does.
 *
 * Each input has a pool of its size plus (slots - 1) * 256 bytes. Before
 * iteration it the bytes of the iteration's input set (a pristine device
 * copy the calls never see: timed_sets.c) are copied (cudaMemcpyAsync,
 * device to device, on the harness's stream) to pool + (it mod slots) * 256
 * and the call gets that address: every call sees its inputs at a new data
 * pointer (still 256-byte aligned), with values the previous call cannot
 * have left behind. The official pool holds
 * one offset per call (slots = warmup + iterations, never wrapping); here
 * too, up to RG_RESTAGE_MAX_SLOTS calls (the default 10 + 50 fit), after
 * which the offsets wrap around, to keep the pool's memory bounded. */
#include <stdio.h>
#include <string.h>

#include "run_cuda_parts.h"

#define RG_RESTAGE_SHIFT 256
#define RG_RESTAGE_MAX_SLOTS 1024

void rg_restage_close(rg_restage_pool *p)
{
    if (!p) return;
    for (int k = 0; k < p->n_in; k++)
        if (p->pool[k]) cudaFree(p->pool[k]);
    memset(p, 0, sizeof *p);
}

int rg_restage_open(rg_restage_pool *p, const rg_tensors *dev, int iterations, char *err, size_t errlen)
{
    if (!p || !dev || iterations < 1 || dev->n_in < 0 || dev->n_in > RG_OP_MAX_TENSORS) {
        snprintf(err, errlen, "rg_restage_open: bad arguments");
        return 1;
    }
    memset(p, 0, sizeof *p);
    p->n_in = dev->n_in;
    p->slots = iterations < RG_RESTAGE_MAX_SLOTS ? iterations : RG_RESTAGE_MAX_SLOTS;
    for (int k = 0; k < dev->n_in; k++) {
        const size_t bytes = dev->in_bytes[k], pool = bytes + (size_t)(p->slots - 1) * RG_RESTAGE_SHIFT;
        p->bytes[k] = bytes;
        cudaError_t ce = cudaMalloc(&p->pool[k], pool);
        if (ce != cudaSuccess) {
            snprintf(err, errlen, "re-staged inputs: input %d (%zu bytes): %s", k, bytes, cudaGetErrorString(ce));
            rg_restage_close(p);
            return 1;
        }
    }
    return 0;
}

int rg_restage_next(const rg_restage_pool *p, int it, const rg_tensors *src, rg_tensors *call, cudaStream_t st,
                    char *err, size_t errlen)
{
    if (!p || !src || !call || it < 0 || p->slots < 1 || src->n_in != p->n_in) {
        snprintf(err, errlen, "rg_restage_next: bad arguments");
        return 1;
    }
    const size_t offset = (size_t)(it % p->slots) * RG_RESTAGE_SHIFT;
    for (int k = 0; k < p->n_in; k++) {
        void *at = (char *)p->pool[k] + offset;
        cudaError_t ce = cudaMemcpyAsync(at, src->in[k], p->bytes[k], cudaMemcpyDeviceToDevice, st);
        if (ce != cudaSuccess) {
            snprintf(err, errlen, "cudaMemcpyAsync (re-staged input %d): %s", k, cudaGetErrorString(ce));
            return 1;
        }
        call->in[k] = at;
    }
    return 0;
}
