/* SPDX-License-Identifier: Apache-2.0 */
/* sincos_bound_cpu.c -- every float argument of the CPU forward path's core,
 * on the CPU: dev/common/sincos_bound.cu's check for the C code.
 *
 * The forward ops' CPU path computes sin/cos of |x| <= RG_CORE_FAST_MAX (4e6)
 * with the GPU's float core written for the CPU (src/op/cpu_sincos_core.h:
 * rg_sincos_core1 one value at a time, core8 on AVX2, core16 on AVX-512), and
 * certifies each bf16 rounding by the value's distance in ulps from the bf16
 * midpoint (rg_bf16_certain_ulps, src/op/cpu_kernels.h): RG_CORE_ULPS at
 * scale 1, RG_CORE_ULPS_SCALED for scale * value. For every float x with
 * |x| <= 4e6 (both signs, about 2.5e9 values), or every stride-th one:
 *   - the three forms of the core give the same bits (the ones this CPU runs);
 *   - the error of sin and cos against SLEEF's 1-ulp double sincos, in ulps
 *     of the value (its spacing of floats), stays below RG_CORE_ULPS, and the
 *     error of their products with SCALE (float, against the double product)
 *     below RG_CORE_ULPS_SCALED (the largest of each is printed);
 *   - every value the rounding test certifies rounds (bf16, nearest even) to
 *     the bf16 nearest the double value, where the double value can tell (not
 *     within 4 double ulps of a bf16 midpoint); flagged values are counted.
 * Exit 0 when all hold, 1 otherwise. The CTest test cpu_sincos_bound runs it
 * (tests/cpu_sincos_bound.cmake); results/sincos-bound-cpu.txt is a
 * whole run:
 *   build/tests/sincos_bound_cpu > results/sincos-bound-cpu.txt */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <sleef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu_kernels.h"
#include "sincos_bound_isa.h"

#define BLOCK 64   /* values per step: a multiple of 16 */
#define SCALE 0.70710677f   /* the scaled check's scale: 1/sqrt(2), a common attention scaling */

typedef struct {
    unsigned long long n, flagged[2], wrong_certain, mismatch, undecided;
    double max_ulps[2];   /* [0] the core's values, [1] their products with SCALE */
    float worst_x[2];
} counts;

/* The bf16 nearest to a double (nearest even), and whether d lies within 4
 * double ulps of a bf16 midpoint (where a 1-ulp reference cannot tell). */
static uint16_t bf16_of_double(double d, int *undecided)
{
    const uint16_t b = rg_bf16_rn_double(d);
    const float lo = rg_bits_float((uint32_t)b << 16), hi = rg_bits_float(((uint32_t)b + 1u) << 16),
                lo2 = rg_bits_float(((uint32_t)b - 1u) << 16);
    const double m_up = 0.5 * ((double)lo + (double)hi), m_dn = 0.5 * ((double)lo + (double)lo2);
    const double tol = 4.0 * fabs(d) * 0x1p-52;
    *undecided = fabs(d - m_up) <= tol || fabs(d - m_dn) <= tol;
    return b;
}

/* ulp(v): the spacing of the floats at v (the subnormals' below 2^-126). */
static double ulp_of(float v)
{
    const int e = (int)((rg_float_bits(v) >> 23) & 0xffu);
    return ldexp(1.0, (e ? e : 1) - 150);
}

/* One value v of x against the double ref: its error in ulps (which = 0 for
 * the core's own values, 1 for their products with SCALE, tested with
 * RG_CORE_ULPS or RG_CORE_ULPS_SCALED), then the library's test and, if it
 * certifies v, v's rounding. */
static void check_value(float x, float v, double ref, int which, counts *c)
{
    const double ulps = fabs((double)v - ref) / ulp_of(v);
    if (ulps > c->max_ulps[which]) c->max_ulps[which] = ulps, c->worst_x[which] = x;
    if (!rg_bf16_certain_ulps(v, which ? RG_CORE_ULPS_SCALED : RG_CORE_ULPS)) {
        c->flagged[which]++;
        return;
    }
    int undecided;
    const uint16_t want = bf16_of_double(ref, &undecided);
    if (undecided) c->undecided++;
    else if (rg_bf16_rn(v) != want) c->wrong_certain++;
}

static void check_block(const float *x, int isa, counts *c)
{
    float s[BLOCK], co[BLOCK];
    for (int k = 0; k < BLOCK; k++) rg_sincos_core1(x[k], &s[k], &co[k]);
    /* the vector forms the CPU runs, bit for bit against the scalar one */
#if SBC_HAVE_X86
    for (int form = 1; form <= isa; form++) {
        float vs[BLOCK], vc[BLOCK];
        if (form == 1) sbc_core_avx2(x, BLOCK, vs, vc);
        else sbc_core_avx512(x, BLOCK, vs, vc);
        for (int k = 0; k < BLOCK; k++)
            if (rg_float_bits(vs[k]) != rg_float_bits(s[k]) || rg_float_bits(vc[k]) != rg_float_bits(co[k]))
                c->mismatch++;
    }
#endif
    double rs[BLOCK], rc[BLOCK];
#if SBC_HAVE_X86
    if (isa == 2) sbc_ref_avx512(x, BLOCK, rs, rc);
    else if (isa == 1) sbc_ref_avx2(x, BLOCK, rs, rc);
    else
#endif
        for (int k = 0; k < BLOCK; k++) {
            const Sleef_double2 r = Sleef_sincos_u10((double)x[k]);
            rs[k] = r.x, rc[k] = r.y;
        }
    for (int k = 0; k < BLOCK; k++) {
        check_value(x[k], s[k], rs[k], 0, c);
        check_value(x[k], co[k], rc[k], 0, c);
        check_value(x[k], s[k] * SCALE, rs[k] * (double)SCALE, 1, c);
        check_value(x[k], co[k] * SCALE, rc[k] * (double)SCALE, 1, c);
    }
    c->n += BLOCK;
}

int main(int argc, char **argv)
{
    long stride = 1;
    static const struct option opts[] = {{"stride", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
        if (o == 's') {
            char *end;
            stride = strtol(optarg, &end, 10);
            if (*end || stride < 1 || stride > 1000000) {
                fprintf(stderr, "sincos_bound_cpu: --stride wants an integer from 1 to 1000000\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: sincos_bound_cpu [--stride N]   (every float |x| <= 4e6, or every N-th)\n");
            return o == 'h' ? 0 : 2;
        }
    }
    int isa = 0;   /* the vector forms built in (sincos_bound_isa.c) and this CPU runs */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (SBC_HAVE_X86 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isa = 1;
    if (isa && __builtin_cpu_supports("avx512f")) isa = 2;
#endif
    const uint32_t top = rg_float_bits(RG_CORE_FAST_MAX);   /* positive floats 0 .. 4e6 */
    const uint64_t steps = ((uint64_t)top + 1 + (uint64_t)stride * BLOCK - 1) / ((uint64_t)stride * BLOCK);
    const double t0 = omp_get_wtime();
    counts all = {0};
#pragma omp parallel
    {
        counts c = {0};
#pragma omp for schedule(dynamic, 4096)
        for (uint64_t b = 0; b < steps; b++) {
            float xp[BLOCK], xn[BLOCK];
            for (int k = 0; k < BLOCK; k++) {
                uint64_t u = (b * BLOCK + (uint64_t)k) * (uint64_t)stride;
                if (u > top) u = top;   /* the last block repeats 4e6: harmless */
                xp[k] = rg_bits_float((uint32_t)u);
                xn[k] = -xp[k];
            }
            check_block(xp, isa, &c);
            check_block(xn, isa, &c);
        }
#pragma omp critical
        {
            all.n += c.n, all.wrong_certain += c.wrong_certain;
            all.mismatch += c.mismatch, all.undecided += c.undecided;
            for (int w = 0; w < 2; w++) {
                all.flagged[w] += c.flagged[w];
                if (c.max_ulps[w] > all.max_ulps[w]) all.max_ulps[w] = c.max_ulps[w], all.worst_x[w] = c.worst_x[w];
            }
        }
    }
    const char *forms = isa == 2 ? "scalar, AVX2 and AVX-512" : isa == 1 ? "scalar and AVX2" : "scalar";
    printf("sincos_bound_cpu (%.1f s, %d threads): every %sfloat x with |x| <= %.0f, against SLEEF's 1-ulp double "
           "sincos\n",
           omp_get_wtime() - t0, omp_get_max_threads(), stride == 1 ? "" : "stride-th ", (double)RG_CORE_FAST_MAX);
    printf("stride:                                 %ld\n", stride);
    printf("arguments checked:                      %llu (the last block pads with 4e6 itself)\n", all.n);
    printf("core forms compared bit for bit:        %s; values that differ: %llu\n", forms, all.mismatch);
    printf("core error, ulps of the value:          max %.4f (at x = %.9g; the test assumes < %d)\n", all.max_ulps[0],
           (double)all.worst_x[0], RG_CORE_ULPS);
    printf("scale %.8g * value, ulps of the product: max %.4f (at x = %.9g; the test assumes < %d)\n", (double)SCALE,
           all.max_ulps[1], (double)all.worst_x[1], RG_CORE_ULPS_SCALED);
    printf("flagged by the rounding test:           %llu (%.2g of the values); scaled: %llu (%.2g)\n", all.flagged[0],
           all.n ? (double)all.flagged[0] / (2.0 * (double)all.n) : 0.0, all.flagged[1],
           all.n ? (double)all.flagged[1] / (2.0 * (double)all.n) : 0.0);
    printf("certain but not the nearest bf16:       %llu\n", all.wrong_certain);
    printf("reference undecided (certain values within 4 double ulps of a bf16 midpoint): %llu\n", all.undecided);
    const int ok = all.mismatch == 0 && all.max_ulps[0] < RG_CORE_ULPS && all.max_ulps[1] < RG_CORE_ULPS_SCALED &&
                   all.wrong_certain == 0;
    printf("%s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
