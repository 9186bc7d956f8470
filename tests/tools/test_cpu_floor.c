/* SPDX-License-Identifier: Apache-2.0 */
/* test_cpu_floor.c -- bench/cpu_floor (the CPU memory floor beside the op's
 * CPU path) on one tiny workload per op: the report has one row per workload
 * whose shape and bytes match the suite and the op table, every time is finite
 * and positive, the best floor is the fastest pattern and the ratio is
 * ropegrad over it; bad input is one line on stderr, exit 2, and no file;
 * and the harness's CPU timer the tool shares with `ropegrad bench`. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */

#include "test_util.h"

#include <math.h>

#include "harness.h"

#define FLOOR_BIN RG_BINARY_DIR "/bench/cpu_floor"
#define MAX_CELLS 32

static char scratch[64];

static int setup(void **state)
{
    (void)state;
    return tu_mkdtemp(scratch, sizeof scratch, "rg_cpu_floor");
}

static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(scratch);
}

/* Runs cpu_floor ARGS with stderr into err; returns the exit status. */
static int run_floor(const char *args, char *err, size_t errlen)
{
    char cmd[2048];
    const char *e = tu_path_in(scratch, "stderr");
    snprintf(cmd, sizeof cmd, "'%s' %s > '%s' 2> '%s'", FLOOR_BIN, args, tu_path_in(scratch, "stdout"), e);
    int code = tu_system(cmd);
    tu_read_into(e, err, errlen);
    if (code < 0) fail_msg("cpu_floor %s: did not exit normally", args);
    return code;
}

/* The cells of a Markdown table line ("| a | b |" -> "a", "b"); returns the count. */
static int cells(const char *line, char out[][48], int max)
{
    int n = 0;
    const char *p = strchr(line, '|');
    while (p && n < max) {
        const char *q = strchr(p + 1, '|');
        const char *nl = strchr(p + 1, '\n');
        if (!q || (nl && nl < q)) break;
        const char *a = p + 1;
        while (*a == ' ') a++;
        size_t len = (size_t)(q - a);
        while (len && a[len - 1] == ' ') len--;
        snprintf(out[n++], 48, "%.*s", (int)len, a);
        p = q;
    }
    return n;
}

static double num(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end) fail_msg("'%s' is not a number", s);
    return v;
}

/* The report for one workload of op's suite, checked. */
static void check_one(const char *op, int index)
{
    char args[1024], err[4096], suite_dir[600];
    char out[128];
    rg_op_suite_dir(rg_op_by_id(op), RG_SOURCE_DIR "/suites", suite_dir, sizeof suite_dir);
    snprintf(out, sizeof out, "%s/floor.md", scratch);
    remove(out);
    snprintf(args, sizeof args,
             "--suite '%s' --workloads %d --threads 2 --iterations 2 --warmup 0 --output '%s'", suite_dir, index,
             out);
    TU_EXPECT_OK(run_floor(args, err, sizeof err), err);
    char *text = tu_slurp(out, NULL);
    assert_non_null(text);

    /* The suite's shape and the op table's bytes. */
    char lerr[RG_ERRLEN];
    rg_suite s;
    if (rg_suite_load(suite_dir, &s, lerr, sizeof lerr)) fail_msg("%s", lerr);
    const rg_workload *w = &s.workloads[index];
    const double mb = s.op->bytes(w, s.grad_dtype) / 1e6;

    const char *head = strstr(text, "| # | B | S | MB moved |");
    assert_non_null(head);
    char hc[MAX_CELLS][48], rc[MAX_CELLS][48], gc[MAX_CELLS][48];
    const int nh = cells(head, hc, MAX_CELLS);
    assert_true(nh >= 9);
    assert_string_equal(hc[nh - 4], "ropegrad cpu, no flush");   /* the op with warm caches: not a floor */
    assert_string_equal(hc[nh - 3], "best floor");
    assert_string_equal(hc[nh - 2], "ropegrad cpu");
    assert_string_equal(hc[nh - 1], "ratio");
    assert_string_equal(hc[4], "store");   /* the floor patterns, from column 4 */

    /* Exactly one workload row, then the geomean row. */
    const char *sep = strchr(head, '\n');
    assert_non_null(sep);
    const char *row = strchr(sep + 1, '\n');
    assert_non_null(row);
    row++;
    assert_int_equal(cells(row, rc, MAX_CELLS), nh);
    const char *g = strchr(row, '\n');
    assert_non_null(g);
    assert_int_equal(cells(g + 1, gc, MAX_CELLS), nh);
    assert_string_equal(gc[0], "geomean");

    assert_int_equal((int)num(rc[0]), index);
    assert_int_equal((long long)num(rc[1]), (long long)w->batch_size);
    assert_int_equal((long long)num(rc[2]), (long long)w->seq_len);
    if (fabs(num(rc[3]) - mb) > 0.0005 + 1e-9) fail_msg("MB moved %s, the op table says %.4f", rc[3], mb);

    double fastest = INFINITY;
    for (int k = 4; k < nh - 1; k++) {
        const double t = num(rc[k]);
        if (!isfinite(t) || !(t > 0)) fail_msg("column %s: %s is not a positive time", hc[k], rc[k]);
        if (k < nh - 4 && t < fastest) fastest = t;
    }
    const double best = num(rc[nh - 3]), rg = num(rc[nh - 2]), ratio = num(rc[nh - 1]);
    if (best != fastest) fail_msg("best floor %s is not the fastest pattern (%.2f)", rc[nh - 3], fastest);
    if (fabs(ratio - rg / best) > 0.01 * ratio + 0.001) fail_msg("ratio %s, ropegrad/best is %.4f", rc[nh - 1], rg / best);
    /* One workload: each geomean is its value (to the printed digits). */
    for (int k = 3; k < nh; k++)
        if (fabs(num(gc[k]) - num(rc[k])) > 0.0011 * fabs(num(rc[k])) + 0.011)
            fail_msg("geomean of %s is %s, the only row has %s", hc[k], gc[k], rc[k]);

    assert_non_null(strstr(text, "Load average"));
    assert_non_null(strstr(text, "cold cache:"));
    rg_suite_free(&s);
    free(text);
}

static void forward_011(void **state)
{
    (void)state;
    check_one("011", 6);   /* B=2, S=131 */
}

static void forward_012(void **state)
{
    (void)state;
    check_one("012", 8);   /* B=1, S=512 */
}

static void backward_014(void **state)
{
    (void)state;
    check_one("014", 2);   /* B=1, S=128 */
}

static void bad_input(void **state)
{
    (void)state;
    char err[4096], args[1024];
    char out[128];
    snprintf(out, sizeof out, "%s/bad.md", scratch);
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {"--threads x", "--threads"},
        {"--iterations 0", "--iterations"},
        {"--workloads 99", "no workload 99"},
        {"--workloads 3-1", "--workloads"},
        {"--bogus", "unknown option"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        remove(out);
        snprintf(args, sizeof args, "--suite '%s/suites/011-rope_forward' %s --output '%s'", RG_SOURCE_DIR,
                 cases[i].args, out);
        TU_EXPECT_ONE_LINE_ERROR(run_floor(args, err, sizeof err), err, cases[i].needle);
        char *left = tu_slurp(out, NULL);
        if (left) fail_msg("%s: a file was written", cases[i].args);
    }
    /* An output that cannot be written is refused before anything runs. */
    snprintf(args, sizeof args, "--suite '%s/suites/011-rope_forward' --output '%s/no/such/dir/x.md'", RG_SOURCE_DIR,
             scratch);
    TU_EXPECT_ONE_LINE_ERROR(run_floor(args, err, sizeof err), err, "does not exist");
    TU_EXPECT_ONE_LINE_ERROR(run_floor("--threads 2", err, sizeof err), err, "--suite");
    snprintf(args, sizeof args, "--suite '%s/no-such-suite'", scratch);
    TU_EXPECT_ONE_LINE_ERROR(run_floor(args, err, sizeof err), err, "no-such-suite");
}

/* The harness's CPU timer, which the tool and `ropegrad bench --backend cpu` share. */
static int calls;
static int count_call(void *ctx)
{
    (void)ctx;
    calls++;
    return calls == *(const int *)ctx ? 7 : 0;   /* fails on the call numbered *ctx (never when 0) */
}

static void cpu_timer(void **state)
{
    (void)state;
    rg_cpu_timer t;
    char err[RG_ERRLEN];
    assert_int_equal(rg_cpu_timer_open(&t, err, sizeof err), 0);
    assert_true(t.bytes >= ((size_t)1 << 20));
    assert_non_null(strstr(t.cold, "MiB written before every call"));
    double samples[5];
    int fail_at = 0;
    calls = 0;
    assert_int_equal(rg_cpu_timer_run(&t, 2, 5, count_call, &fail_at, samples), 0);
    assert_int_equal(calls, 7);   /* warmup + iterations */
    for (int i = 0; i < 5; i++) assert_true(isfinite(samples[i]) && samples[i] > 0);
    fail_at = 3;
    calls = 0;
    assert_int_equal(rg_cpu_timer_run(&t, 2, 5, count_call, &fail_at, samples), 7);   /* stops, returns it */
    assert_int_equal(calls, 3);
    assert_int_equal(rg_cpu_timer_run(&t, -1, 5, count_call, &fail_at, samples), -1);
    assert_int_equal(rg_cpu_timer_run(&t, 0, 0, count_call, &fail_at, samples), -1);
    assert_int_equal(rg_cpu_timer_run(&t, 0, 1, NULL, &fail_at, samples), -1);
    rg_cpu_timer_close(&t);
    assert_null(t.buf);
    assert_int_equal(rg_cpu_timer_run(&t, 0, 1, count_call, &fail_at, samples), -1);   /* closed */
    assert_int_not_equal(rg_cpu_timer_open(NULL, err, sizeof err), 0);
}

/* The staged loop: stage runs before every call (warmup included), untimed, and a failing stage
 * stops the loop with its status before its call runs. */
static int staged, stage_order_ok;
static int count_stage(void *ctx)
{
    stage_order_ok += staged == calls;   /* one stage per call, each before its call */
    staged++;
    return staged == *(const int *)ctx + 100 ? 9 : 0;   /* fails on stage number *ctx + 100 */
}

static void cpu_timer_staged(void **state)
{
    (void)state;
    rg_cpu_timer t;
    char err[RG_ERRLEN];
    assert_int_equal(rg_cpu_timer_open(&t, err, sizeof err), 0);
    double samples[5];
    int fail_at = 0;
    calls = staged = stage_order_ok = 0;
    assert_int_equal(rg_cpu_timer_run_staged(&t, 2, 5, count_stage, count_call, &fail_at, samples), 0);
    assert_int_equal(staged, 7);
    assert_int_equal(calls, 7);
    assert_int_equal(stage_order_ok, 7);
    fail_at = -96;   /* stage number 4 fails: 3 calls ran */
    calls = staged = stage_order_ok = 0;
    assert_int_equal(rg_cpu_timer_run_staged(&t, 2, 5, count_stage, count_call, &fail_at, samples), 9);
    assert_int_equal(staged, 4);
    assert_int_equal(calls, 3);
    fail_at = 0;
    calls = 0;
    assert_int_equal(rg_cpu_timer_run_staged(&t, 1, 2, NULL, count_call, &fail_at, samples), 0);   /* no stage */
    assert_int_equal(calls, 3);
    rg_cpu_timer_close(&t);
    assert_int_equal(rg_cpu_timer_run_staged(&t, 0, 1, count_stage, count_call, &fail_at, samples), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpu_timer_staged),
        cmocka_unit_test(forward_011),
        cmocka_unit_test(forward_012),
        cmocka_unit_test(backward_014),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(cpu_timer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
