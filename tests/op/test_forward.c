/* SPDX-License-Identifier: Apache-2.0 */
/* test_forward.c -- the forward ops' CPU paths (011 position ids -> cos_sin,
 * 012 freqs -> cos, sin) against their float64 references, and the harness's
 * rows for them (suites, generators, bench through the op table).
 *
 * Runs once per CPU path (tests/cpu.cmake forces each through ROPEGRAD_CPU_ISA). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "forward_common.h"
#include "harness.h"
#include "record.h"
#include "manifest.h"

typedef int (*path011)(const ropegrad_rope_forward_problem *);
typedef int (*path012)(const ropegrad_cos_sin_problem *);

static int cpu011(const ropegrad_rope_forward_problem *p) { return ropegrad_rope_forward_cpu(p, 0); }
static int cpu012(const ropegrad_cos_sin_problem *p) { return ropegrad_cos_sin_cpu(p, 0); }

/* Runs 011 / 012 on case c through fn and compares with the reference. */
static void run011(const fc_case *c, path011 fn, fc_result *res)
{
    const int64_t n = c->B * c->S * c->D * 2;
    uint16_t *out = malloc((size_t)n * 2);
    assert_non_null(out);
    memset(out, 0xff, (size_t)n * 2);
    ropegrad_rope_forward_problem p = {c->B, c->S, c->D, c->pos, c->inv, c->scale, out};
    assert_int_equal(fn(&p), 0);
    fc_check_011(c, out, res);
    free(out);
}

static void run012(const fc_case *c, path012 fn, fc_result *res)
{
    const int64_t n = c->B * c->S * c->D;
    uint16_t *out = malloc((size_t)n * 4);
    assert_non_null(out);
    memset(out, 0xff, (size_t)n * 4);
    ropegrad_cos_sin_problem p = {c->B, c->S, c->D, c->freqs, c->scale, out, out + n};
    assert_int_equal(fn(&p), 0);
    fc_check_012(c, out, res);
    free(out);
}

static const struct {
    int64_t B, S, D;
    int kind;
    float scale;
} cases[] = {
    {4, 1000, 128, FC_LLAMA3, 1.0f},     /* real positions to 131071, llama3 */
    {2, 2000, 128, FC_THETA_1E6, 1.0f},  /* real positions to 262143, theta 1e6 */
    {3, 77, 128, FC_LLAMA3, 0.7071f},    /* a scale */
    {2, 33, 2, FC_THETA_1E6, 1.0f},      /* head_dim 2 */
    {1, 9, 6, FC_LLAMA3, 1.0f},          /* H not a multiple of 4 */
    {1, 5, 1024, FC_THETA_1E6, 2.0f},    /* the largest head_dim */
    {2, 64, 130, FC_LLAMA3, 1.0f},
};

static void check_all(path011 f011, path012 f012, const char *what)
{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        fc_case c;
        fc_make(&c, cases[k].B, cases[k].S, cases[k].D, cases[k].kind, cases[k].scale, 1000 + k);
        fc_result r11, r12;
        run011(&c, f011, &r11);
        run012(&c, f012, &r12);
        fc_assert_case(what, k, 0, &c, &r11, &r12);
        fc_free(&c);
    }
    /* 012 on random, huge (to 2^79) and hostile arguments (signed zeros, subnormals,
     * values next to multiples of pi/2, to 1e9): still the nearest bf16. */
    for (int kind = FC_RANDOM; kind <= FC_LAST; kind++) {
        fc_case c;
        fc_make(&c, 2, 300, 128, kind, 1.0f, 77 + (uint64_t)kind);
        fc_result r;
        run012(&c, f012, &r);
        printf("%s 012 kind %d: max err %.3e, not nearest %lld/%lld\n", what, kind, r.max_err,
               (long long)r.n_not_nearest, (long long)r.n);
        assert_int_equal(r.n_not_nearest, 0);
        fc_free(&c);
    }
}

static void test_cpu_paths(void **state)
{
    (void)state;
    printf("cpu isa %s\n", ropegrad_cpu_isa());
    check_all(cpu011, cpu012, "cpu");
}

/* The reference is the formula: a few values by hand. */
static void test_reference_values(void **state)
{
    (void)state;
    int64_t pos[2] = {3, 100000};
    float inv[2] = {1.0f, 0.001f};
    double ref[2 * 4 * 2];
    ropegrad_rope_forward_problem p = {1, 2, 4, pos, inv, 0.5f, NULL};
    assert_int_equal(ropegrad_rope_forward_reference(&p, ref), 0);
    /* row 1, j = 1 (inv 0.001): x = float(100000 * 0.001f) */
    const double x = (double)(100000.0f * 0.001f);
    assert_true(ref[(4 + 1) * 2] == 0.5 * cos(x));
    assert_true(ref[(4 + 3) * 2 + 1] == 0.5 * sin(x));   /* j = 3 = 1 + H */
    assert_true(ref[0] == 0.5 * cos(3.0));
    float fr[2] = {1e5f, -2.5f};
    double r12[2 * 1 * 4];
    ropegrad_cos_sin_problem q = {1, 1, 4, fr, 2.0f, NULL, NULL};
    assert_int_equal(ropegrad_cos_sin_reference(&q, r12), 0);
    assert_true(r12[2] == 2.0 * cos(1e5));
    assert_true(r12[4 + 3] == 2.0 * sin(-2.5));
}

static void test_validation(void **state)
{
    (void)state;
    int64_t pos[4] = {0};
    float inv[64] = {0}, fr[64] = {0};
    uint16_t out[4 * 128 * 2] = {0};
    ropegrad_rope_forward_problem p = {1, 2, 128, pos, inv, 1.0f, out};
    assert_int_equal(ropegrad_rope_forward_validate(&p), 0);
    assert_int_equal(ropegrad_rope_forward_cpu(NULL, 0), ROPEGRAD_ERR_NULL_PROBLEM);
    ropegrad_rope_forward_problem q = p;
    q.head_dim = 7;
    assert_int_equal(ropegrad_rope_forward_cpu(&q, 0), ROPEGRAD_ERR_BAD_HEAD_DIM);
    q = p;
    q.batch_size = 0;
    assert_int_equal(ropegrad_rope_forward_cpu(&q, 0), ROPEGRAD_ERR_BAD_SIZE);
    q = p;
    q.position_ids = NULL;
    assert_int_equal(ropegrad_rope_forward_cpu(&q, 0), ROPEGRAD_ERR_NULL_POINTER);
    q = p;
    q.cos_sin = NULL;
    assert_int_equal(ropegrad_rope_forward_cpu(&q, 0), ROPEGRAD_ERR_NULL_OUTPUT);
    q = p;
    q.attention_scaling = NAN;
    assert_int_equal(ropegrad_rope_forward_cpu(&q, 0), ROPEGRAD_ERR_NONFINITE_SCALE);
    q = p;
    q.position_ids = (const int64_t *)((const char *)pos + 4);
    assert_int_equal(ropegrad_rope_forward_cpu(&q, 0), ROPEGRAD_ERR_MISALIGNED);
    q = p;
    q.batch_size = INT64_MAX / 2;
    assert_int_equal(ropegrad_rope_forward_cpu(&q, 0), ROPEGRAD_ERR_OVERFLOW);
    assert_int_equal(ropegrad_rope_forward_cpu(&p, -1), ROPEGRAD_ERR_BAD_THREADS);
    assert_int_equal(ropegrad_rope_forward_reference(&p, NULL), ROPEGRAD_ERR_NULL_OUTPUT);
    /* an output over an input is refused, never computed in place */
    uint16_t big[4 * 128 * 2 + 64] = {0};
    q = p;
    q.cos_sin = big;
    q.inv_freq = (const float *)(big + 100);
    assert_int_equal(ropegrad_rope_forward_cpu(&q, 0), ROPEGRAD_ERR_OVERLAP);
    q = p;
    q.cos_sin = big + 4;
    q.position_ids = (const int64_t *)big;
    assert_int_equal(ropegrad_rope_forward_cpu(&q, 0), ROPEGRAD_ERR_OVERLAP);

    ropegrad_cos_sin_problem c = {1, 1, 128, fr, 1.0f, out, out + 128};
    assert_int_equal(ropegrad_cos_sin_validate(&c), 0);
    assert_int_equal(ropegrad_cos_sin_cpu(NULL, 0), ROPEGRAD_ERR_NULL_PROBLEM);
    ropegrad_cos_sin_problem d = c;
    d.sin = out + 64;   /* cos and sin share bytes */
    assert_int_equal(ropegrad_cos_sin_cpu(&d, 0), ROPEGRAD_ERR_OVERLAP);
    d = c;
    d.freqs = (const float *)(out + 128 + 32);   /* freqs inside sin */
    assert_int_equal(ropegrad_cos_sin_cpu(&d, 0), ROPEGRAD_ERR_OVERLAP);
    d = c;
    d.sin = NULL;
    assert_int_equal(ropegrad_cos_sin_cpu(&d, 0), ROPEGRAD_ERR_NULL_OUTPUT);
    d = c;
    d.freqs = NULL;
    assert_int_equal(ropegrad_cos_sin_cpu(&d, 0), ROPEGRAD_ERR_NULL_POINTER);
    d = c;
    d.head_dim = 2000;
    assert_int_equal(ropegrad_cos_sin_cpu(&d, 0), ROPEGRAD_ERR_BAD_HEAD_DIM);
    d = c;
    d.attention_scaling = INFINITY;
    assert_int_equal(ropegrad_cos_sin_cpu(&d, 0), ROPEGRAD_ERR_NONFINITE_SCALE);
    d = c;
    d.cos = (uint16_t *)((char *)out + 1);
    assert_int_equal(ropegrad_cos_sin_cpu(&d, 0), ROPEGRAD_ERR_MISALIGNED);
    assert_int_equal(ropegrad_cos_sin_cpu(&c, -2), ROPEGRAD_ERR_BAD_THREADS);
#ifndef ROPEGRAD_HAVE_CUDA
    assert_int_equal(ropegrad_rope_forward_cuda(&p, NULL), ROPEGRAD_ERR_NO_CUDA);
    assert_int_equal(ropegrad_cos_sin_cuda(&c, NULL), ROPEGRAD_ERR_NO_CUDA);
#endif
    assert_int_equal(ropegrad_cos_sin_cuda(&d, NULL), ROPEGRAD_ERR_MISALIGNED);   /* validated first */

    /* 012's kernel versions: 0 and 1 named, others refused after validation,
     * before any device work (so the same in every build, GPU or not). */
    assert_string_equal(ropegrad_cos_sin_kernel_name(0), "default");
    assert_string_equal(ropegrad_cos_sin_kernel_name(ROPEGRAD_COS_SIN_KERNEL_FAST), "fast");
    assert_null(ropegrad_cos_sin_kernel_name(2));
    assert_null(ropegrad_cos_sin_kernel_name(-1));
    assert_int_equal(ropegrad_cos_sin_cuda_kernel(&c, 2, NULL), ROPEGRAD_ERR_BAD_KERNEL);
    assert_int_equal(ropegrad_cos_sin_cuda_kernel(&c, -1, NULL), ROPEGRAD_ERR_BAD_KERNEL);
    assert_int_equal(ropegrad_cos_sin_cuda_kernel(&d, 2, NULL), ROPEGRAD_ERR_MISALIGNED);
    assert_int_equal(ropegrad_cos_sin_cuda_kernel(NULL, 1, NULL), ROPEGRAD_ERR_NULL_PROBLEM);
#ifndef ROPEGRAD_HAVE_CUDA
    assert_int_equal(ropegrad_cos_sin_cuda_kernel(&c, 1, NULL), ROPEGRAD_ERR_NO_CUDA);
#endif
}

/* ---- the harness's rows ---- */

static void load(const char *id, rg_suite *s)
{
    char dir[4096], err[RG_ERRLEN];
    rg_op_suite_dir(rg_op_by_id(id), RG_SOURCE_DIR "/suites", dir, sizeof dir);
    if (rg_suite_load(dir, s, err, sizeof err)) fail_msg("%s", err);
}

static void test_suites_load(void **state)
{
    (void)state;
    rg_suite s;
    load("011", &s);
    assert_string_equal(s.op->id, "011");
    assert_int_equal(s.n_workloads, 16);
    assert_true(s.workloads[0].attention_scaling == 1.0f);   /* custom: get_inputs' 1.0 */
    assert_true(s.have_figures);
    /* bytes: 8 B of position and 512 B of cos_sin per row, inv_freq once */
    assert_true(s.op->bytes(&s.workloads[0], s.grad_dtype) == 4096.0 * 520 + 256);
    rg_suite_free(&s);
    load("012", &s);
    assert_string_equal(s.op->id, "012");
    assert_true(s.op->bytes(&s.workloads[0], s.grad_dtype) == 2048.0 * (256 + 512));
    rg_suite_free(&s);
    load("014", &s);
    assert_string_equal(s.op->id, "014");
    rg_suite_free(&s);
    assert_null(rg_op_find("013_something_else"));
}

/* 011's generator: get_inputs' llama3 inv_freq and sequential positions; the
 * positions mode differs per batch and stays within 131071. */
static void test_generator_011(void **state)
{
    (void)state;
    rg_suite s;
    char err[RG_ERRLEN];
    load("011", &s);
    const rg_workload *w = &s.workloads[0];   /* B 16, S 256 */
    rg_tensors t;
    assert_int_equal(s.op->make(w, s.grad_dtype, RG_INPUTS_NORMAL, 200, &t, err, sizeof err), 0);
    const int64_t *pos = t.in[0];
    const float *inv = t.in[1];
    assert_int_equal(pos[0], 0);
    assert_int_equal(pos[255], 255);
    assert_int_equal(pos[256 + 7], 7);
    /* get_inputs' formula (as the dataset writes it): smooth = 1 for short
     * wavelengths, so the fastest frequencies are divided by 8 and the slowest
     * (wavelength > 8192) kept */
    assert_true(inv[0] == 0.125f);
    const double slow = 1.0 / pow(500000.0, 126.0 / 128.0);
    assert_true(fabs(inv[63] - slow) <= 1e-6 * slow);
    assert_true(fabs(inv[10] - 0.125 / pow(500000.0, 20.0 / 128.0)) <= 1e-6);
    rg_tensors_free(&t);
    assert_int_equal(s.op->make(w, s.grad_dtype, RG_INPUTS_POSITIONS, 200, &t, err, sizeof err), 0);
    pos = t.in[0];
    int64_t mx = 0, differ = 0;
    for (int64_t r = 0; r < 16 * 256; r++) {
        if (pos[r] > mx) mx = pos[r];
        assert_true(pos[r] >= 0 && pos[r] <= 131071);
    }
    for (int64_t b = 1; b < 16; b++) differ += pos[b * 256 + 5] != pos[5];
    assert_true(mx >= 131000);
    assert_true(differ >= 14);
    rg_tensors_free(&t);
    rg_suite_free(&s);
}

/* The whole protocol on the CPU through the op table: both suites pass, with
 * the dataset's inputs and with real positions. */
static void test_run_suites(void **state)
{
    (void)state;
    const char *ids[] = {"011", "012"};
    for (int k = 0; k < 2; k++)
        for (int kind = 0; kind < 2; kind++) {
            rg_suite s;
            char err[RG_ERRLEN];
            load(ids[k], &s);
            rg_run_options o;
            rg_run_options_default(&o);
            o.backend = "cpu";
            o.timed = 0;
            o.inputs = (rg_inputs_kind)kind;
            const int idx[] = {0, 4, 6};
            rg_run_result r;
            if (rg_run_suite(&s, idx, 3, &o, &r, err, sizeof err)) fail_msg("%s", err);
            assert_int_equal(r.passed, 3);
            assert_string_equal(r.op, ids[k]);
            assert_non_null(strstr(r.reference, "float64"));
            for (int i = 0; i < 3; i++) assert_true(r.workloads[i].check.max_abs_err <= 0.00196);
            rg_run_result_free(&r);
            /* --kernel: one shipped kernel per forward op (checked before running) */
            o.kernel = 3;
            o.backend = "cuda";
            assert_int_not_equal(rg_run_suite(&s, idx, 3, &o, &r, err, sizeof err), 0);
            rg_suite_free(&s);
        }
}

/* The record: each op's run names its definition and reference, and the ops
 * fall in different comparison groups. */
static void test_record_groups(void **state)
{
    (void)state;
    const char *ids[] = {"011", "012", "014"};
    char keys[3][160];
    for (int k = 0; k < 3; k++) {
        rg_suite s;
        char err[RG_ERRLEN];
        load(ids[k], &s);
        rg_run_options o;
        rg_run_options_default(&o);
        o.backend = "cpu";
        o.warmup = 0;
        o.iterations = 1;
        const int idx[] = {1};
        rg_run_result r;
        if (rg_run_suite(&s, idx, 1, &o, &r, err, sizeof err)) fail_msg("%s", err);
        cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
        if (!m) fail_msg("%s", err);
        rg_manifest mf;
        if (rg_manifest_read(m, &mf, err, sizeof err)) fail_msg("%s", err);
        assert_string_equal(mf.benchmark, s.op->definition);
        snprintf(keys[k], sizeof keys[k], "%s", mf.comparison_key);
        rg_manifest_free(&mf);
        char *text = cJSON_PrintUnformatted(m);
        assert_non_null(strstr(text, s.op->reference));   /* the protocol names the op's reference */
        free(text);
        cJSON_Delete(m);
        rg_run_result_free(&r);
        rg_suite_free(&s);
    }
    assert_string_not_equal(keys[0], keys[1]);
    assert_string_not_equal(keys[0], keys[2]);
    assert_string_not_equal(keys[1], keys[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_values), cmocka_unit_test(test_validation),
        cmocka_unit_test(test_cpu_paths),        cmocka_unit_test(test_suites_load),
        cmocka_unit_test(test_generator_011),    cmocka_unit_test(test_run_suites),
        cmocka_unit_test(test_record_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
