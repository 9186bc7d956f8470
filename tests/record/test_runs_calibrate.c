/* SPDX-License-Identifier: Apache-2.0 */
/* test_runs_calibrate.c -- `ropegrad runs calibrate` end to end: bad usage is
 * one line and exit 2 before any benchmark runs; a benchmark that fails names
 * the run; three short back-to-back CPU runs store the machine's noise (or,
 * on a busy machine, store nothing and exit 3), the scratch registry is
 * removed, and `runs check` then says it judged against that calibration. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "gate.h"
#include "test_record_fixture.h"
#include "test_util.h"

static char dir[512];
static char out_text[1 << 16], err_text[1 << 14];

#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)
#define rg_env(prefix, args) tu_run_prefixed(dir, prefix, out_text, sizeof out_text, err_text, sizeof err_text, args)

#define SUITE "--suite " RG_SOURCE_DIR "/suites/014-rope_backward"
#define SHORT SUITE " --backend cpu --workloads 2 --iterations 8 --warmup 1 --rounds 1 --threads 1"

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "calibrate");
    return tu_fresh_dir(dir);
}

static int teardown(void **state) { return tu_rm_rf(dir); }

static void test_bad_usage(void **state)
{
    const char *bad[] = {
        "runs calibrate --runs 2 --db c.db",          /* fewer than RG_NOISE_MIN_CALIBRATION */
        "runs calibrate --runs 101 --db c.db",
        "runs calibrate --runs x --db c.db",
        "runs calibrate --runs --db c.db",
        "runs calibrate --db '' ",
        "runs calibrate --frobnicate --db c.db",
        "runs calibrate --db c.db " SHORT,             /* bench options without -- */
        "runs calibrate --db c.db -- " SHORT " --record",
        "runs calibrate --db c.db -- " SHORT " --db=x.db",
        "runs calibrate --db /proc/nope/c.db -- " SHORT,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = rg("%s", bad[i]);
        if (rc != 2 || tu_count_lines(err_text) != 1) fail_msg("%s: exit %d, stderr '%s'", bad[i], rc, err_text);
        assert_non_null(strstr(err_text, "ropegrad runs calibrate"));
    }
    char db[700];
    snprintf(db, sizeof db, "%s/c.db", dir);
    struct stat st;
    assert_int_equal(stat(db, &st), -1);   /* refused before anything was made */
    assert_int_equal(rg("runs calibrate --help"), 0);
    assert_non_null(strstr(out_text, "--runs N"));
    assert_int_equal(rg("runs --help"), 0);
    assert_non_null(strstr(out_text, "calibrate"));
}

static void test_bench_fails(void **state)
{
    int rc = rg("runs calibrate --runs 3 --db c.db -- --suite %s/nowhere --backend cpu", dir);
    assert_int_equal(rc, 2);
    assert_int_equal(tu_count_lines(err_text), 1);
    assert_non_null(strstr(err_text, "run 1 of 3: bench exited 2"));
}

/* Three short runs: stored (exit 0) on a quiet machine, nothing stored (exit 3) on a busy one. */
static void test_calibrate(void **state)
{
    char prefix[700];
    snprintf(prefix, sizeof prefix, "env TMPDIR='%s/tmp'", dir);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    assert_int_equal(mkdir(tmp, 0700), 0);
    int rc = rg_env(prefix, "runs calibrate --runs 3 --db c.db --json -- " SHORT);
    printf("%s%s", out_text, err_text);
    if (rc != 0 && rc != 3) fail_msg("calibrate exited %d: %s", rc, err_text);
    assert_int_equal(tu_count_dir(tmp), 0);   /* the scratch registry is gone */
    assert_non_null(strstr(out_text, "\"machine\":"));
    assert_non_null(strstr(out_text, "\"quiet_runs\":"));
    assert_non_null(strstr(out_text, "\"busy\":"));
    assert_non_null(strstr(out_text, rc ? "\"stored\":\tfalse" : "\"stored\":\ttrue"));
    /* The registry holds no run of the calibration, only its figures. */
    assert_int_equal(rg("runs list --json --db c.db"), 0);
    assert_non_null(strstr(out_text, "[]"));
    char db[700], err[RG_ERRLEN];
    snprintf(db, sizeof db, "%s/c.db", dir);
    rg_registry *g;
    assert_int_equal(rg_registry_open(db, 0, &g, err, sizeof err), 0);
    rg_gate_noise *all;
    size_t n;
    assert_int_equal(rg_registry_noise_list(g, &all, &n, err, sizeof err), 0);
    rg_registry_close(g);
    assert_int_equal(n, rc ? 0 : 1);
    if (!rc) {
        assert_true(all[0].sigma >= 0 && all[0].df == 2 && all[0].n == 3);
        assert_non_null(strstr(all[0].detail, "014_rotary_embedding_with_attention_scaling_backward"));
        /* A run of this machine is now checked against that calibration (2 df: a wide band). */
        assert_int_equal(rg("bench " SHORT " --record --db c.db --quiet"), 0);
        assert_int_equal(rg("bench " SHORT " --record --db c.db --quiet"), 0);
        rc = rg("runs check 2 --against 1 --db c.db");
        printf("%s", out_text);
        assert_true(rc == 0 || rc == 3);
        assert_non_null(strstr(out_text, "from calibration of "));
    }
    free(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bad_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bench_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calibrate, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
