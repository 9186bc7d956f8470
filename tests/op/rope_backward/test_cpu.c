/* SPDX-License-Identifier: Apache-2.0 */
/* test_cpu.c -- the CPU path (ropegrad_rope_backward_cpu) against the float64
 * reference.
 *
 * The SIMD path is picked once per process, so this binary tests whichever
 * one ROPEGRAD_CPU_ISA selects; tests/cpu.cmake runs it once per path
 * (portable, avx2, avx512, and an unknown value that must fall back to the
 * best), and a path this CPU cannot run is reported as skipped (exit 77).
 *
 * Error bounds. For a row, let M = sum_d |inv_d| (|gs_d+gs_d+H| + |gc_d+gc_d+H|)
 * and u = 2^-24. Each computed term inv*(GS*cos - GC*sin) is off by at most
 * 12u*|inv|(|GS|+|GC|), first order: the grad pair sum (u), sin/cos from
 * SLEEF (3.5 ulp at worst, i.e. <= 7u relative), the two products, the
 * subtraction and the inv product (u each), with a little to spare. Summing
 * H terms in any order (sequential per lane, then a tree) adds at most
 * (H-1)u * sum|term|, and the final scale multiply u. So
 * |cpu - ref| <= |scale| * (H + 12) * u * M; the tests assert that per row
 * (times 1.01 for the second-order terms).
 * Real errors are far smaller; the point of the bound is that it is derived,
 * not fitted, and still catches a dropped or misread element (off by ~|term|). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

#include "ropegrad.h"

#define U 0x1p-24

/* ---- deterministic inputs: splitmix64 + Box-Muller ------------------------ */

static uint64_t rng_state;

static uint64_t splitmix64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(void) /* in (0, 1] */
{
    return (double)((splitmix64() >> 11) + 1) * 0x1p-53;
}

static double normal(void)
{
    return sqrt(-2.0 * log(uniform01())) * cos(6.283185307179586 * uniform01());
}

static uint16_t f32_to_bf16(float f) /* truncation: any bf16 value is a valid input */
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

/* float -> IEEE half, round to nearest, for |f| < 65504; tiny values become
 * subnormals, which the f16 paths must widen exactly. */
static uint16_t f32_to_f16(float f)
{
    uint16_t sign = f < 0 ? 0x8000 : 0;
    double a = fabs((double)f);
    if (a < 0x1p-14) return sign | (uint16_t)lrint(a * 0x1p24); /* subnormal (or 0x0400 = min normal) */
    int e;
    double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    long mant = lrint((m * 2.0 - 1.0) * 1024.0);
    if (mant == 1024) {
        mant = 0;
        e++;
    }
    return sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)mant;
}

static float f16_value(uint16_t h) /* exact, for building the f32 baseline */
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (float)((h & 0x8000) ? -v : v);
}

/* ---- a problem with its own buffers ------------------------------------------ */

typedef struct {
    ropegrad_rope_backward_problem p;
    void *gc, *gs;
    float *emb, *inv, *out;
    double *ref;
} tcase;

static size_t esize(ropegrad_dtype dt) { return dt == ROPEGRAD_F32 ? 4 : 2; }

static float grad_value(const void *g, ropegrad_dtype dt, int64_t i)
{
    if (dt == ROPEGRAD_F32) return ((const float *)g)[i];
    uint16_t h = ((const uint16_t *)g)[i];
    if (dt == ROPEGRAD_F16) return f16_value(h);
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void set_grad(void *g, ropegrad_dtype dt, int64_t i, float v)
{
    if (dt == ROPEGRAD_F32) ((float *)g)[i] = v;
    else if (dt == ROPEGRAD_BF16) ((uint16_t *)g)[i] = f32_to_bf16(v);
    else ((uint16_t *)g)[i] = f32_to_f16(v);
}

/* Allocates exact sizes (so a sanitizer build catches any overread) and
 * fills grads ~ N(0,1), emb ~ N(0, 3^2) in the first half and NaN in the
 * second (never read), inv_freq ~ N(0,1). f16 grads get some subnormals. */
static tcase make_case(int64_t B, int64_t S, int64_t D, ropegrad_dtype dt, int shared_inv, float scale,
                       uint64_t seed)
{
    tcase t;
    memset(&t, 0, sizeof t);
    rng_state = seed;
    const int64_t n = B * S * D, H = D / 2, ninv = shared_inv ? H : B * H;
    t.gc = malloc((size_t)n * esize(dt));
    t.gs = malloc((size_t)n * esize(dt));
    t.emb = malloc((size_t)n * sizeof(float));
    t.inv = malloc((size_t)ninv * sizeof(float));
    t.out = malloc((size_t)(B * S) * sizeof(float));
    t.ref = malloc((size_t)(B * S) * sizeof(double));
    assert_true(t.gc && t.gs && t.emb && t.inv && t.out && t.ref);
    for (int64_t i = 0; i < n; i++) {
        double sub = (dt == ROPEGRAD_F16 && splitmix64() % 16 == 0) ? 0x1p-18 : 1.0;
        set_grad(t.gc, dt, i, (float)(normal() * sub));
        set_grad(t.gs, dt, i, (float)normal());
        t.emb[i] = (i % D) < H ? (float)(3.0 * normal()) : NAN;
    }
    for (int64_t i = 0; i < ninv; i++) t.inv[i] = (float)normal();
    ropegrad_rope_backward_problem *p = &t.p;
    p->batch_size = B;
    p->seq_len = S;
    p->head_dim = D;
    p->grad_dtype = dt;
    p->grad_cos = t.gc;
    p->grad_sin = t.gs;
    p->emb = t.emb;
    p->inv_freq = t.inv;
    p->inv_freq_batch_stride = shared_inv ? 0 : H;
    p->attention_scaling = scale;
    p->grad_position_ids = t.out;
    assert_int_equal(ropegrad_rope_backward_reference(p, t.ref), ROPEGRAD_OK);
    return t;
}

static void free_case(tcase *t)
{
    free(t->gc);
    free(t->gs);
    free(t->emb);
    free(t->inv);
    free(t->out);
    free(t->ref);
}

/* The derived per-row bound (see the top of the file). */
static double row_bound(const tcase *t, int64_t row)
{
    const ropegrad_rope_backward_problem *p = &t->p;
    const int64_t D = p->head_dim, H = D / 2, base = row * D;
    const float *inv = p->inv_freq + (row / p->seq_len) * p->inv_freq_batch_stride;
    double m = 0.0;
    for (int64_t d = 0; d < H; d++) {
        double gc = (double)grad_value(p->grad_cos, p->grad_dtype, base + d) +
                    grad_value(p->grad_cos, p->grad_dtype, base + d + H);
        double gs = (double)grad_value(p->grad_sin, p->grad_dtype, base + d) +
                    grad_value(p->grad_sin, p->grad_dtype, base + d + H);
        m += fabs((double)inv[d]) * (fabs(gc) + fabs(gs));
    }
    return 1.01 * fabs((double)p->attention_scaling) * (double)(H + 12) * U * m;
}

/* The obvious float32 evaluation with libm sinf/cosf, as a baseline the CPU
 * path must not be less accurate than. */
static void libm_f32(const tcase *t, float *out)
{
    const ropegrad_rope_backward_problem *p = &t->p;
    const int64_t D = p->head_dim, H = D / 2, rows = p->batch_size * p->seq_len;
    for (int64_t r = 0; r < rows; r++) {
        const float *inv = p->inv_freq + (r / p->seq_len) * p->inv_freq_batch_stride;
        float acc = 0.0f;
        for (int64_t d = 0; d < H; d++) {
            float gc = grad_value(p->grad_cos, p->grad_dtype, r * D + d) +
                       grad_value(p->grad_cos, p->grad_dtype, r * D + d + H);
            float gs = grad_value(p->grad_sin, p->grad_dtype, r * D + d) +
                       grad_value(p->grad_sin, p->grad_dtype, r * D + d + H);
            float e = p->emb[r * D + d];
            acc += inv[d] * (gs * cosf(e) - gc * sinf(e));
        }
        out[r] = p->attention_scaling * acc;
    }
}

static void poison(float *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = NAN;
}

/* Runs the CPU path with 1, 2 and all threads on a NaN-poisoned output:
 * every row written, within the derived bound, and bitwise the same for every
 * thread count (rows are independent, so the split must not matter).
 * Returns the max abs error. */
static double check_case(tcase *t)
{
    const int64_t rows = t->p.batch_size * t->p.seq_len;
    float *first = malloc((size_t)rows * sizeof(float));
    assert_non_null(first);
    const int threads[] = {1, 2, 0, 7};
    double max_err = 0.0;
    for (int k = 0; k < 4; k++) {
        poison(t->out, rows);
        assert_int_equal(ropegrad_rope_backward_cpu(&t->p, threads[k]), ROPEGRAD_OK);
        for (int64_t r = 0; r < rows; r++) {
            assert_true(isfinite(t->out[r]));
            double err = fabs((double)t->out[r] - t->ref[r]);
            if (err > row_bound(t, r)) {
                fprintf(stderr, "row %lld: cpu %.9g ref %.17g err %.3g bound %.3g (B %lld S %lld D %lld dtype %d threads %d)\n",
                        (long long)r, t->out[r], t->ref[r], err, row_bound(t, r), (long long)t->p.batch_size,
                        (long long)t->p.seq_len, (long long)t->p.head_dim, (int)t->p.grad_dtype, threads[k]);
                fail();
            }
            if (err > max_err) max_err = err;
        }
        if (k == 0) memcpy(first, t->out, (size_t)rows * sizeof(float));
        else assert_memory_equal(first, t->out, (size_t)rows * sizeof(float));
    }
    free(first);
    return max_err;
}

/* ---- tests --------------------------------------------------------------------- */

/* Shapes chosen to hit every loop structure for 8- and 16-lane kernels:
 * H < 8 (all tail), H = 17 and 23 (one vector + tail), multiples of 16, the
 * largest head_dim, a single row, a single batch, odd S. */
static void test_shapes_dtypes_strides(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {
        {3, 17, 2}, {2, 9, 6}, {1, 1, 64}, {4, 33, 128}, {1, 65, 256}, {2, 7, 1024},
        {1, 31, 34}, {3, 5, 46}, {2, 1, 128},
        /* large enough (2 x 2048 x 64 = 2^18+ elements per thread) that the
         * 2-, all- and 7-thread runs really split the rows (cpu.c's
         * RG_MIN_THREAD_ELEMS), with an odd row count for an uneven split */
        {4, 2049, 128},
    };
    const ropegrad_dtype dts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    uint64_t seed = 1;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int k = 0; k < 3; k++)
            for (int shared = 0; shared < 2; shared++) {
                tcase t = make_case(shapes[i][0], shapes[i][1], shapes[i][2], dts[k], shared,
                                    shared ? 0.0883883f : -1.5f, seed++);
                check_case(&t);
                free_case(&t);
            }
}

/* Real long-context inputs: emb = position * inv_freq in float32 (as the
 * forward pass computes it), inv_freq[d] = 1e6^(-2d/D), positions up to
 * 262144, so |emb| reaches 2.6e5 and sin/cos need full range reduction.
 * The CPU path must be no less accurate than float32 libm (+1e-6), within the
 * per-row bound, and below 5e-5 absolute for head_dim 128: with these
 * inv_freq, sum_d inv_d ~= 5.2 and |GS|+|GC| averages ~2.3 for N(0,1) bf16
 * grads, so the derived bound (H+12)u*M ~= 76 * 6e-8 * 12 ~= 5e-5 for a
 * typical row, while actual errors sit near 1e-6. */
static void test_real_positions(void **state)
{
    (void)state;
    const int64_t dims[] = {128, 64, 256};
    for (int di = 0; di < 3; di++) {
        const int64_t B = 2, S = 768, D = dims[di], H = D / 2;
        tcase t = make_case(B, S, D, ROPEGRAD_BF16, 0, 1.0f, 1000 + (uint64_t)di);
        for (int64_t d = 0; d < H; d++) t.inv[d] = (float)pow(1e6, -2.0 * (double)d / (double)D);
        t.p.inv_freq_batch_stride = 0;
        for (int64_t r = 0; r < B * S; r++) {
            /* spread positions over [0, 262144], ending exactly at the top */
            float pos = r == B * S - 1 ? 262144.0f : (float)(splitmix64() % 262145);
            for (int64_t d = 0; d < H; d++) t.emb[r * D + d] = pos * t.inv[d];
        }
        assert_int_equal(ropegrad_rope_backward_reference(&t.p, t.ref), ROPEGRAD_OK);
        float *base = malloc((size_t)(B * S) * sizeof(float));
        assert_non_null(base);
        libm_f32(&t, base);
        double base_err = 0.0;
        for (int64_t r = 0; r < B * S; r++) base_err = fmax(base_err, fabs((double)base[r] - t.ref[r]));
        double err = check_case(&t);
        printf("real positions, head_dim %lld, isa %s: max abs err %.3g (libm float32: %.3g)\n", (long long)D,
               ropegrad_cpu_isa(), err, base_err);
        assert_true(err <= base_err + 1e-6);
        if (D == 128) assert_true(err <= 5e-5);
        free(base);
        free_case(&t);
    }
}

/* |emb| anywhere up to 1e6 (uniform), so most vectors take the 1-ulp sincos
 * with Payne-Hanek reduction: still no less accurate than float32 libm. */
static void test_huge_emb(void **state)
{
    (void)state;
    const int64_t B = 1, S = 512, D = 128;
    tcase t = make_case(B, S, D, ROPEGRAD_BF16, 1, 1.0f, 4242);
    for (int64_t i = 0; i < B * S * D; i++)
        if (i % D < D / 2) t.emb[i] = (float)((2.0 * uniform01() - 1.0) * 1e6);
    assert_int_equal(ropegrad_rope_backward_reference(&t.p, t.ref), ROPEGRAD_OK);
    float *base = malloc((size_t)(B * S) * sizeof(float));
    assert_non_null(base);
    libm_f32(&t, base);
    double base_err = 0.0;
    for (int64_t r = 0; r < B * S; r++) base_err = fmax(base_err, fabs((double)base[r] - t.ref[r]));
    double err = check_case(&t);
    printf("|emb| <= 1e6, isa %s: max abs err %.3g (libm float32: %.3g)\n", ropegrad_cpu_isa(), err, base_err);
    assert_true(err <= base_err + 1e-6);
    free(base);
    free_case(&t);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    tcase t = make_case(1, 4, 8, ROPEGRAD_BF16, 1, 1.0f, 77);
    assert_int_equal(ropegrad_rope_backward_cpu(NULL, 1), ROPEGRAD_ERR_NULL_PROBLEM);
    poison(t.out, 4);
    assert_int_equal(ropegrad_rope_backward_cpu(&t.p, -1), ROPEGRAD_ERR_BAD_THREADS);
    assert_true(isnan(t.out[0])); /* nothing written on error */
    t.p.attention_scaling = INFINITY;
    assert_int_equal(ropegrad_rope_backward_cpu(&t.p, 1), ROPEGRAD_ERR_NONFINITE_SCALE);
    assert_true(isnan(t.out[0]));
    t.p.attention_scaling = 1.0f;
    t.p.grad_position_ids = NULL;
    assert_int_equal(ropegrad_rope_backward_cpu(&t.p, 0), ROPEGRAD_ERR_NULL_OUTPUT);
    t.p.grad_position_ids = t.out;
    /* a request for far more threads than cores still works */
    assert_int_equal(ropegrad_rope_backward_cpu(&t.p, 100000), ROPEGRAD_OK);
    for (int i = 0; i < 4; i++) assert_true(fabs((double)t.out[i] - t.ref[i]) <= row_bound(&t, i));
    free_case(&t);
}

/* ---- which SIMD path runs ------------------------------------------------------ */

static int cpu_can(const char *isa)
{
    if (strcmp(isa, "portable") == 0) return 1;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    /* F16C from CPUID.1:ECX: clang before 15 rejects "f16c" in __builtin_cpu_supports. */
    unsigned int eax, ebx, ecx, edx;
    int f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    if (strcmp(isa, "avx2") == 0) return avx2;
    if (strcmp(isa, "avx512") == 0) return avx2 && __builtin_cpu_supports("avx512f");
#endif
    return 0;
}

static const char *best_isa(void)
{
    return cpu_can("avx512") ? "avx512" : cpu_can("avx2") ? "avx2" : "portable";
}

static void test_isa_choice(void **state)
{
    (void)state;
    const char *want = getenv("ROPEGRAD_CPU_ISA");
    const char *got = ropegrad_cpu_isa();
    if (want && cpu_can(want)) assert_string_equal(got, want);
    else assert_string_equal(got, best_isa()); /* unset, unknown or unsupported: the best */
    assert_string_equal(ropegrad_cpu_isa(), got); /* resolved once */
}

int main(void)
{
    const char *want = getenv("ROPEGRAD_CPU_ISA");
    if (want && (strcmp(want, "avx2") == 0 || strcmp(want, "avx512") == 0) && !cpu_can(want)) {
        printf("skip: ROPEGRAD_CPU_ISA=%s but this CPU cannot run that path\n", want);
        return 77;
    }
    printf("CPU path under test: %s\n", ropegrad_cpu_isa());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isa_choice),
        cmocka_unit_test(test_shapes_dtypes_strides),
        cmocka_unit_test(test_real_positions),
        cmocka_unit_test(test_huge_emb),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
