/* SPDX-License-Identifier: Apache-2.0 */
/* test_plugin_gpu.c -- a plugin's CUDA kernel that faults, and one that
 * hangs past --timeout (tests/plugins/gpu_bad.cu): each run ends with exit 1
 * and is recorded as a failed run whose workload carries the CUDA error or
 * "timed out"; the workloads after it fail "not run"; nothing is recorded as
 * passed; and the example plugin's CUDA entry measured and recorded. Skips
 * (77, with the reason) without CUDA or a GPU. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ropegrad.h"
#include "test_util.h"

static tu_scratch sc;
static char out[1 << 16], err[1 << 14];

static int setup(void **state) { return tu_scratch_open(&sc, "rg_plugin_gpu"); }
static int teardown(void **state) { return tu_rm_rf(sc.dir); }

/* The manifest's per-workload rows. */
static cJSON *manifest_rows(const char *name, cJSON **doc)
{
    char *text = tu_slurp(tu_path_in(sc.dir, name), NULL);
    if (!text) fail_msg("%s was not written", name);
    *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(*doc);
    const cJSON *spec = tu_get(tu_get(*doc, "run"), "spec");
    assert_string_equal(tu_get(spec, "status")->valuestring, "failed");
    return (cJSON *)tu_get(tu_get(spec, "ropegrad"), "workloads");
}

/* bench over workloads 2 and 4 with plugin v: exit 1, the stop named on
 * stderr, a failed run recorded whose first row says why and whose second
 * was not run. */
static void expect_failed_run(const char *v, const char *timeout, const char *why)
{
    char db[32], mf[32];
    snprintf(db, sizeof db, "%s.db", v);
    snprintf(mf, sizeof mf, "%s.json", v);
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                             "bench --backend cuda --workloads 2,4 --iterations 3 --warmup 1 %s --impl "
                             RG_BINARY_DIR "/tests/plugins/libgpu_%s.so --record --db %s --manifest %s",
                             timeout, v, db, mf);
    print_message("    %s -> %d\n%s%s", v, rc, out, err);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "the GPU is unusable"));
    assert_non_null(strstr(err, why));
    cJSON *doc;
    const cJSON *rows = manifest_rows(mf, &doc);
    assert_int_equal(cJSON_GetArraySize(rows), 2);
    const cJSON *r0 = cJSON_GetArrayItem(rows, 0), *r1 = cJSON_GetArrayItem(rows, 1);
    assert_false(cJSON_IsTrue(tu_get(r0, "pass")));
    assert_non_null(strstr(tu_get(r0, "reason")->valuestring, why));
    assert_false(cJSON_IsTrue(tu_get(r1, "pass")));
    assert_non_null(strstr(tu_get(r1, "reason")->valuestring, "not run"));
    cJSON_Delete(doc);
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "runs list --db %s", db);
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "failed"));
    assert_null(strstr(out, "passed"));
}

/* The example's CUDA entry, measured as ropegrad's kernels are: it passes,
 * is timed with CUPTI and recorded under the plugin's name. */
static void test_example_cuda_entry(void **state)
{
    int rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err,
                             "bench --backend cuda --workloads 0,2,4,14 --iterations 5 --warmup 2 --impl "
                             RG_BINARY_DIR "/examples/plugin-014/libplain014.so --record --db ok.db --manifest ok.json");
    print_message("%s%s", out, err);
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "passed 4/4"));
    assert_non_null(strstr(out, "timer cupti"));
    rc = tu_run_captured(sc.dir, out, sizeof out, err, sizeof err, "runs list --db ok.db");
    TU_EXPECT_OK(rc, err);
    assert_non_null(strstr(out, "cuda 0 plain-014 1.0.0"));
}

static void test_kernel_fault_is_a_failed_run(void **state)
{
    expect_failed_run("fault", "", "cudaErrorIllegalAddress");
}

static void test_kernel_hang_is_a_failed_run(void **state)
{
    expect_failed_run("hang", "--timeout 2", "timed out");
}

int main(void)
{
#ifdef RG_TEST_GPU_PLUGINS
    const char *skip = ropegrad_cuda_available() ? NULL : "no usable CUDA device";
#else
    const char *skip = "built without CUDA (the faulting and hanging plugins need nvcc)";
#endif
    if (skip) {
        printf("skipped: %s\n", skip);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_cuda_entry),
        cmocka_unit_test(test_kernel_fault_is_a_failed_run),
        cmocka_unit_test(test_kernel_hang_is_a_failed_run),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
