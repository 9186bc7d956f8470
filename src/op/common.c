/* SPDX-License-Identifier: Apache-2.0 */
/* common.c -- argument validation, error strings, version: shared by every path. */
#include <math.h>
#include <stdint.h>

#include "internal.h"
#include "ropegrad.h"

#define RG_STR2(x) #x
#define RG_STR(x) RG_STR2(x)

const char *ropegrad_version(void)
{
    return RG_STR(ROPEGRAD_VERSION_MAJOR) "." RG_STR(ROPEGRAD_VERSION_MINOR) "." RG_STR(
        ROPEGRAD_VERSION_PATCH);
}

size_t ropegrad_dtype_size(ropegrad_dtype dt)
{
    switch (dt) {
    case ROPEGRAD_BF16:
    case ROPEGRAD_F16: return 2;
    case ROPEGRAD_F32: return 4;
    default: return 0;
    }
}

const char *ropegrad_strerror(int status)
{
    switch (status) {
    case ROPEGRAD_OK: return "success";
    case ROPEGRAD_ERR_NULL_PROBLEM: return "problem pointer is NULL";
    case ROPEGRAD_ERR_NULL_POINTER: return "an input tensor pointer (grad_cos, grad_sin, emb, inv_freq) is NULL";
    case ROPEGRAD_ERR_BAD_SIZE: return "batch_size and seq_len must be >= 1";
    case ROPEGRAD_ERR_BAD_HEAD_DIM: return "head_dim must be even and in 2..1024";
    case ROPEGRAD_ERR_OVERFLOW: return "batch_size*seq_len*head_dim overflows";
    case ROPEGRAD_ERR_BAD_DTYPE: return "grad_dtype is not bf16, f16 or f32";
    case ROPEGRAD_ERR_BAD_STRIDE: return "inv_freq_batch_stride must be >= 0";
    case ROPEGRAD_ERR_NONFINITE_SCALE: return "attention_scaling is NaN or Inf";
    case ROPEGRAD_ERR_BAD_THREADS: return "num_threads must be >= 0 (0 = all cores)";
    case ROPEGRAD_ERR_MISALIGNED: return "a tensor pointer is not aligned to its element size";
    case ROPEGRAD_ERR_NULL_OUTPUT: return "output pointer is NULL";
    case ROPEGRAD_ERR_NO_CUDA: return "CUDA backend unavailable (built without CUDA, or no usable GPU)";
    case ROPEGRAD_ERR_NOT_DEVICE_POINTER: return "a tensor pointer is not accessible from the GPU";
    case ROPEGRAD_ERR_CUDA: return "a CUDA runtime call or kernel launch failed";
    case ROPEGRAD_ERR_BAD_KERNEL: return "unknown CUDA kernel version";
    case ROPEGRAD_ERR_OUT_OF_MEMORY: return "out of host memory";
    case ROPEGRAD_ERR_OVERLAP: return "the output overlaps an input tensor (in-place use is not supported)";
    case ROPEGRAD_ERR_UNSUPPORTED: return "this combination of layout, dtype or strides is not implemented";
    default: return "unknown ropegrad status";
    }
}

static int misaligned(const void *ptr, size_t align)
{
    return ((uintptr_t)ptr % align) != 0;
}

int rg_validate_inputs(const ropegrad_rope_backward_problem *p)
{
    if (!p) return ROPEGRAD_ERR_NULL_PROBLEM;
    if (p->batch_size < 1 || p->seq_len < 1) return ROPEGRAD_ERR_BAD_SIZE;
    if (p->head_dim < 2 || p->head_dim > ROPEGRAD_MAX_HEAD_DIM || (p->head_dim & 1))
        return ROPEGRAD_ERR_BAD_HEAD_DIM;
    size_t esz = ropegrad_dtype_size(p->grad_dtype);
    if (esz == 0) return ROPEGRAD_ERR_BAD_DTYPE;
    /* Every byte offset the op forms must fit in int64 (and so in size_t on
     * 64-bit hosts): rows * head_dim * 4 bytes for emb is the largest. */
    if (p->batch_size > INT64_MAX / p->seq_len) return ROPEGRAD_ERR_OVERFLOW;
    int64_t rows = p->batch_size * p->seq_len;
    if (rows > INT64_MAX / (p->head_dim * 4)) return ROPEGRAD_ERR_OVERFLOW;
    if ((uint64_t)rows * (uint64_t)p->head_dim * 4u > (uint64_t)SIZE_MAX) return ROPEGRAD_ERR_OVERFLOW;
    if (p->inv_freq_batch_stride < 0) return ROPEGRAD_ERR_BAD_STRIDE;
    if (p->inv_freq_batch_stride > 0 &&
        p->inv_freq_batch_stride > (INT64_MAX - p->head_dim) / p->batch_size)
        return ROPEGRAD_ERR_OVERFLOW;
    if (!p->grad_cos || !p->grad_sin || !p->emb || !p->inv_freq) return ROPEGRAD_ERR_NULL_POINTER;
    if (misaligned(p->grad_cos, esz) || misaligned(p->grad_sin, esz) || misaligned(p->emb, 4) ||
        misaligned(p->inv_freq, 4))
        return ROPEGRAD_ERR_MISALIGNED;
    if (!isfinite(p->attention_scaling)) return ROPEGRAD_ERR_NONFINITE_SCALE;
    return ROPEGRAD_OK;
}

int rg_ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    if (!a || !b || a_bytes == 0 || b_bytes == 0) return 0;
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    /* [x, x+a_bytes) and [y, y+b_bytes) meet unless one ends before the other
     * starts; written with subtractions so that no end can wrap around. */
    return x < y ? y - x < a_bytes : x - y < b_bytes;
}

int rg_check_output_overlap(const ropegrad_rope_backward_problem *p, const void *out, size_t out_bytes)
{
    /* Called after rg_validate_inputs: every product below fits (OVERFLOW checks). */
    const size_t rows = (size_t)p->batch_size * (size_t)p->seq_len, D = (size_t)p->head_dim;
    const size_t gbytes = rows * D * ropegrad_dtype_size(p->grad_dtype);
    const size_t inv_elems = (size_t)(p->batch_size - 1) * (size_t)p->inv_freq_batch_stride + D / 2;
    if (rg_ranges_overlap(out, out_bytes, p->grad_cos, gbytes) || rg_ranges_overlap(out, out_bytes, p->grad_sin, gbytes) ||
        rg_ranges_overlap(out, out_bytes, p->emb, rows * D * 4) ||
        rg_ranges_overlap(out, out_bytes, p->inv_freq, inv_elems * 4))
        return ROPEGRAD_ERR_OVERLAP;
    return ROPEGRAD_OK;
}

int ropegrad_rope_backward_validate(const ropegrad_rope_backward_problem *p)
{
    int rc = rg_validate_inputs(p);
    if (rc) return rc;
    if (!p->grad_position_ids) return ROPEGRAD_ERR_NULL_OUTPUT;
    if (misaligned(p->grad_position_ids, 4)) return ROPEGRAD_ERR_MISALIGNED;
    return rg_check_output_overlap(p, p->grad_position_ids,
                                   (size_t)p->batch_size * (size_t)p->seq_len * sizeof(float));
}

int rg_validate_forward_shape(int64_t B, int64_t S, int64_t D, int64_t out_bytes_per_elem, float scale)
{
    if (B < 1 || S < 1) return ROPEGRAD_ERR_BAD_SIZE;
    if (D < 2 || D > ROPEGRAD_MAX_HEAD_DIM || (D & 1)) return ROPEGRAD_ERR_BAD_HEAD_DIM;
    if (B > INT64_MAX / S) return ROPEGRAD_ERR_OVERFLOW;
    const int64_t rows = B * S;
    if (rows > INT64_MAX / (D * out_bytes_per_elem)) return ROPEGRAD_ERR_OVERFLOW;
    if ((uint64_t)rows * (uint64_t)D * (uint64_t)out_bytes_per_elem > (uint64_t)SIZE_MAX) return ROPEGRAD_ERR_OVERFLOW;
    if (!isfinite(scale)) return ROPEGRAD_ERR_NONFINITE_SCALE;
    return ROPEGRAD_OK;
}
