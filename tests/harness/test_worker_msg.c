/* SPDX-License-Identifier: Apache-2.0 */
/* test_worker_msg.c -- the supervised worker's channel (src/harness/worker.h):
 * a result written and read back is the same, NaN and infinities included;
 * a refusal crosses as its line; every malformed message (no frame, a
 * length that lies, bytes after the frame, invalid or non-strict JSON, a
 * member missing, unknown, of the wrong type or out of range) is refused
 * with one line and leaves nothing allocated. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "worker.h"

/* A two-workload result with a sample of each kind of double. */
static void make_result(rg_run_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->suite, sizeof r->suite, "014_rotary_embedding_with_attention_scaling_backward");
    snprintf(r->backend, sizeof r->backend, "cpu");
    snprintf(r->kernel_name, sizeof r->kernel_name, "plain-014 1.0.0");
    r->iterations = 3;
    r->seed = 9007199254740992ull;
    r->rounds = 10;
    r->env.sm_clock_mhz_start = -1;
    r->n_workloads = 2;
    r->workloads = calloc(2, sizeof *r->workloads);
    assert_non_null(r->workloads);
    for (int i = 0; i < 2; i++) {
        rg_workload_result *w = &r->workloads[i];
        w->index = 2 * i;
        snprintf(w->uuid, sizeof w->uuid, "uuid-%d", i);
        w->batch_size = 1LL << 40;
        w->check.pass = i;
        w->check.max_abs_err = i ? 1.0 / 3.0 : INFINITY;
        w->timed = 1;
        w->n_samples = 3;
        w->samples_ns = malloc(3 * sizeof *w->samples_ns);
        assert_non_null(w->samples_ns);
        w->samples_ns[0] = 1234.5678901234567;
        w->samples_ns[1] = NAN;
        w->samples_ns[2] = -INFINITY;
        w->flush_gap_us = NAN;
        w->span_kernels = -1;
    }
    r->passed = 1;
    r->total = 2;
    r->mean_ns = NAN;
}

static unsigned char *framed(const char *json, size_t *len)
{
    size_t n = strlen(json);
    unsigned char *b = malloc(8 + n);
    assert_non_null(b);
    memcpy(b, "RGW1", 4);
    for (int i = 0; i < 4; i++) b[4 + i] = (unsigned char)(n >> (8 * (3 - i)));
    memcpy(b + 8, json, n);
    *len = 8 + n;
    return b;
}

/* A frame just written, read back into *m (and freed). */
static void read_back(unsigned char *buf, size_t len, rg_worker_msg *m)
{
    char err[RG_ERRLEN] = "";
    assert_non_null(buf);
    int rc = rg_worker_msg_parse(buf, len, m, err, sizeof err);
    free(buf);
    if (rc) fail_msg("%s", err);
}

static void test_round_trip(void **state)
{
    rg_run_result r;
    make_result(&r);
    rg_run_impl impl = {.name = "plain-014", .version = "1.0.0", .meta_json = "{\"kind\":\"solution\"}"};
    char err[RG_ERRLEN] = "";
    size_t len = 0;
    rg_worker_msg m;
    unsigned char *buf = rg_worker_frame_result(&r, &impl, &len, err, sizeof err);
    read_back(buf, len, &m);
    assert_false(m.refused);
    assert_string_equal(m.name, "plain-014");
    assert_string_equal(m.meta_json, "{\"kind\":\"solution\"}");
    const rg_run_result *g = &m.result;
    assert_int_equal(g->n_workloads, 2);
    assert_true(g->seed == r.seed);
    assert_int_equal(g->env.sm_clock_mhz_start, -1);
    assert_true(isnan(g->mean_ns));
    for (int i = 0; i < 2; i++) {
        const rg_workload_result *w = &g->workloads[i];
        assert_int_equal(w->index, 2 * i);
        assert_int_equal(w->batch_size, 1LL << 40);
        assert_true(w->check.max_abs_err == r.workloads[i].check.max_abs_err);
        assert_int_equal(w->n_samples, 3);
        assert_true(w->samples_ns[0] == 1234.5678901234567);
        assert_true(isnan(w->samples_ns[1]) && w->samples_ns[2] == -INFINITY);
    }
    rg_worker_msg_free(&m);
    rg_run_result_free(&r);
}

static void test_refusal(void **state)
{
    char err[RG_ERRLEN] = "";
    size_t len = 0;
    rg_worker_msg m;
    unsigned char *buf = rg_worker_frame_refusal("--impl x.so: not a loadable shared library", &len, err, sizeof err);
    read_back(buf, len, &m);
    assert_true(m.refused);
    assert_string_equal(m.refusal, "--impl x.so: not a loadable shared library");
    rg_worker_msg_free(&m);
}

/* Refused with one line holding needle; nothing left in m. */
static void expect_refused(const unsigned char *buf, size_t len, const char *needle)
{
    rg_worker_msg m;
    char err[RG_ERRLEN] = "";
    int rc = rg_worker_msg_parse(buf, len, &m, err, sizeof err);
    print_message("    -> %d: %s\n", rc, err);
    assert_int_equal(rc, 1);
    assert_true(err[0] && !strchr(err, '\n'));
    assert_non_null(strstr(err, needle));
    assert_null(m.result.workloads);
    assert_null(m.meta_json);
}

static void expect_json_refused(const char *json, const char *needle)
{
    size_t len;
    unsigned char *b = framed(json, &len);
    expect_refused(b, len, needle);
    free(b);
}

static void test_malformed(void **state)
{
    expect_refused((const unsigned char *)"", 0, "nothing was sent");
    expect_refused((const unsigned char *)"passed 16/16\n", 13, "does not start with RGW1");
    expect_refused((const unsigned char *)"RGW1\x00\x00\x00\x09{}", 10, "is cut short");
    expect_refused((const unsigned char *)"RGW1\x00\x00\x00\x02{}{}", 12, "is followed by more bytes");
    expect_refused((const unsigned char *)"RGW1\x7f\xff\xff\xff", 8, "256 MiB");
    expect_json_refused("[1]", "is not an object");
    expect_json_refused("{\"worker\":2,\"refusal\":\"x\"}", "worker is not 1");
    expect_json_refused("{\"worker\":1,\"refusal\":\"x\",\"refusal\":\"y\"}", "");
    expect_json_refused("{\"worker\":1,\"refusal\":\"two\\nlines\"}", "not one line");
    expect_json_refused("{\"worker\":1,\"refusal\":7}", "not one line");
    expect_json_refused("{\"worker\":1,\"refusal\":\"x\",\"extra\":1}", "members a refusal has not");
    expect_json_refused("{\"worker\":1,\"impl\":{\"name\":\"a\",\"version\":\"1\",\"meta\":null},\"result\":{}}",
                        "$.result.suite is missing");
    expect_json_refused("{\"worker\":1,\"impl\":{\"name\":5,\"version\":\"1\",\"meta\":null},\"result\":{}}",
                        "$.impl.name is not a string");
    expect_json_refused("{\"worker\":1,\"impl\":{\"name\":\"a\",\"version\":\"1\",\"meta\":\"[1]\"},\"result\":{}}",
                        "meta is not the text of a JSON object");
    expect_json_refused("{\"worker\":1,\"impl\":{\"name\":\"a\",\"version\":\"1\",\"meta\":null},\"result\":{},"
                        "\"x\":0}", "is not {worker, impl, result}");
}

/* One member of a good message changed: replaces the first `from` in the text by `to`. */
static void expect_edit_refused(const char *from, const char *to, const char *needle)
{
    rg_run_result r;
    make_result(&r);
    char err[RG_ERRLEN] = "";
    size_t len = 0;
    unsigned char *buf = rg_worker_frame_result(&r, NULL, &len, err, sizeof err);
    rg_run_result_free(&r);
    assert_non_null(buf);
    char *text = calloc(len + 64, 1);
    assert_non_null(text);
    memcpy(text, buf + 8, len - 8);
    free(buf);
    char *at = strstr(text, from);
    assert_non_null(at);
    memmove(at + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
    memcpy(at, to, strlen(to));
    expect_json_refused(text, needle);
    free(text);
}

static void test_bad_members(void **state)
{
    expect_edit_refused("\"kernel\":0", "\"kernel\":0.5", "$.result.kernel is not an integer in range");
    expect_edit_refused("\"ground_truth\":0", "\"ground_truth\":7", "ground_truth is not an integer in range");
    expect_edit_refused("\"seed\":9007199254740992", "\"seed\":-1", "seed is not an integer in range");
    expect_edit_refused("\"passed\":1", "\"passed\":5", "does not count its workloads");
    expect_edit_refused("\"mean_ns\":\"nan\"", "\"mean_ns\":\"NaN\"", "mean_ns is not a number");
    expect_edit_refused("\"uuid\":\"uuid-0\"", "\"uuid\":\"uuid-0\",\"more\":1", "has members it should not have");
    expect_edit_refused("\"samples_ns\":[", "\"samples_ns\":[true,", "samples_ns is not a number");
    expect_edit_refused("\"pass\":0", "\"pass\":false", "check.pass is not a number");
    expect_edit_refused("\"axes\":[0,0,0,0]", "\"axes\":[0,0]", "axes is not an array");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_refusal), cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_bad_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
