/* SPDX-License-Identifier: Apache-2.0 */
/* test_rope_apply.c -- the apply ops' CPU paths (L1/088 forward, L1/068
 * backward) against their float64 references on small shapes: both layouts,
 * every dtype pair, GQA, shared and per-batch cos/sin, odd head_dims
 * (rope_apply_common.h), each in both styles and with a rotary_dim below
 * head_dim (the rest copied bit for bit); the interleaved reference equal to
 * the rotate-half one on permuted columns; in place equal to out of place; 068 without
 * grad_cos/grad_sin equal to with; one thread equal to all; the f16 rounding
 * the library writes; every refusal; the suites' named axes. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <unistd.h>

#include "harness.h"
#include "test_common.h"

static void *alloc_or_fail(size_t bytes)
{
    void *p = malloc(bytes);
    assert_non_null(p);
    return p;
}

static void *copy_of(const void *src, size_t bytes)
{
    void *p = alloc_or_fail(bytes);
    memcpy(p, src, bytes);
    return p;
}

/* 088: the CPU path within bound, in place and one thread bitwise the same. */
static void forward_case(const ra_data *d, const char *name)
{
    void *qo = alloc_or_fail(d->bytes[RA_Q]), *ko = alloc_or_fail(d->bytes[RA_K]);
    ropegrad_rope_apply_problem p = ra_forward_problem(d, d->in, qo, ko);
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_OK);
    assert_int_equal(ra_count_bad(name, qo, d->s.dtype, d->ref_fwd, d->n_q, 2), 0);
    assert_int_equal(ra_count_bad(name, ko, d->s.dtype, d->ref_fwd + d->n_q, d->n_k, 2), 0);
    assert_false(ra_tail_differs(d, d->in[RA_Q], qo, d->n_q));
    assert_false(ra_tail_differs(d, d->in[RA_K], ko, d->n_k));

    void *in[RA_N];
    memcpy(in, d->in, sizeof in);
    in[RA_Q] = copy_of(d->in[RA_Q], d->bytes[RA_Q]);
    in[RA_K] = copy_of(d->in[RA_K], d->bytes[RA_K]);
    ropegrad_rope_apply_problem ip = ra_forward_problem(d, in, in[RA_Q], in[RA_K]);
    assert_int_equal(ropegrad_rope_apply_cpu(&ip, 1), ROPEGRAD_OK);
    assert_memory_equal(in[RA_Q], qo, d->bytes[RA_Q]);
    assert_memory_equal(in[RA_K], ko, d->bytes[RA_K]);
    free(in[RA_Q]);
    free(in[RA_K]);
    free(qo);
    free(ko);
}

/* 068: all four gradients within bound; in place, one thread, and without
 * grad_cos/grad_sin (q and k NULL) bitwise the same grad_q, grad_k. */
static void backward_case(const ra_data *d, const char *name)
{
    void *gq = alloc_or_fail(d->bytes[RA_Q]), *gk = alloc_or_fail(d->bytes[RA_K]);
    void *gc = alloc_or_fail(d->gcs_bytes), *gs = alloc_or_fail(d->gcs_bytes);
    ropegrad_rope_apply_backward_problem p = ra_backward_problem(d, d->in, gq, gk, gc, gs);
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&p, 0), ROPEGRAD_OK);
    const double *ref = d->ref_bwd;
    assert_int_equal(ra_count_bad(name, gq, d->s.dtype, ref, d->n_q, 2), 0);
    assert_int_equal(ra_count_bad(name, gk, d->s.dtype, ref + d->n_q, d->n_k, 2), 0);
    ref += d->n_q + d->n_k;
    assert_int_equal(ra_count_bad(name, gc, d->s.cos_sin_dtype, ref, d->n_gcs, ra_gcs_terms(d)), 0);
    assert_int_equal(ra_count_bad(name, gs, d->s.cos_sin_dtype, ref + d->n_gcs, d->n_gcs, ra_gcs_terms(d)), 0);
    assert_false(ra_tail_differs(d, d->in[RA_GQ], gq, d->n_q));
    assert_false(ra_tail_differs(d, d->in[RA_GK], gk, d->n_k));

    void *in[RA_N];
    memcpy(in, d->in, sizeof in);
    in[RA_GQ] = copy_of(d->in[RA_GQ], d->bytes[RA_GQ]);
    in[RA_GK] = copy_of(d->in[RA_GK], d->bytes[RA_GK]);
    void *gc1 = alloc_or_fail(d->gcs_bytes), *gs1 = alloc_or_fail(d->gcs_bytes);
    ropegrad_rope_apply_backward_problem ip = ra_backward_problem(d, in, in[RA_GQ], in[RA_GK], gc1, gs1);
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&ip, 1), ROPEGRAD_OK);
    assert_memory_equal(in[RA_GQ], gq, d->bytes[RA_Q]);
    assert_memory_equal(in[RA_GK], gk, d->bytes[RA_K]);
    assert_memory_equal(gc1, gc, d->gcs_bytes);
    assert_memory_equal(gs1, gs, d->gcs_bytes);

    in[RA_Q] = in[RA_K] = NULL;
    ropegrad_rope_apply_backward_problem np = ra_backward_problem(d, in, in[RA_GQ], in[RA_GK], NULL, NULL);
    memcpy(in[RA_GQ], d->in[RA_GQ], d->bytes[RA_GQ]);
    memcpy(in[RA_GK], d->in[RA_GK], d->bytes[RA_GK]);
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&np, 0), ROPEGRAD_OK);
    assert_memory_equal(in[RA_GQ], gq, d->bytes[RA_Q]);
    assert_memory_equal(in[RA_GK], gk, d->bytes[RA_K]);
    free(in[RA_GQ]);
    free(in[RA_GK]);
    free(gc1);
    free(gs1);
    free(gq);
    free(gk);
    free(gc);
    free(gs);
}

static void test_cases(void **state)
{
    (void)state;
    for (int i = 0; i < RA_N_CASES; i++) {
        char name[64];
        snprintf(name, sizeof name, "case %d", i);
        ra_data d;
        assert_int_equal(ra_make(&d, &ra_cases[i], 100 + (uint64_t)i), 0);
        forward_case(&d, name);
        backward_case(&d, name);
        ra_free(&d);
    }
}

/* Every case in the interleaved style and with partial rotary (the
 * rotate-half full-row case is test_cases'). */
static void test_styles(void **state)
{
    (void)state;
    for (int i = 0; i < RA_N_CASES; i++)
        for (int v = 1; v < 4; v++) {
            const ra_style st = ra_variant(ra_cases[i].D, v);
            if (st.style == ROPEGRAD_ROTARY_HALF && st.R == 0) continue;   /* head_dim 2: no partial rotary */
            char name[64];
            snprintf(name, sizeof name, "case %d style %d rotary_dim %d", i, (int)st.style, (int)st.R);
            ra_data d;
            assert_int_equal(ra_make_styled(&d, &ra_cases[i], st, 300 + (uint64_t)(4 * i + v)), 0);
            forward_case(&d, name);
            backward_case(&d, name);
            ra_free(&d);
        }
}

/* Column j of a row of L elements, rotary_dim R: where the rotate-half style
 * keeps what the interleaved style has at j (2i -> i, 2i+1 -> i + R/2). */
static int64_t half_column(int64_t j, int64_t R)
{
    return j >= R ? j : (j & 1 ? j / 2 + R / 2 : j / 2);
}

/* src's rows of L elements (e bytes each) with their columns moved to half_column. */
static void *permuted(const void *src, int64_t n, int64_t L, int64_t R, size_t e)
{
    char *p = alloc_or_fail((size_t)n * e);
    for (int64_t row = 0; row < n / L; row++)
        for (int64_t j = 0; j < L; j++)
            memcpy(p + (size_t)(row * L + half_column(j, R)) * e, (const char *)src + (size_t)(row * L + j) * e, e);
    return p;
}

/* 1 when the doubles of ref (rows of L) differ from half's at the permuted columns. */
static int ref_differs(const double *ref, const double *half, int64_t n, int64_t L, int64_t R)
{
    for (int64_t row = 0; row < n / L; row++)
        for (int64_t j = 0; j < L; j++)
            if (ref[row * L + j] != half[row * L + half_column(j, R)]) return 1;
    return 0;
}

/* The references' interleaved style, checked against their rotate-half one:
 * the same problem with every row's pairs (2i, 2i+1) moved to (i, i + R/2),
 * in q, k, their gradients and the tables, gives the same doubles, moved the
 * same way (the same products and sums in the same order). */
static void test_reference_styles_agree(void **state)
{
    (void)state;
    for (int i = 0; i < RA_N_CASES; i++)
        for (int v = 1; v < 4; v += 2) {
            ra_data d, h;
            assert_int_equal(ra_make_styled(&d, &ra_cases[i], ra_variant(ra_cases[i].D, v), 700 + (uint64_t)i), 0);
            const int64_t D = d.s.head_dim, R = rg_apply_rotary_dim(&d.s);
            h = d;
            h.s.style = ROPEGRAD_ROTARY_HALF;
            for (int t = 0; t < RA_N; t++)
                h.in[t] = permuted(d.in[t], t >= RA_COS ? d.n_gcs : t == RA_Q || t == RA_GQ ? d.n_q : d.n_k,
                                   t >= RA_COS ? R : D, R, ropegrad_dtype_size(t >= RA_COS ? d.s.cos_sin_dtype : d.s.dtype));
            h.ref_fwd = alloc_or_fail((size_t)(d.n_q + d.n_k) * sizeof(double));
            h.ref_bwd = alloc_or_fail((size_t)(d.n_q + d.n_k + 2 * d.n_gcs) * sizeof(double));
            ropegrad_rope_apply_problem f = ra_forward_problem(&h, h.in, NULL, NULL);
            ropegrad_rope_apply_backward_problem b = ra_backward_problem(&h, h.in, NULL, NULL, NULL, NULL);
            assert_int_equal(ropegrad_rope_apply_reference(&f, h.ref_fwd), ROPEGRAD_OK);
            assert_int_equal(ropegrad_rope_apply_backward_reference(&b, h.ref_bwd), ROPEGRAD_OK);
            assert_false(ref_differs(d.ref_fwd, h.ref_fwd, d.n_q + d.n_k, D, R));
            assert_false(ref_differs(d.ref_bwd, h.ref_bwd, d.n_q + d.n_k, D, R));
            assert_false(ref_differs(d.ref_bwd + d.n_q + d.n_k, h.ref_bwd + d.n_q + d.n_k, 2 * d.n_gcs, R, R));
            ra_free(&h);
            ra_free(&d);
        }
}

/* rg_f16_rn against the binary16 grid: every finite value maps to itself, the
 * midpoint between neighbours to the even one, a float either side of it to
 * that side's neighbour, and beyond the largest finite value's midpoint to Inf. */
static void test_f16_rounding(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x7c00u; h++) {
        const float f = ropegrad_f16_to_float((uint16_t)h), next = ropegrad_f16_to_float((uint16_t)(h + 1));
        assert_int_equal(rg_f16_rn(f), h);
        assert_int_equal(rg_f16_rn(-f), h | 0x8000u);
        if (h == 0x7bffu) break;                 /* next is Inf: its midpoint below */
        const float mid = f + (next - f) / 2;   /* exact in float32 */
        assert_int_equal(rg_f16_rn(mid), (h & 1) ? h + 1 : h);
        assert_int_equal(rg_f16_rn(nextafterf(mid, 0.0f)), h);
        assert_int_equal(rg_f16_rn(nextafterf(mid, INFINITY)), h + 1);
    }
    assert_int_equal(rg_f16_rn(65520.0f), 0x7c00u);   /* 65504's odd mantissa: to even, Inf */
    assert_int_equal(rg_f16_rn(nextafterf(65520.0f, 0.0f)), 0x7bffu);
    assert_int_equal(rg_f16_rn(INFINITY), 0x7c00u);
    assert_int_equal(rg_f16_rn(-1e9f), 0xfc00u);
    assert_true((rg_f16_rn(NAN) & 0x7fffu) > 0x7c00u);
}

static void test_refusals(void **state)
{
    (void)state;
    float q[2 * 4 * 8], k[2 * 2 * 8], c[2 * 8], s[2 * 8], qo[2 * 4 * 8], ko[2 * 2 * 8];
    memset(q, 0, sizeof q);
    memset(k, 0, sizeof k);
    memset(c, 0, sizeof c);
    memset(s, 0, sizeof s);
    const ropegrad_rope_apply_shape sh = {1, 2, 8, 4, 2, ROPEGRAD_LAYOUT_BHSD, ROPEGRAD_F32, ROPEGRAD_F32, 0, ROPEGRAD_ROTARY_HALF, 0};
    const ropegrad_rope_apply_problem ok = {sh, q, k, c, s, qo, ko};
    ropegrad_rope_apply_problem p = ok;
    assert_int_equal(ropegrad_rope_apply_validate(&p), ROPEGRAD_OK);
    assert_int_equal(ropegrad_rope_apply_cpu(NULL, 0), ROPEGRAD_ERR_NULL_PROBLEM);
    assert_int_equal(ropegrad_rope_apply_cpu(&p, -1), ROPEGRAD_ERR_BAD_THREADS);
    p.shape.num_kv_heads = 0;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_BAD_SIZE);
    p = ok;
    p.shape.head_dim = 7;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_BAD_HEAD_DIM);
    p = ok;
    p.shape.cos_sin_dtype = (ropegrad_dtype)9;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_BAD_DTYPE);
    p = ok;
    p.shape.layout = (ropegrad_layout)2;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_UNSUPPORTED);
    p = ok;
    p.shape.cos_sin_batch_stride = 8;   /* neither 0 nor S*D */
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_UNSUPPORTED);
    p.shape.cos_sin_batch_stride = -16;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_BAD_STRIDE);
    p = ok;
    p.shape.style = (ropegrad_rotary_style)2;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_UNSUPPORTED);
    p = ok;
    p.shape.rotary_dim = 3;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_BAD_HEAD_DIM);
    p.shape.rotary_dim = 10;   /* beyond head_dim 8 */
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_BAD_HEAD_DIM);
    p.shape.rotary_dim = -2;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_BAD_HEAD_DIM);
    p.shape.rotary_dim = 4;
    p.shape.style = ROPEGRAD_ROTARY_INTERLEAVED;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_OK);
    p.shape.cos_sin_batch_stride = 16;   /* S*D, not S*R */
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_UNSUPPORTED);
    p.shape.cos_sin_batch_stride = 8;    /* S*R */
    assert_int_equal(ropegrad_rope_apply_validate(&p), ROPEGRAD_OK);
    p = ok;
    p.shape.batch_size = INT64_MAX / 4;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_OVERFLOW);
    p = ok;
    p.sin = NULL;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_NULL_POINTER);
    p = ok;
    p.k_out = NULL;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_NULL_OUTPUT);
    p = ok;
    p.cos = (const char *)c + 2;
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_MISALIGNED);
    p = ok;
    p.q_out = q + 8;   /* overlaps q without being q: refused, q_out == q is in place */
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_OVERLAP);
    p.q_out = k;       /* another input */
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_OVERLAP);
    p.q_out = q;
    p.k_out = q;       /* the other output */
    assert_int_equal(ropegrad_rope_apply_cpu(&p, 0), ROPEGRAD_ERR_OVERLAP);
    p = ok;
    double ref[64];
    p.q_out = p.k_out = NULL;   /* the reference writes elsewhere */
    assert_int_equal(ropegrad_rope_apply_reference(&p, NULL), ROPEGRAD_ERR_NULL_OUTPUT);
    p.shape.num_heads = 1;
    p.shape.num_kv_heads = 1;
    assert_int_equal(ropegrad_rope_apply_reference(&p, ref), ROPEGRAD_OK);

    float gc[2 * 8], gs[2 * 8];
    const ropegrad_rope_apply_backward_problem bok = {sh, q, k, qo, ko, c, s, q, k, gc, gs};   /* in place */
    ropegrad_rope_apply_backward_problem b = bok;
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&b, 0), ROPEGRAD_OK);
    b.grad_sin = NULL;
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&b, 0), ROPEGRAD_ERR_NULL_OUTPUT);
    b = bok;
    b.q = NULL;   /* needed for grad_cos */
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&b, 0), ROPEGRAD_ERR_NULL_POINTER);
    b = bok;
    b.grad_cos = c;   /* grad_cos never in place */
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&b, 0), ROPEGRAD_ERR_OVERLAP);
    b = bok;
    b.grad_k = qo;    /* the forward's q */
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&b, 0), ROPEGRAD_ERR_OVERLAP);
    b = bok;
    b.shape.rotary_dim = 5;
    assert_int_equal(ropegrad_rope_apply_backward_cpu(&b, 0), ROPEGRAD_ERR_BAD_HEAD_DIM);
    b = bok;
    b.shape.style = (ropegrad_rotary_style)-1;
    assert_int_equal(ropegrad_rope_apply_backward_validate(&b), ROPEGRAD_ERR_UNSUPPORTED);
    b = bok;
    b.q = b.k = NULL;
    assert_int_equal(ropegrad_rope_apply_backward_reference(&b, ref), ROPEGRAD_ERR_NULL_POINTER);
#ifndef ROPEGRAD_HAVE_CUDA
    p = ok;
    assert_int_equal(ropegrad_rope_apply_cuda(&p, NULL), ROPEGRAD_ERR_NO_CUDA);
    b = bok;
    assert_int_equal(ropegrad_rope_apply_backward_cuda(&b, NULL), ROPEGRAD_ERR_NO_CUDA);
#endif
    p = ok;
    p.sin = NULL;
    assert_int_equal(ropegrad_rope_apply_cuda(&p, NULL), ROPEGRAD_ERR_NULL_POINTER);   /* validated first */
    assert_string_not_equal(ropegrad_strerror(ROPEGRAD_ERR_UNSUPPORTED), ropegrad_strerror(-1));
}

/* ---- the harness: the suites' named axes ---- */

/* axes.<name> of workload.jsonl's first line in suite id. */
static int64_t first_workload_axis(const char *id, const char *name)
{
    char path[4096], line[4096];
    char dir[4000];
    rg_op_suite_dir(rg_op_by_id(id), RG_SOURCE_DIR "/suites", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/workload.jsonl", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    cJSON *root = cJSON_Parse(line);
    assert_non_null(root);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "axes"), name);
    assert_true(cJSON_IsNumber(v));
    const int64_t x = (int64_t)v->valuedouble;
    cJSON_Delete(root);
    return x;
}

static void test_suites_axes(void **state)
{
    (void)state;
    const char *ids[] = {"088", "068"};
    for (int i = 0; i < 2; i++) {
        char dir[4096], err[RG_ERRLEN];
        rg_suite s;
        rg_op_suite_dir(rg_op_by_id(ids[i]), RG_SOURCE_DIR "/suites", dir, sizeof dir);
        if (rg_suite_load(dir, &s, err, sizeof err)) fail_msg("%s", err);
        assert_string_equal(s.op->id, ids[i]);
        assert_int_equal(s.n_workloads, 16);
        assert_true(s.have_figures);
        assert_int_equal(s.workloads[0].axes[0], first_workload_axis(ids[i], "num_heads"));
        assert_int_equal(s.workloads[0].axes[1], first_workload_axis(ids[i], "num_kv_heads"));
        rg_suite_free(&s);
    }
}

/* A run carries the heads axes to its results: the workload result, the
 * table's sizes and the run's JSON (num_heads, num_kv_heads beside B, S, D). */
static void test_run_shows_heads(void **state)
{
    (void)state;
    char dir[4096], err[RG_ERRLEN], path[] = "/tmp/rg_apply_runXXXXXX";
    rg_suite s;
    snprintf(dir, sizeof dir, "%s/suites/088-rope_apply", RG_SOURCE_DIR);
    if (rg_suite_load(dir, &s, err, sizeof err)) fail_msg("%s", err);
    rg_run_options o;
    rg_run_options_default(&o);
    o.backend = "cpu";
    o.timed = 0;
    o.verbose = -1;
    const int first = 0;
    rg_run_result r;
    if (rg_run_suite(&s, &first, 1, &o, &r, err, sizeof err)) fail_msg("%s", err);
    const int64_t hq = s.workloads[0].axes[0], hk = s.workloads[0].axes[1];
    assert_int_equal(r.workloads[0].axes[0], hq);
    assert_int_equal(r.workloads[0].axes[1], hk);
    char want[96];
    snprintf(want, sizeof want, "num_heads=%lld num_kv_heads=%lld", (long long)hq, (long long)hk);
    assert_non_null(strstr(r.workloads[0].sizes, want));
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    if (rg_run_write_json(&r, path, err, sizeof err)) fail_msg("%s", err);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    unlink(path);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "workloads"), 0);
    assert_int_equal((int64_t)cJSON_GetObjectItemCaseSensitive(w, "num_heads")->valuedouble, hq);
    assert_int_equal((int64_t)cJSON_GetObjectItemCaseSensitive(w, "num_kv_heads")->valuedouble, hk);
    cJSON_Delete(root);
    rg_run_result_free(&r);
    rg_suite_free(&s);
}

/* A workload without a named axis of its op is refused with the field's name. */
static void test_suite_missing_axis(void **state)
{
    (void)state;
    char dir[] = "/tmp/rg_apply_axisXXXXXX", path[4200], src[4096], err[RG_ERRLEN];
    assert_non_null(mkdtemp(dir));
    snprintf(src, sizeof src, "%s/suites/088-rope_apply/definition.json", RG_SOURCE_DIR);
    snprintf(path, sizeof path, "%s/definition.json", dir);
    size_t n = 0;
    FILE *in = fopen(src, "rb"), *out = fopen(path, "wb");
    assert_true(in && out);
    char buf[8192];
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
    snprintf(path, sizeof path, "%s/workload.jsonl", dir);
    out = fopen(path, "w");
    assert_non_null(out);
    fputs("{\"uuid\": \"u\", \"axes\": {\"batch_size\": 1, \"num_heads\": 2, \"seq_len\": 3}, "
          "\"tolerance\": {\"max_atol\": 1e-05, \"max_rtol\": 1e-05}}\n",
          out);
    fclose(out);
    rg_suite s;
    assert_int_not_equal(rg_suite_load(dir, &s, err, sizeof err), 0);
    assert_non_null(strstr(err, "axes.num_kv_heads"));
    unlink(path);
    snprintf(path, sizeof path, "%s/definition.json", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),          cmocka_unit_test(test_styles),
        cmocka_unit_test(test_reference_styles_agree), cmocka_unit_test(test_f16_rounding),
        cmocka_unit_test(test_refusals),       cmocka_unit_test(test_suites_axes),
        cmocka_unit_test(test_suite_missing_axis), cmocka_unit_test(test_run_shows_heads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
