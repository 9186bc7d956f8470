/* SPDX-License-Identifier: Apache-2.0 */
/* test_plugin.c -- `ropegrad bench|check --impl PATH.so` on the CPU: the
 * example plugin (examples/plugin-014) checked and recorded under its own
 * name with its files in the implementation digest, and every broken plugin
 * (tests/plugins/bad_plugin.c) refused with one line and exit 2 before
 * anything runs, nothing recorded; a CPU entry that hangs is stopped by the
 * supervised worker's --timeout with one line and recorded as a failed run. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#define PLAIN RG_BINARY_DIR "/examples/plugin-014/libplain014.so"
#define PLAIN_SRC RG_SOURCE_DIR "/examples/plugin-014/plugin.c"
#define BAD(v) RG_BINARY_DIR "/tests/plugins/libbad_" v ".so"

static tu_scratch sc;
static char out[1 << 16], err[1 << 14];

static int setup(void **state) { return tu_scratch_open(&sc, "rg_plugin"); }
static int teardown(void **state) { return tu_rm_rf(sc.dir); }

static int exists(const char *name) { return access(tu_path_in(sc.dir, name), F_OK) == 0; }

/* The example passes every workload of a subset through the CPU entry. */
static void test_example_check(void **state)
{
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                             "check --backend cpu --workloads 0,2,4,9,13 --impl %s", PLAIN);
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "passed 5/5"));
    assert_non_null(strstr(out, "plain-014 1.0.0"));
}

/* bench --record: the manifest verifies, names the plugin, and its
 * implementation digest covers the library's and the source's bytes; runs
 * list shows the plugin's name. */
static void test_example_bench_record(void **state)
{
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                             "bench --backend cpu --workloads 2,4 --iterations 3 --warmup 1 --impl %s --impl-source %s "
                             "--record --db runs.db --manifest m.json", PLAIN, PLAIN_SRC);
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "recorded as run 1"));
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "verify m.json");
    TU_EXPECT_OK(rc, err);
    char *text = tu_slurp(tu_path_in(sc.dir, "m.json"), NULL);
    assert_non_null(text);
    cJSON *m = cJSON_Parse(text);
    free(text);
    assert_non_null(m);
    const cJSON *spec = tu_get(tu_get(m, "implementation"), "spec");
    assert_string_equal(tu_get(spec, "name")->valuestring, "plain-014");
    assert_string_equal(tu_get(spec, "version")->valuestring, "1.0.0");
    assert_string_equal(tu_get(spec, "backend")->valuestring, "cpu");
    const cJSON *plugin = tu_get(spec, "plugin");
    assert_string_equal(tu_get(tu_get(plugin, "library"), "file")->valuestring, "libplain014.so");
    const cJSON *src = tu_get(plugin, "sources");
    assert_int_equal(cJSON_GetArraySize(src), 1);
    assert_string_equal(tu_get(cJSON_GetArrayItem(src, 0), "file")->valuestring, "plugin.c");
    assert_int_equal(strlen(tu_get(cJSON_GetArrayItem(src, 0), "sha256")->valuestring), 64);
    cJSON_Delete(m);
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "runs list --db runs.db");
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "plain-014 1.0.0"));
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "runs show 1 --db runs.db");
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "implementation  plain-014 1.0.0, backend cpu"));
    /* Replicating it would time ropegrad's own kernel: refused. */
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "runs replicate 1 --db runs.db");
    TU_EXPECT_ONE_LINE_ERROR(rc, err, "measured plain-014 1.0.0, not ropegrad's kernel");
}

/* A changed source file is another implementation: another digest. */
static void test_source_bytes_in_digest(void **state)
{
    FILE *f = fopen(tu_path_in(sc.dir, "a.c"), "w");
    assert_non_null(f);
    fputs("int a;\n", f);
    fclose(f);
    char d1[128] = "", d2[128] = "";
    for (int k = 0; k < 2; k++) {
        int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                                 "bench --backend cpu --workloads 2 --iterations 1 --warmup 0 --impl %s "
                                 "--impl-source a.c --manifest %s", PLAIN, k ? "m2.json" : "m1.json");
        TU_EXPECT_OK(rc, err);
        char *text = tu_slurp(tu_path_in(sc.dir, k ? "m2.json" : "m1.json"), NULL);
        cJSON *m = cJSON_Parse(text);
        free(text);
        snprintf(k ? d2 : d1, 128, "%s", tu_get(tu_get(tu_get(m, "run"), "spec"), "implementationDigest")->valuestring);
        cJSON_Delete(m);
        f = fopen(tu_path_in(sc.dir, "a.c"), "w");
        fputs("int b;\n", f);
        fclose(f);
    }
    assert_true(strlen(d1) > 10);
    assert_string_not_equal(d1, d2);
}

/* One broken plugin: exit 2, one line naming the problem, nothing written. */
static void expect_refused(const char *backend, const char *path, const char *needle)
{
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                             "bench --backend %s --workloads 2 --iterations 2 --warmup 0 --impl %s --record "
                             "--db refused.db --manifest refused.json", backend, path);
    print_message("    --impl %s -> %d: %s", path, rc, err);
    TU_EXPECT_ONE_LINE_ERROR(rc, err, needle);
    assert_false(exists("refused.db"));
    assert_false(exists("refused.json"));
    assert_int_equal(out[0], 0);
}

static void test_bad_plugins(void **state)
{
    FILE *f = fopen(tu_path_in(sc.dir, "not-elf.so"), "w");
    assert_non_null(f);
    fputs("this is not a shared library\n", f);
    fclose(f);
    expect_refused("cpu", tu_path_in(sc.dir, "not-elf.so"), "not a loadable shared library");
    expect_refused("cpu", tu_path_in(sc.dir, "missing.so"), "cannot open");
    expect_refused("cpu", sc.dir, "not a regular file");
    expect_refused("cpu", BAD("no_descriptor"), "exports no ropegrad_impl_descriptor()");
    expect_refused("cpu", BAD("null_descriptor"), "returned NULL");
    expect_refused("cpu", BAD("wrong_abi"), "ABI version 2, this ropegrad reads version 1");
    expect_refused("cpu", BAD("wrong_op"), "it implements op '011_rotary_position_embedding'");
    expect_refused("cpu", BAD("null_cpu"), "it has no cpu entry");
    expect_refused("cpu", BAD("name"), "name has a byte that is not printable ASCII");
    expect_refused("cpu", BAD("null_version"), "version is NULL");
}

/* --backend cuda with a plugin that has no CUDA entry: refused before the
 * GPU is looked for (so also on a machine without one). */
static void test_null_cuda_entry(void **state)
{
    expect_refused("cuda", BAD("null_cuda"), "it has no cuda entry");
}

/* The options that need --impl, and --kernel beside it. */
static void test_option_misuse(void **state)
{
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "check --backend cpu --timeout 5");
    TU_EXPECT_ONE_LINE_ERROR(rc, err, "--timeout only applies with --impl");
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "check --backend cpu --impl-source a.c");
    TU_EXPECT_ONE_LINE_ERROR(rc, err, "--impl-source only applies with --impl");
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "check --backend cpu --kernel 14 --impl %s", PLAIN);
    TU_EXPECT_ONE_LINE_ERROR(rc, err, "--kernel selects one of ropegrad's kernels");
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "check --backend cpu --timeout 0 --impl %s", PLAIN);
    TU_EXPECT_ONE_LINE_ERROR(rc, err, "--timeout: '0' is not a number of seconds");
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                         "check --backend cpu --workloads 2 --impl %s --impl-source nope.c", PLAIN);
    TU_EXPECT_ONE_LINE_ERROR(rc, err, "--impl-source: nope.c: cannot open");
}

/* A CPU entry that never returns: the worker is killed, one line, exit 1,
 * a failed run recorded. */
static void test_cpu_hang_times_out(void **state)
{
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                             "bench --backend cpu --workloads 2 --iterations 2 --warmup 0 --timeout 3 --impl %s "
                             "--record --db hang.db --manifest hang.json", BAD("hang_cpu"));
    print_message("    hang -> %d: %s", rc, err);
    assert_int_equal(rc, 1);
    assert_int_equal(tu_count_lines(err), 1);
    assert_non_null(strstr(err, "at workload 2: a call into it did not return within 3 s"));
    assert_true(exists("hang.db"));
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "runs show 1 --db hang.db");
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "WORKER_FAILED"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_plugins),        cmocka_unit_test(test_null_cuda_entry),
        cmocka_unit_test(test_option_misuse),      cmocka_unit_test(test_cpu_hang_times_out),
        cmocka_unit_test(test_example_check),      cmocka_unit_test(test_example_bench_record),
        cmocka_unit_test(test_source_bytes_in_digest),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
