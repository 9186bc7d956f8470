/* SPDX-License-Identifier: Apache-2.0 */
/* test_worker.c -- the supervised worker (src/harness/worker.h): a plugin
 * that calls exit(0), _exit(0) or quick_exit(0) inside a call, segfaults,
 * aborts, or sleeps in its constructor or its descriptor function (tests/
 * harness/plugins/worker_attack.c) gives one line naming it, the workload
 * and what happened, exit 1 and a failed run in the registry; what the
 * plugin printed never reaches stdout; a good plugin still passes. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define PLAIN RG_BINARY_DIR "/examples/plugin-014/libplain014.so"
#define ATTACK(v) RG_BINARY_DIR "/tests/plugins/libattack_" v ".so"

static tu_scratch sc;
static char out[1 << 16], err[1 << 14];

static int setup(void **state) { return tu_scratch_open(&sc, "rg_worker"); }
static int teardown(void **state) { return tu_rm_rf(sc.dir); }

/* The lines of err that the harness wrote ("ropegrad ..."): the plugin's own may pass through. */
static int harness_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, "ropegrad", 8)) n++;
    return n;
}

/* One attack: exit 1, one line with the needle and the workload, nothing of
 * the plugin's on stdout, a failed run recorded in db. */
static void expect_failed(const char *plugin, const char *db, int timeout, const char *needle, int at_workload)
{
    time_t t0 = time(NULL);
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                             "bench --backend cpu --workloads 2 --iterations 2 --warmup 0 --timeout %d --impl %s "
                             "--record --db %s", timeout, plugin, db);
    print_message("    %s -> %d: %s", plugin, rc, err);
    assert_int_equal(rc, 1);
    assert_true(time(NULL) - t0 < 60);
    assert_int_equal(harness_lines(err), 1);
    assert_non_null(strstr(err, needle));
    assert_non_null(strstr(err, plugin));
    if (at_workload) assert_non_null(strstr(err, "at workload 2"));
    assert_null(strstr(out, "passed"));
    assert_non_null(strstr(out, "recorded as run 1"));
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "runs show 1 --db %s", db);
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "WORKER_FAILED"));
}

static void test_exit_inside_a_call(void **state)
{
    expect_failed(ATTACK("exit0"), "exit.db", 30, "the worker exited with status 0 before it sent a result", 1);
    expect_failed(ATTACK("_exit0"), "_exit.db", 30, "the worker exited with status 0 before it sent a result", 1);
    expect_failed(ATTACK("quick_exit0"), "quick.db", 30, "the worker exited with status 0 before it sent a result", 1);
}

static void test_signal_inside_a_call(void **state)
{
    expect_failed(ATTACK("segv"), "segv.db", 30, "killed by signal SIGSEGV", 1);
    expect_failed(ATTACK("abort"), "abort.db", 30, "killed by signal SIGABRT", 1);
}

/* The timer is armed before the library is opened. */
static void test_sleep_while_loading(void **state)
{
    expect_failed(ATTACK("sleep_ctor"), "ctor.db", 3, "it did not finish loading within 3 s (--timeout)", 0);
    expect_failed(ATTACK("sleep_desc"), "desc.db", 3, "it did not finish loading within 3 s (--timeout)", 0);
}

/* Without --record: the same line and exit 1, nothing written. */
static void test_no_record(void **state)
{
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                             "check --backend cpu --workloads 1 --impl %s", ATTACK("_exit0"));
    assert_int_equal(rc, 1);
    assert_int_equal(harness_lines(err), 1);
    assert_int_equal(out[0], 0);
}

/* A plugin that behaves: its result crosses the channel whole (--json). */
static void test_good_plugin(void **state)
{
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                             "bench --backend cpu --workloads 2,4 --iterations 3 --warmup 1 --impl %s --json r.json",
                             PLAIN);
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "passed 2/2"));
    char *text = tu_slurp(tu_path_in(sc.dir, "r.json"), NULL);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    assert_string_equal(tu_get(j, "kernel_name")->valuestring, "plain-014 1.0.0");
    const cJSON *w = cJSON_GetArrayItem(tu_get(j, "workloads"), 1);
    assert_int_equal(tu_get(w, "index")->valueint, 4);
    assert_int_equal(cJSON_GetArraySize(tu_get(w, "samples_ns")), 3);
    cJSON_Delete(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_inside_a_call), cmocka_unit_test(test_signal_inside_a_call),
        cmocka_unit_test(test_sleep_while_loading), cmocka_unit_test(test_no_record),
        cmocka_unit_test(test_good_plugin),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
