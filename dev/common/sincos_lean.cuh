/* SPDX-License-Identifier: Apache-2.0 */
// sincos_lean.cuh -- version 34 of 012's float sin/cos ("lean", not shipped:
// no faster than rg_sincos_core in the fast kernel, results/dev/19-012-lean/):
// fewer instructions than rg_sincos_core (src/op/rope_math.cuh) for outputs
// rounded once to bf16 with no rounding test.
//   - The same reduction (r accurate relative to itself for |x| <= 4e6).
//   - sin of degree 5 and cos of degree 6, minimax relative on |r| <= 0.9
//     (scipy linprog on 20001 points: relative error 4.3e-6 and 9.3e-8 before
//     float rounding), not 7 and 8.
//   - The quadrant's signs folded: r's sign flipped by q's bit 1 (sin is odd,
//     cos even) makes sin(r') the value of sin x for even q and of -cos x for
//     odd q; cos r takes q's bit 1 as its sign; one select pair remains.
// Its values times a scale, each rounded once to bf16, are within
// FD_SINCOS_LEAN_BF16_ULPS of a bf16 ulp of the exact value: the lean pass of
// dev/common/sincos_bound.cu, over every float |x| <= 4e6 (max 0.50232).
#pragma once

#include <cuda_runtime.h>

#define FD_SINCOS_LEAN_BF16_ULPS (0.5 + 1.0 / 256)

static __device__ __forceinline__ void fd_sincos_lean(float x, float *s, float *c)
{
    const float big = fmaf(x, 0.636619746685028076f, 12582912.0f);   // as rg_sincos_core
    const float q = big - 12582912.0f;
    const unsigned t = __float_as_uint(big) << 30;                     // bit 31: q's bit 1, bit 30: q's bit 0
    float r = fmaf(q, -1.5707962512969971f, x);
    r = fmaf(q, -7.5497894158615964e-08f, r);
    r = fmaf(q, -5.3903029534742384e-15f, r);
    r = __uint_as_float(__float_as_uint(r) ^ (t & 0x80000000u));     // r' = -r when q's bit 1 is set
    const float r2 = r * r;
    const float sr = r * fmaf(fmaf(8.110158145427704e-03f, r2, -1.6661003232002258e-01f), r2, 1.0f);
    const float cr = fmaf(fmaf(fmaf(-1.3486252864822745e-03f, r2, 4.1646260768175125e-02f), r2,
                               -4.999969005584717e-01f),
                          r2, 1.0f);
    const float cs = __uint_as_float(__float_as_uint(cr) ^ (t & 0x80000000u));
    const bool odd = (t & 0x40000000u) != 0;
    *s = odd ? cs : sr;
    *c = odd ? -sr : cs;
}
