/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cuh -- the CUDA kernels of L1/088 (rotate q and k) and their
// launcher: rotate.cuh's rotation with sign +1 (styled.cuh's generic kernel
// for the interleaved style and partial rotary), the dtype pair picking the
// instance.
#pragma once

#include "rotate.cuh"
#include "styled.cuh"

template <typename T, typename C>
static cudaError_t rg_apply_forward_go(const ropegrad_rope_apply_problem *p, cudaStream_t st)
{
    if (!rg_apply_default_style_dev(p->shape))
        return rg_apply_styled_go<T, C, false>(p->shape, 1.0f, (const T *)p->q, (const T *)p->k, nullptr, nullptr,
                                               (const C *)p->cos, (const C *)p->sin, (T *)p->q_out, (T *)p->k_out,
                                               nullptr, nullptr, st);
    return rg_apply_pairs_go<T, C>(p->shape, 1.0f, (const T *)p->q, (const T *)p->k, (const C *)p->cos,
                                   (const C *)p->sin, (T *)p->q_out, (T *)p->k_out, st);
}

// The launchers for a validated problem: the dtype pair picks the instance.
template <typename T>
static cudaError_t rg_apply_forward_cs(const ropegrad_rope_apply_problem *p, cudaStream_t st)
{
    switch (p->shape.cos_sin_dtype) {
    case ROPEGRAD_BF16: return rg_apply_forward_go<T, __nv_bfloat16>(p, st);
    case ROPEGRAD_F16: return rg_apply_forward_go<T, __half>(p, st);
    default: return rg_apply_forward_go<T, float>(p, st);
    }
}

static cudaError_t rg_rope_apply_launch(const ropegrad_rope_apply_problem *p, cudaStream_t st)
{
    switch (p->shape.dtype) {
    case ROPEGRAD_BF16: return rg_apply_forward_cs<__nv_bfloat16>(p, st);
    case ROPEGRAD_F16: return rg_apply_forward_cs<__half>(p, st);
    default: return rg_apply_forward_cs<float>(p, st);
    }
}
