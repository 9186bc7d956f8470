/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_badinput.c -- the bad-input matrix (issue 6), CPU only.
 *
 * Every case is something a caller or a downloaded file can hand ropegrad:
 * non-finite tensor values, impossible or overflowing sizes, NULL and
 * misaligned pointers, a suite that points outside its folder or is far too
 * big, an output path that cannot be written. Each must give an error code
 * or a failed check with a reason -- never a crash, unbounded memory or a
 * partial file. The sanitizer build (scripts/sanitize.sh) runs this too.
 */
#define _GNU_SOURCE   /* mkdtemp, symlink, mkfifo, ftruncate */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "record.h"
#include "ropegrad.h"

/* Under ASan an impossible malloc aborts the process by default; ropegrad
 * must see NULL as it would in a normal build, and report it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* ---- a small problem over owned buffers ------------------------------------------ */

enum { B = 2, S = 3, D = 8, H = D / 2 };

typedef struct tcase {
    ropegrad_dtype dt;
    void *gc, *gs;
    float emb[B * S * D], inv[B * H], out[B * S];
    double ref[B * S];
    ropegrad_rope_backward_problem p;
} tcase;

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);   /* the test values are exact in bf16 */
}

/* IEEE half of a small value that is exact in half (k/8, |k| < 64). */
static uint16_t to_f16(float f)
{
    if (f == 0) return 0;
    uint16_t sign = f < 0 ? 0x8000 : 0;
    float a = fabsf(f);
    int e = 0;
    while (a >= 2) a /= 2, e++;
    while (a < 1) a *= 2, e--;
    return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)((a - 1) * 1024));
}

static void set_grad(tcase *t, void *g, int64_t i, float v)
{
    if (t->dt == ROPEGRAD_F32) ((float *)g)[i] = v;
    else if (t->dt == ROPEGRAD_BF16) ((uint16_t *)g)[i] = to_bf16(v);
    else ((uint16_t *)g)[i] = to_f16(v);
}

/* Bit patterns of NaN and +Inf in the gradient dtype. */
static void poison_grad(tcase *t, void *g, int64_t i, int nan)
{
    if (t->dt == ROPEGRAD_F32) ((float *)g)[i] = nan ? NAN : INFINITY;
    else if (t->dt == ROPEGRAD_BF16) ((uint16_t *)g)[i] = nan ? 0x7FC0 : 0x7F80;
    else ((uint16_t *)g)[i] = nan ? 0x7E00 : 0x7C00;
}

static void make_case(tcase *t, ropegrad_dtype dt)
{
    memset(t, 0, sizeof *t);
    t->dt = dt;
    size_t esz = ropegrad_dtype_size(dt);
    t->gc = calloc(B * S * D, esz);
    t->gs = calloc(B * S * D, esz);
    assert_non_null(t->gc);
    assert_non_null(t->gs);
    for (int i = 0; i < B * S * D; i++) {
        set_grad(t, t->gc, i, (float)((i % 7) - 3) / 8);
        set_grad(t, t->gs, i, (float)((i % 5) - 2) / 8);
        t->emb[i] = 0.25f * (float)(i % 11);
    }
    for (int i = 0; i < B * H; i++) t->inv[i] = 1.0f / (float)(1 + i);
    t->p = (ropegrad_rope_backward_problem){.batch_size = B, .seq_len = S, .head_dim = D, .grad_dtype = dt,
                              .grad_cos = t->gc, .grad_sin = t->gs, .emb = t->emb, .inv_freq = t->inv,
                              .inv_freq_batch_stride = H, .attention_scaling = 0.125f,
                              .grad_position_ids = t->out};
}

static void free_case(tcase *t)
{
    free(t->gc);
    free(t->gs);
}

/* Runs the CPU path and the reference, then the protocol's check. */
static void run_and_check(tcase *t, rg_check *res)
{
    assert_int_equal(ropegrad_rope_backward_cpu(&t->p, 1), ROPEGRAD_OK);
    assert_int_equal(ropegrad_rope_backward_reference(&t->p, t->ref), ROPEGRAD_OK);
    rg_check_output(t->out, t->ref, B * S, 1e-5, 1e-5, 0.99, NAN, res);
}

/* ---- 1. NaN / Inf in each input tensor --------------------------------------------- */

/* Row r = (b=1, s=1) gets the bad value; the result must flag it, never crash. */
enum { BAD_ROW = 1 * S + 1 };

static void expect_flagged(tcase *t, const char *what)
{
    rg_check res;
    run_and_check(t, &res);
    if (res.pass || !strstr(res.reason, "NaN/Inf"))
        fail_msg("%s: check passed=%d reason '%s'", what, res.pass, res.reason);
    assert_false(isfinite(t->out[BAD_ROW]));
    assert_false(isfinite(t->ref[BAD_ROW]));
    /* The other batch is untouched: one bad value does not spread. */
    for (int r = 0; r < S; r++) assert_true(isfinite(t->out[r]));
}

static void test_nonfinite_grads(void **state)
{
    static const ropegrad_dtype dts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    for (size_t k = 0; k < 3; k++) {
        for (int nan = 0; nan <= 1; nan++) {
            for (int which = 0; which < 2; which++) {
                /* d = 1 (first half) and d = H + 2 (the second half is read too). */
                for (int d = 1; d < D; d += H + 1) {
                    tcase t;
                    make_case(&t, dts[k]);
                    poison_grad(&t, which ? t.gs : t.gc, (int64_t)BAD_ROW * D + d, nan);
                    char what[96];
                    snprintf(what, sizeof what, "dtype %d %s %s[%d]", (int)dts[k], nan ? "NaN" : "Inf",
                             which ? "grad_sin" : "grad_cos", d);
                    expect_flagged(&t, what);
                    free_case(&t);
                }
            }
        }
    }
}

static void test_nonfinite_emb(void **state)
{
    for (int nan = 0; nan <= 1; nan++) {
        tcase t;
        make_case(&t, ROPEGRAD_BF16);
        t.emb[BAD_ROW * D + 2] = nan ? NAN : INFINITY;   /* sin/cos(Inf) is NaN */
        expect_flagged(&t, nan ? "NaN emb" : "Inf emb");
        free_case(&t);
        /* emb's second half is never read (documented): a NaN there changes nothing. */
        make_case(&t, ROPEGRAD_BF16);
        rg_check res;
        run_and_check(&t, &res);
        float clean[B * S];
        memcpy(clean, t.out, sizeof clean);
        t.emb[BAD_ROW * D + H + 1] = nan ? NAN : INFINITY;
        run_and_check(&t, &res);
        assert_true(res.pass);
        assert_memory_equal(clean, t.out, sizeof clean);
        free_case(&t);
    }
}

static void test_nonfinite_inv_freq(void **state)
{
    for (int nan = 0; nan <= 1; nan++) {
        tcase t;
        make_case(&t, ROPEGRAD_F16);
        t.inv[1 * H + 3] = nan ? NAN : INFINITY;   /* batch 1: every row of it */
        rg_check res;
        run_and_check(&t, &res);
        assert_false(res.pass);
        assert_non_null(strstr(res.reason, "NaN/Inf"));
        for (int s = 0; s < S; s++) assert_false(isfinite(t.out[S + s]));
        for (int s = 0; s < S; s++) assert_true(isfinite(t.out[s]));
        free_case(&t);
    }
}

/* The check itself: NaN/Inf only in the output, or only in the reference. */
static void test_check_reports_nonfinite(void **state)
{
    float out[4] = {1, 2, 3, 4};
    double ref[4] = {1, 2, 3, 4};
    rg_check res;
    rg_check_output(out, ref, 4, 1e-5, 1e-5, 0.99, NAN, &res);
    assert_true(res.pass);
    out[2] = -INFINITY;
    rg_check_output(out, ref, 4, 1e-5, 1e-5, 0.0, NAN, &res);   /* even with ratio 0 required */
    assert_false(res.pass);
    assert_int_equal(res.n_nonfinite, 1);
    assert_non_null(strstr(res.reason, "output has 1 NaN/Inf"));
    out[2] = 3;
    ref[0] = NAN;
    rg_check_output(out, ref, 4, 1e-5, 1e-5, 0.0, NAN, &res);
    assert_false(res.pass);
    assert_non_null(strstr(res.reason, "reference"));
    /* NULL and empty inputs are a failed check with a reason, not a crash. */
    rg_check_output(NULL, ref, 4, 1e-5, 1e-5, 0.99, NAN, &res);
    assert_false(res.pass);
    assert_true(res.reason[0] != 0);
    rg_check_output(out, ref, 0, 1e-5, 1e-5, 0.99, NAN, &res);
    assert_false(res.pass);
    assert_true(res.reason[0] != 0);
    rg_check_output(out, ref, 4, 1e-5, 1e-5, 0.99, NAN, NULL);   /* no result to fill: no-op */
}

/* ---- 2. sizes ----------------------------------------------------------------------- */

static void expect_size_error(int64_t b, int64_t s, int64_t d, int64_t stride, int want)
{
    tcase t;
    make_case(&t, ROPEGRAD_BF16);
    t.p.batch_size = b;
    t.p.seq_len = s;
    t.p.head_dim = d;
    t.p.inv_freq_batch_stride = stride;
    if (want == ROPEGRAD_OK) {
        /* A valid huge shape on the small buffers: only validated, never run,
         * but its declared byte ranges must not overlap (ROPEGRAD_ERR_OVERLAP),
         * so it gets addresses far apart (never dereferenced). */
        t.p.grad_cos = (const void *)(uintptr_t)((uint64_t)1 << 12);
        t.p.grad_sin = (const void *)(uintptr_t)(((uint64_t)1 << 61) + (1 << 12));
        t.p.emb = (const float *)(uintptr_t)(((uint64_t)1 << 62) + (1 << 12));
        t.p.grad_position_ids = (float *)(uintptr_t)(((uint64_t)1 << 63) + (1 << 12));
        t.p.inv_freq = (const float *)(uintptr_t)(((uint64_t)1 << 63) + ((uint64_t)1 << 61) + (1 << 12));
    }
    int v = ropegrad_rope_backward_validate(&t.p);
    if (v != want)
        fail_msg("B=%lld S=%lld D=%lld stride=%lld: validate %d (%s), expected %d", (long long)b, (long long)s,
                 (long long)d, (long long)stride, v, ropegrad_strerror(v), want);
    /* Every entry point runs the same checks before touching a tensor. */
    if (want != ROPEGRAD_OK) {
        assert_int_equal(ropegrad_rope_backward_cpu(&t.p, 1), want);
        assert_int_equal(ropegrad_rope_backward_reference(&t.p, t.ref), want);
        assert_int_equal(ropegrad_rope_backward_cuda(&t.p, NULL) == want ||
                             ropegrad_rope_backward_cuda(&t.p, NULL) == ROPEGRAD_ERR_NO_CUDA,
                         1);
    }
    free_case(&t);
}

static void test_bad_sizes(void **state)
{
    const int64_t big = INT64_MAX;
    /* zero and negative */
    expect_size_error(0, S, D, H, ROPEGRAD_ERR_BAD_SIZE);
    expect_size_error(B, 0, D, H, ROPEGRAD_ERR_BAD_SIZE);
    expect_size_error(-1, S, D, H, ROPEGRAD_ERR_BAD_SIZE);
    expect_size_error(B, INT64_MIN, D, H, ROPEGRAD_ERR_BAD_SIZE);
    /* head_dim: odd, too small, too large, negative */
    expect_size_error(B, S, 7, H, ROPEGRAD_ERR_BAD_HEAD_DIM);
    expect_size_error(B, S, 1, H, ROPEGRAD_ERR_BAD_HEAD_DIM);
    expect_size_error(B, S, 0, H, ROPEGRAD_ERR_BAD_HEAD_DIM);
    expect_size_error(B, S, -8, H, ROPEGRAD_ERR_BAD_HEAD_DIM);
    expect_size_error(B, S, ROPEGRAD_MAX_HEAD_DIM + 2, H, ROPEGRAD_ERR_BAD_HEAD_DIM);
    expect_size_error(B, S, ROPEGRAD_MAX_HEAD_DIM + 1, H, ROPEGRAD_ERR_BAD_HEAD_DIM);
    /* products that overflow int64: B*S, B*S*D, B*S*D*4 bytes */
    expect_size_error(big, 2, D, H, ROPEGRAD_ERR_OVERFLOW);
    expect_size_error((int64_t)1 << 32, (int64_t)1 << 32, D, H, ROPEGRAD_ERR_OVERFLOW);
    expect_size_error((int64_t)1 << 30, (int64_t)1 << 30, ROPEGRAD_MAX_HEAD_DIM, H, ROPEGRAD_ERR_OVERFLOW);
    expect_size_error((int64_t)1 << 31, (int64_t)1 << 30, 2, H, ROPEGRAD_ERR_OVERFLOW);   /* 2^61*2*4 bytes */
    /* the inv_freq stride: negative, or so large the last batch's offset overflows */
    expect_size_error(B, S, D, -1, ROPEGRAD_ERR_BAD_STRIDE);
    expect_size_error(B, S, D, big, ROPEGRAD_ERR_OVERFLOW);
    expect_size_error(B, S, D, big / 2, ROPEGRAD_ERR_OVERFLOW);
    /* Huge but representable: a valid description (validate touches no tensor). */
    expect_size_error((int64_t)1 << 20, (int64_t)1 << 20, 2, 1, ROPEGRAD_OK);
    expect_size_error(B, S, D, 0, ROPEGRAD_OK);   /* stride 0: batches share inv_freq */
}

static void test_bad_scalars(void **state)
{
    tcase t;
    make_case(&t, ROPEGRAD_BF16);
    t.p.grad_dtype = (ropegrad_dtype)7;
    assert_int_equal(ropegrad_rope_backward_validate(&t.p), ROPEGRAD_ERR_BAD_DTYPE);
    t.p.grad_dtype = (ropegrad_dtype)-1;
    assert_int_equal(ropegrad_rope_backward_cpu(&t.p, 1), ROPEGRAD_ERR_BAD_DTYPE);
    assert_int_equal(ropegrad_dtype_size((ropegrad_dtype)-1), 0);
    t.p.grad_dtype = ROPEGRAD_BF16;
    t.p.attention_scaling = NAN;
    assert_int_equal(ropegrad_rope_backward_cpu(&t.p, 1), ROPEGRAD_ERR_NONFINITE_SCALE);
    t.p.attention_scaling = -INFINITY;
    assert_int_equal(ropegrad_rope_backward_validate(&t.p), ROPEGRAD_ERR_NONFINITE_SCALE);
    t.p.attention_scaling = 1;
    assert_int_equal(ropegrad_rope_backward_cpu(&t.p, -1), ROPEGRAD_ERR_BAD_THREADS);
    assert_int_equal(ropegrad_rope_backward_cpu(&t.p, 1), ROPEGRAD_OK);
    /* Every status has a message, unknown ones too. */
    for (int c = -2; c <= ROPEGRAD_ERR__COUNT + 2; c++) {
        const char *m = ropegrad_strerror(c);
        assert_non_null(m);
        assert_true(m[0] != 0);
    }
    free_case(&t);
}

/* The harness refuses or reports what it cannot allocate: bounded memory. */
static void test_huge_workload_inputs(void **state)
{
    rg_workload w = {.index = 0, .batch_size = (int64_t)1 << 20, .seq_len = (int64_t)1 << 20, .head_dim = 128,
                     .attention_scaling = 1};
    rg_inputs in;
    char err[RG_ERRLEN] = "";
    /* 2^40 rows * 128 * (2+2+4) bytes = 2^50 bytes: no machine has it. */
    assert_int_not_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 1, &in, err, sizeof err), 0);
    assert_non_null(strstr(err, "out of memory"));
    assert_null(strchr(err, '\n'));
    w.batch_size = INT64_MAX / 2;
    w.seq_len = 4;
    err[0] = 0;
    assert_int_not_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 1, &in, err, sizeof err), 0);
    assert_non_null(strstr(err, "overflows"));
    w.batch_size = 0;
    assert_int_not_equal(rg_inputs_make(&w, ROPEGRAD_BF16, RG_INPUTS_NORMAL, 1, &in, err, sizeof err), 0);
}

/* ---- 3. NULL and misaligned pointers ------------------------------------------------ */

static void test_null_pointers(void **state)
{
    double ref[B * S];
    assert_int_equal(ropegrad_rope_backward_validate(NULL), ROPEGRAD_ERR_NULL_PROBLEM);
    assert_int_equal(ropegrad_rope_backward_cpu(NULL, 0), ROPEGRAD_ERR_NULL_PROBLEM);
    assert_int_equal(ropegrad_rope_backward_reference(NULL, ref), ROPEGRAD_ERR_NULL_PROBLEM);
    int c = ropegrad_rope_backward_cuda(NULL, NULL);
    assert_true(c == ROPEGRAD_ERR_NULL_PROBLEM || c == ROPEGRAD_ERR_NO_CUDA);
    for (int which = 0; which < 5; which++) {
        tcase t;
        make_case(&t, ROPEGRAD_BF16);
        switch (which) {
        case 0: t.p.grad_cos = NULL; break;
        case 1: t.p.grad_sin = NULL; break;
        case 2: t.p.emb = NULL; break;
        case 3: t.p.inv_freq = NULL; break;
        case 4: t.p.grad_position_ids = NULL; break;
        }
        int want = which == 4 ? ROPEGRAD_ERR_NULL_OUTPUT : ROPEGRAD_ERR_NULL_POINTER;
        assert_int_equal(ropegrad_rope_backward_validate(&t.p), want);
        assert_int_equal(ropegrad_rope_backward_cpu(&t.p, 1), want);
        c = ropegrad_rope_backward_cuda(&t.p, NULL);
        assert_true(c == want || c == ROPEGRAD_ERR_NO_CUDA);
        /* The reference never reads the output pointer, but needs its own. */
        if (which == 4) assert_int_equal(ropegrad_rope_backward_reference(&t.p, t.ref), ROPEGRAD_OK);
        else assert_int_equal(ropegrad_rope_backward_reference(&t.p, t.ref), want);
        free_case(&t);
    }
    tcase t;
    make_case(&t, ROPEGRAD_BF16);
    assert_int_not_equal(ropegrad_rope_backward_reference(&t.p, NULL), ROPEGRAD_OK);
    free_case(&t);

    char err[RG_ERRLEN] = "";
    rg_suite s;
    assert_int_not_equal(rg_suite_load(NULL, &s, err, sizeof err), 0);
    assert_true(err[0] != 0);
    assert_int_not_equal(rg_suite_load("", &s, err, sizeof err), 0);
    assert_int_not_equal(rg_suite_load(RG_SOURCE_DIR "/suites/014-rope_backward", NULL, err, sizeof err), 0);
    assert_int_not_equal(rg_write_file_atomic(NULL, "x", 1, err, sizeof err), 0);
    assert_int_not_equal(rg_run_write_json(NULL, "/tmp/x.json", err, sizeof err), 0);
    rg_suite_free(NULL);
}

/* Pointers one byte (or, for 4-byte types, two bytes) off their element
 * alignment: rejected with ROPEGRAD_ERR_MISALIGNED by every entry point, so
 * no path ever issues an unaligned (vector) load. */
static void test_misaligned_pointers(void **state)
{
    static const ropegrad_dtype dts[] = {ROPEGRAD_BF16, ROPEGRAD_F16, ROPEGRAD_F32};
    for (size_t k = 0; k < 3; k++) {
        size_t esz = ropegrad_dtype_size(dts[k]);
        for (int which = 0; which < 5; which++) {
            for (size_t off = 1; off < 4; off++) {
                if (which < 2 && off % esz == 0) continue;   /* aligned for this dtype */
                if (which >= 2 && off % 4 == 0) continue;
                tcase t;
                make_case(&t, dts[k]);
                /* Room for the shifted view inside one allocation. */
                size_t bytes = (size_t)B * S * D * 4 + 16;
                unsigned char *buf = malloc(bytes);
                assert_non_null(buf);
                memset(buf, 0, bytes);
                switch (which) {
                case 0: t.p.grad_cos = buf + off; break;
                case 1: t.p.grad_sin = buf + off; break;
                case 2: t.p.emb = (const float *)(const void *)(buf + off); break;
                case 3: t.p.inv_freq = (const float *)(const void *)(buf + off); break;
                case 4: t.p.grad_position_ids = (float *)(void *)(buf + off); break;
                }
                assert_int_equal(ropegrad_rope_backward_validate(&t.p), ROPEGRAD_ERR_MISALIGNED);
                assert_int_equal(ropegrad_rope_backward_cpu(&t.p, 1), ROPEGRAD_ERR_MISALIGNED);
                int c = ropegrad_rope_backward_cuda(&t.p, NULL);
                assert_true(c == ROPEGRAD_ERR_MISALIGNED || c == ROPEGRAD_ERR_NO_CUDA);
                free(buf);
                free_case(&t);
            }
        }
    }
}

/* ---- 4. hostile suites --------------------------------------------------------------- */

static char tmp[256];

static int mk_tmp(void **state)
{
    snprintf(tmp, sizeof tmp, "/tmp/rg_badinput_XXXXXX");
    return mkdtemp(tmp) ? 0 : -1;
}

static int rm_tmp(void **state)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    assert_non_null(a);
    assert_non_null(b);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) assert_int_equal(fwrite(buf, 1, n, b), n);
    fclose(a);
    assert_int_equal(fclose(b), 0);
}

/* DIR/name under the test's temporary folder. */
static const char *at(const char *sub, const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s%s%s", tmp, sub, name ? "/" : "", name ? name : "");
    return p[k];
}

/* A valid suite in tmp/sub: the shipped definition, the given workloads. */
static void make_suite(const char *sub, const char *workloads)
{
    assert_int_equal(mkdir(at(sub, NULL), 0755), 0);
    copy_file(RG_SOURCE_DIR "/suites/014-rope_backward/definition.json", at(sub, "definition.json"));
    if (workloads) write_text(at(sub, "workload.jsonl"), workloads);
}

static const char *one_workload =
    "{\"uuid\": \"u0\", \"axes\": {\"batch_size\": 1, \"seq_len\": 4}, \"inputs\": {\"attention_scaling\": "
    "{\"value\": 0.5}}, \"tolerance\": {\"max_atol\": 1e-5, \"max_rtol\": 1e-5}}\n";

static void expect_load_error(const char *dir, const char *needle)
{
    rg_suite s;
    char err[RG_ERRLEN] = "";
    int rc = rg_suite_load(dir, &s, err, sizeof err);
    if (rc == 0) {
        rg_suite_free(&s);
        fail_msg("%s: loaded, expected an error containing '%s'", dir, needle);
    }
    if (!strstr(err, needle)) fail_msg("%s: error '%s' lacks '%s'", dir, err, needle);
    assert_null(strchr(err, '\n'));
    assert_null(s.workloads);
}

/* The rule (src/harness/suite.c): a suite's files must be regular files that
 * resolve inside its folder. A symlink inside the folder to a file inside it
 * is fine; one that leads out, or to a FIFO, is refused. */
static void test_suite_escape(void **state)
{
    rg_suite s;
    char err[RG_ERRLEN] = "";
    /* A secret outside the suite that happens to be valid JSON. */
    make_suite("outside", one_workload);

    make_suite("esc_def", one_workload);
    unlink(at("esc_def", "definition.json"));
    assert_int_equal(symlink(at("outside", "definition.json"), at("esc_def", "definition.json")), 0);
    expect_load_error(at("esc_def", NULL), "outside the suite folder");

    make_suite("esc_rel", NULL);
    assert_int_equal(symlink("../outside/workload.jsonl", at("esc_rel", "workload.jsonl")), 0);
    expect_load_error(at("esc_rel", NULL), "outside the suite folder");

    make_suite("esc_fig", one_workload);
    assert_int_equal(symlink("/etc/hostname", at("esc_fig", "h200-figures.json")), 0);
    expect_load_error(at("esc_fig", NULL), "outside the suite folder");

    /* /dev/zero never ends; a FIFO would block forever: both refused. */
    make_suite("dev", NULL);
    assert_int_equal(symlink("/dev/zero", at("dev", "workload.jsonl")), 0);
    expect_load_error(at("dev", NULL), "workload.jsonl");
    make_suite("fifo", NULL);
    assert_int_equal(mkfifo(at("fifo", "workload.jsonl"), 0644), 0);
    expect_load_error(at("fifo", NULL), "not a regular file");

    /* A symlink that stays inside the folder is accepted, as is a symlinked folder. */
    make_suite("inside", NULL);
    write_text(at("inside", "real.jsonl"), one_workload);
    assert_int_equal(symlink("real.jsonl", at("inside", "workload.jsonl")), 0);
    assert_int_equal(rg_suite_load(at("inside", NULL), &s, err, sizeof err), 0);
    assert_int_equal(s.n_workloads, 1);
    rg_suite_free(&s);
    assert_int_equal(symlink(at("inside", NULL), at("link_to_suite", NULL)), 0);
    assert_int_equal(rg_suite_load(at("link_to_suite", NULL), &s, err, sizeof err), 0);
    rg_suite_free(&s);
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void test_suite_too_big(void **state)
{
    char line[512];
    /* 100k + 1 workloads: refused at the limit, with the line number. */
    make_suite("many", NULL);
    FILE *f = fopen(at("many", "workload.jsonl"), "w");
    assert_non_null(f);
    for (int i = 0; i <= 100000; i++) {
        snprintf(line, sizeof line,
                 "{\"uuid\": \"w%d\", \"axes\": {\"batch_size\": 1, \"seq_len\": %d}, \"inputs\": "
                 "{\"attention_scaling\": {\"value\": 1}}, \"tolerance\": {\"max_atol\": 0, \"max_rtol\": 0}}\n",
                 i, 1 + i % 97);
        fputs(line, f);
    }
    assert_int_equal(fclose(f), 0);
    expect_load_error(at("many", NULL), "more than 100000 workloads");
    expect_load_error(at("many", NULL), "workload.jsonl:100001");

    /* One line of 1 MiB + 1 byte: refused, naming the line. */
    make_suite("longline", NULL);
    f = fopen(at("longline", "workload.jsonl"), "w");
    assert_non_null(f);
    fputs(one_workload, f);
    fputs("{\"uuid\": \"", f);
    for (int i = 0; i < (1 << 20); i++) fputc('a', f);
    fputs("\"}\n", f);
    assert_int_equal(fclose(f), 0);
    expect_load_error(at("longline", NULL), "workload.jsonl:2: line is longer than");

    /* A 1 GiB line (a sparse file: no disk used): the loader reads 1 MiB of
     * it, not the whole gigabyte, so memory stays bounded. */
    make_suite("gigaline", NULL);
    int fd = open(at("gigaline", "workload.jsonl"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "{", 1), 1);
    assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
    assert_int_equal(close(fd), 0);
    long before = max_rss_kib();
    expect_load_error(at("gigaline", NULL), "line is longer than");
    /* The same for definition.json: capped at 16 MiB, not read to the end. */
    make_suite("gigadef", one_workload);
    fd = open(at("gigadef", "definition.json"), O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
    assert_int_equal(close(fd), 0);
    expect_load_error(at("gigadef", NULL), "larger than");
    long grown_mib = (max_rss_kib() - before) / 1024;
    if (grown_mib > 128) fail_msg("loading 1 GiB files grew the peak RSS by %ld MiB", grown_mib);
}

/* ---- 5. an output path that cannot be written: an error, no partial file ----------- */

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_output_path(void **state)
{
    char err[RG_ERRLEN] = "";
    const char *missing = at("no/such/dir", "out.json");
    assert_int_not_equal(rg_write_file_atomic(missing, "{}\n", 3, err, sizeof err), 0);
    assert_non_null(strstr(err, "out.json"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(access(at("no", NULL), F_OK), -1);

    rg_run_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.suite, sizeof r.suite, "s");
    err[0] = 0;
    assert_int_not_equal(rg_run_write_json(&r, missing, err, sizeof err), 0);
    assert_true(err[0] != 0);
    assert_null(strchr(err, '\n'));

    /* The target exists but is a non-empty directory: the final rename
     * fails after the data was written -- the temporary must be gone. */
    assert_int_equal(mkdir(at("outdir", NULL), 0755), 0);
    assert_int_equal(mkdir(at("outdir", "target.json"), 0755), 0);
    write_text(at("outdir/target.json", "keep"), "x");
    assert_int_not_equal(rg_write_file_atomic(at("outdir", "target.json"), "{}\n", 3, err, sizeof err), 0);
    assert_int_equal(count_entries(at("outdir", NULL)), 1);
    assert_int_not_equal(rg_run_write_json(&r, at("outdir", "target.json"), err, sizeof err), 0);
    assert_int_equal(count_entries(at("outdir", NULL)), 1);

    /* And a good path works, leaving exactly the file. */
    assert_int_equal(rg_write_file_atomic(at("outdir", "ok.json"), "{}\n", 3, err, sizeof err), 0);
    assert_int_equal(count_entries(at("outdir", NULL)), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nonfinite_grads),
        cmocka_unit_test(test_nonfinite_emb),
        cmocka_unit_test(test_nonfinite_inv_freq),
        cmocka_unit_test(test_check_reports_nonfinite),
        cmocka_unit_test(test_bad_sizes),
        cmocka_unit_test(test_bad_scalars),
        cmocka_unit_test(test_huge_workload_inputs),
        cmocka_unit_test(test_null_pointers),
        cmocka_unit_test(test_misaligned_pointers),
        cmocka_unit_test_setup_teardown(test_suite_escape, mk_tmp, rm_tmp),
        cmocka_unit_test_setup_teardown(test_suite_too_big, mk_tmp, rm_tmp),
        cmocka_unit_test_setup_teardown(test_output_path, mk_tmp, rm_tmp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
