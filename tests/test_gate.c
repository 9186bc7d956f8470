/* SPDX-License-Identifier: Apache-2.0 */
/* test_gate.c -- the regression gate's history and busy-machine rules
 * (src/record/gate.h): the z-score judgement on known figures, a busy CPU run
 * never SLOW (pairwise and against history), and `runs check` choosing the
 * history rule once a line has five earlier credible runs. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "gate.h"
#include "rank.h"
#include "test_record_fixture.h"
#include "test_util.h"

static char dir[512];
static char out_text[1 << 16], err_text[1 << 14];

#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "gate");
    return tu_fresh_dir(dir);
}

static int teardown(void **state) { return tu_rm_rf(dir); }

/* A CPU fixture manifest (4 threads) recorded at load average `load` (NAN: not recorded). */
static cJSON *cpu_manifest(double scale, int stamp, double load)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, "", 0, scale, stamp);
    if (!isnan(load)) r.env.load_known = 1, r.env.load_avg_1m = load, r.env.load_cpus = 4;
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    if (!m) fail_msg("build: %s", err);
    fx_run_free(&r);
    fx_suite_free(&s);
    return m;
}

static void read_manifest(cJSON *doc, rg_manifest *m)
{
    char err[RG_ERRLEN];
    if (rg_manifest_read(doc, m, err, sizeof err)) fail_msg("read: %s", err);
    cJSON_Delete(doc);
}

static void test_judge(void **state)
{
    const double h[6] = {100, 101, 99, 100.5, 99.5, 100};   /* mean 100, sd ~0.71 */
    double m, sd, z;
    assert_int_equal(rg_gate_judge(h, 6, 101, 5, 0.05, &m, &sd, &z), RG_VERDICT_SAME);
    assert_true(fabs(m - 100) < 1e-12 && sd > 0.7 && sd < 0.72 && fabs(z - 1 / sd) < 1e-9);
    assert_int_equal(rg_gate_judge(h, 6, 110, 5, 0.05, &m, &sd, &z), RG_VERDICT_SLOW);
    assert_int_equal(rg_gate_judge(h, 6, 90, 5, 0.05, &m, &sd, &z), RG_VERDICT_FAST);
    /* Far beyond z, but inside the minimum effect: SAME. */
    assert_int_equal(rg_gate_judge(h, 6, 104, 5, 0.05, &m, &sd, &z), RG_VERDICT_SAME);
    /* Beyond the minimum effect, inside the history's own spread: SAME. */
    const double wide[5] = {80, 120, 90, 110, 100};
    assert_int_equal(rg_gate_judge(wide, 5, 115, 5, 0.05, &m, &sd, &z), RG_VERDICT_SAME);
    /* No spread at all: the minimum effect alone decides. */
    const double flat[5] = {100, 100, 100, 100, 100};
    assert_int_equal(rg_gate_judge(flat, 5, 106, 5, 0.05, &m, &sd, &z), RG_VERDICT_SLOW);
    assert_int_equal(rg_gate_judge(flat, 5, 103, 5, 0.05, &m, &sd, &z), RG_VERDICT_SAME);
    /* Too little history, or figures that are not positive and finite. */
    assert_int_equal(rg_gate_judge(h, 4, 200, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge(h, 6, NAN, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge(h, 6, -1, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
    const double bad[5] = {100, 100, INFINITY, 100, 100};
    assert_int_equal(rg_gate_judge(bad, 5, 200, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
    assert_int_equal(rg_gate_judge(NULL, 5, 200, 5, 0.05, &m, &sd, &z), RG_VERDICT_UNCLEAR);
}

static void test_busy(void **state)
{
    rg_manifest m;
    char why[64];
    read_manifest(cpu_manifest(1, 1, 2.0), &m);   /* half of 4 CPUs: busy */
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 1);
    assert_string_equal(why, "load average 2.00 on 4 CPUs");
    rg_manifest_free(&m);
    read_manifest(cpu_manifest(1, 1, 1.9), &m);
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 0);
    rg_manifest_free(&m);
    read_manifest(cpu_manifest(1, 1, NAN), &m);   /* not recorded: not called busy */
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 0);
    rg_manifest_free(&m);
    read_manifest(fx_manifest("NVIDIA H200", 0, 1, 1), &m);
    assert_int_equal(rg_manifest_busy(&m, why, sizeof why), 0);
    rg_manifest_free(&m);
}

/* A run 30% slower than its baseline: SLOW when quiet, UNCLEAR when busy. */
static void test_busy_pair_never_slow(void **state)
{
    rg_manifest base, quiet, busy;
    read_manifest(cpu_manifest(1, 1, 0.1), &base);
    read_manifest(cpu_manifest(1.3, 2, 0.1), &quiet);
    read_manifest(cpu_manifest(1.3, 3, 3.5), &busy);
    rg_check_row *rows;
    size_t n;
    char err[RG_ERRLEN];
    assert_int_equal(rg_check_runs(&base, &quiet, 0.05, 0.05, &rows, &n, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++) assert_int_equal(rows[i].verdict, RG_VERDICT_SLOW);
    free(rows);
    assert_int_equal(rg_check_runs(&base, &busy, 0.05, 0.05, &rows, &n, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].verdict, RG_VERDICT_UNCLEAR);
        assert_non_null(strstr(rows[i].why, "busy machine: load average 3.50 on 4 CPUs"));
    }
    free(rows);
    rg_manifest_free(&base);
    rg_manifest_free(&quiet);
    rg_manifest_free(&busy);
}

static int64_t store(rg_registry *g, cJSON *m)
{
    char err[RG_ERRLEN];
    int64_t id;
    int existed;
    if (rg_registry_store(g, m, RG_EVIDENCE_MEASURED, 0, &id, &existed, err, sizeof err)) fail_msg("store: %s", err);
    cJSON_Delete(m);
    return id;
}

/* Six quiet runs within 1% of each other, then: a 1% slower run SAME, a 10%
 * slower run SLOW (exit 1), the same 10% slower run recorded busy UNCLEAR
 * (exit 0); a busy run in the history is left out of it. */
static void test_history_rule(void **state)
{
    char db[600], err[RG_ERRLEN];
    snprintf(db, sizeof db, "%s/g.db", dir);
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 1, &g, err, sizeof err), 0);
    const double scale[6] = {1.0, 1.01, 0.99, 1.005, 0.995, 1.0};
    for (int i = 0; i < 6; i++) store(g, cpu_manifest(scale[i], 10 + i, 0.2));
    int64_t busy_hist = store(g, cpu_manifest(3.0, 16, 3.0));   /* far off, but busy: not history */
    int64_t same = store(g, cpu_manifest(1.01, 17, 0.2));
    rg_gate_history h;
    assert_int_equal(rg_gate_history_check(g, same, RG_GATE_Z, 0.05, &h, err, sizeof err), 0);
    assert_int_equal(h.n, 6);
    assert_int_equal(h.skipped, 1);
    assert_int_equal(h.verdict, RG_VERDICT_SAME);
    int64_t slow = store(g, cpu_manifest(1.10, 18, 0.2));
    int64_t slow_busy = store(g, cpu_manifest(1.10, 19, 2.5));
    rg_registry_close(g);
    (void)busy_hist;

    assert_int_equal(rg("runs check %lld --db g.db", (long long)same), 0);
    assert_non_null(strstr(out_text, "against the history of its line: 6 earlier credible runs"));
    assert_non_null(strstr(out_text, "1 left out (failed, suspect or busy)"));
    assert_non_null(strstr(out_text, ": SAME"));
    assert_int_equal(rg("runs check %lld --db g.db", (long long)slow), 1);
    assert_non_null(strstr(out_text, "earlier credible runs"));   /* the same-code run #8 joined the history */
    assert_non_null(strstr(out_text, ": SLOW"));
    assert_non_null(strstr(out_text, "regression"));
    assert_int_equal(rg("runs check %lld --db g.db", (long long)slow_busy), 0);
    assert_non_null(strstr(out_text, ": UNCLEAR"));
    assert_non_null(strstr(out_text, "busy machine (load average 2.50 on 4 CPUs): UNCLEAR, never SLOW"));
    /* A higher z threshold than the slowdown's z: SAME. */
    assert_int_equal(rg("runs check %lld --db g.db --z 100", (long long)slow), 0);
    assert_non_null(strstr(out_text, ": SAME"));
    /* --against keeps the pairwise check. */
    assert_int_equal(rg("runs check %lld --against 1 --alpha 0.05 --db g.db", (long long)slow), 1);
    assert_non_null(strstr(out_text, "Mann-Whitney"));
    /* Bad --z: one line, exit 2. */
    assert_int_equal(rg("runs check %lld --db g.db --z 0", (long long)slow), 2);
    assert_int_equal(rg("runs history %lld --db g.db --z 3", (long long)slow), 2);
    assert_non_null(strstr(err_text, "--z only applies to check"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_judge),
        cmocka_unit_test(test_busy),
        cmocka_unit_test(test_busy_pair_never_slow),
        cmocka_unit_test_setup_teardown(test_history_rule, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
