/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_reward_hack.c -- the official evaluator's protocol on the CUDA
 * backend (src/harness/run_cuda.c, rounds.c, cupti_span_cuda.c,
 * restage_cuda.c), through `ropegrad bench --backend cuda --impl`:
 *
 *   - each cheating plugin of tests/plugins/cheat_cuda.cu (correct values, a
 *     cheated measurement) fails its workloads as REWARD_HACK with the reason
 *     of the check that caught it, untimed, exit 1: a cache by input pointer
 *     (the rounds), nothing launched on the second call (the rounds; with one
 *     round, the timed iterations' "launched nothing"), the output written
 *     into an input, another kernel on some iterations (the same-kernels
 *     check; under CUDA events that check does not run, and the run says so);
 *   - the honest example plugin and ropegrad's own kernel pass with every
 *     point on (the defaults), and with every point switched to the old
 *     protocol; the JSON and the manifest say which;
 *   - a plugin with a memset and a memcpy on a stream of its own: inside its
 *     span with --span all (counted, and the span is longer), outside with
 *     --span kernels;
 *   - --settle on (the host waits for the flush before every call) recorded
 *     in the JSON and the manifest, and every CUPTI-timed workload's flush
 *     gap (flush_gap_us) a number >= 0; none under CUDA events.
 *
 * Skips (77, with the reason) without CUDA or a GPU. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>

#include "ropegrad.h"
#include "reward_hack_util.h"

#define PLAIN RG_BINARY_DIR "/examples/plugin-014/libplain014.so"
#define CHEAT(v) RG_BINARY_DIR "/tests/plugins/libgpu_cheat_" v ".so"
#define FEW "--backend cuda --workloads 0-1 --warmup 2 --iterations 5 --quiet"

static tu_scratch sc;
static char out_text[1 << 16], err_text[1 << 14];

#define rg(...) tu_run_captured(sc.dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    (void)state;
    return tu_scratch_open(&sc, "rg_gpu_hack");
}

static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(sc.dir);
}

static cJSON *result(void) { return rh_result(sc.dir); }

static void expect_caught(const char *plugin, const char *options, const char *needle)
{
    int rc = rg("bench " FEW " --impl %s %s --json r.json", plugin, options);
    print_message("    %s %s -> %d\n%s", plugin, options, rc, err_text);
    rh_expect_all_caught(sc.dir, rc, err_text, needle);
}

/* The --settle word options ask for ("on", the default, when they do not). */
static const char *settle_of(const char *options) { return strstr(options, "--settle off") ? "off" : "on"; }

/* The run passed every workload over `rounds` rounds, timed with CUPTI
 * under the switches named; returns its JSON (the caller deletes it). */
static cJSON *expect_passes(const char *impl, const char *options, int rounds, const char *restage, const char *span,
                            const char *sync)
{
    char impl_opt[512] = "";
    if (impl) snprintf(impl_opt, sizeof impl_opt, "--impl %s", impl);
    int rc = rg("bench " FEW " %s --rounds %d %s --json r.json --manifest m.json", impl_opt, rounds, options);
    print_message("%s%s", out_text, err_text);
    TU_EXPECT_OK(rc, err_text);
    cJSON *j = result();
    assert_string_equal(tu_get(j, "timer")->valuestring, "cupti");
    assert_string_equal(tu_get(j, "restage")->valuestring, restage);
    assert_string_equal(tu_get(j, "span")->valuestring, span);
    assert_string_equal(tu_get(j, "sync")->valuestring, sync);
    assert_string_equal(tu_get(j, "settle")->valuestring, settle_of(options));
    assert_int_equal(tu_get(j, "rounds")->valueint, rounds);
    assert_non_null(strstr(tu_get(j, "same_kernels_check")->valuestring, "checked"));
    const cJSON *w;
    cJSON_ArrayForEach(w, tu_get(j, "workloads"))
    {
        assert_true(cJSON_IsTrue(tu_get(w, "pass")));
        assert_int_equal(tu_get(w, "rounds_run")->valueint, rounds);
        assert_true(tu_get(tu_get(w, "time_ns"), "median")->valuedouble > 0);
        assert_true(tu_get(tu_get(w, "span_activities"), "kernels")->valueint >= 1);
        assert_true(tu_get(w, "flush_gap_us")->valuedouble >= 0);   /* the flush memset ends before every call */
    }
    /* The manifest's protocol says the same, and verifies. */
    char *m = tu_slurp(tu_path_in(sc.dir, "m.json"), NULL);
    assert_non_null(m);
    cJSON *doc = cJSON_Parse(m);
    free(m);
    const cJSON *ms = tu_get(tu_get(tu_get(doc, "protocol"), "spec"), "measurement");
    assert_string_equal(tu_get(ms, "restage")->valuestring, restage);
    assert_string_equal(tu_get(ms, "span")->valuestring, span);
    assert_string_equal(tu_get(ms, "sync")->valuestring, sync);
    assert_string_equal(tu_get(ms, "settle")->valuestring, settle_of(options));
    assert_non_null(strstr(tu_get(ms, "sameKernelsCheck")->valuestring, "checked"));
    assert_int_equal(tu_get(tu_get(tu_get(tu_get(doc, "protocol"), "spec"), "correctness"), "rounds")->valueint, rounds);
    cJSON_Delete(doc);
    TU_EXPECT_OK(rg("verify m.json"), err_text);
    return j;
}

static void test_honest_passes_every_point_on(void **state)
{
    (void)state;
    cJSON_Delete(expect_passes(PLAIN, "", 3, "on", "all", "iteration"));
    cJSON_Delete(expect_passes(NULL, "", 10, "on", "all", "iteration"));   /* ropegrad's own kernel */
}

static void test_honest_passes_old_protocol(void **state)
{
    (void)state;
    cJSON_Delete(expect_passes(PLAIN, "--restage off --span kernels --sync end", 1, "off", "kernels", "end"));
    cJSON_Delete(expect_passes(NULL, "--restage off --span kernels --sync end", 2, "off", "kernels", "end"));
}

static void test_cache_by_pointer_caught(void **state)
{
    (void)state;
    expect_caught(CHEAT("cache"), "--rounds 3", "round 1: output bit-identical to round 0's, inputs differ (a cache)");
}

static void test_nothing_on_second_call_caught(void **state)
{
    (void)state;
    expect_caught(CHEAT("lazy"), "--rounds 3", "round 1: the call wrote no output");
    /* One round: the timed iterations launch nothing. */
    expect_caught(CHEAT("lazy"), "--rounds 1", "iteration 0 launched nothing");
    expect_caught(CHEAT("lazy"), "--rounds 1 --span kernels", "iteration 0 launched nothing (no kernel inside");
}

static void test_output_in_input_caught(void **state)
{
    (void)state;
    expect_caught(CHEAT("alias"), "--rounds 1", "round 0: the call wrote into its input grad_cos");
}

static void test_other_kernels_caught(void **state)
{
    (void)state;
    expect_caught(CHEAT("switch"), "--rounds 3", "launched other kernels than iteration 0");
    /* Under CUDA events the check cannot run: the run passes and says so. */
    int rc = tu_run_prefixed(sc.dir, "env ROPEGRAD_TIMER=cuda-events", out_text, sizeof out_text, err_text,
                             sizeof err_text, "bench " FEW " --rounds 3 --impl " CHEAT("switch") " --json r.json");
    TU_EXPECT_OK(rc, err_text);
    assert_non_null(strstr(out_text, "same kernels every iteration: did not run"));
    cJSON *j = result();
    assert_string_equal(tu_get(j, "timer")->valuestring, "cuda-events");
    assert_non_null(strstr(tu_get(j, "same_kernels_check")->valuestring, "did not run"));
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(tu_get(j, "workloads"), 0), "flush_gap_us"));
    cJSON_Delete(j);
}

/* The first workload's flush gap, in us. */
static double first_gap_us(const cJSON *j)
{
    return tu_get(cJSON_GetArrayItem(tu_get(j, "workloads"), 0), "flush_gap_us")->valuedouble;
}

/* --settle on (the default) and off: recorded (JSON, manifest, the table's
 * line), the run passes; the gap with settle on is the host's wait, longer
 * than a call queued behind the flush. */
static void test_settle_on(void **state)
{
    (void)state;
    cJSON *off = expect_passes(PLAIN, "--settle off", 1, "on", "all", "iteration");
    cJSON *on = expect_passes(PLAIN, "", 1, "on", "all", "iteration");
    TU_EXPECT_OK(rg("bench " FEW " --impl " PLAIN " --rounds 1 --settle on"), err_text);
    assert_non_null(strstr(out_text, "settle on;"));
    assert_non_null(strstr(out_text, "flush gap (GPU idle between the flush and the call"));
    print_message("    flush gap, first workload: settle off %.3f us, on %.3f us\n", first_gap_us(off), first_gap_us(on));
    assert_true(first_gap_us(on) > first_gap_us(off));
    cJSON_Delete(off);
    cJSON_Delete(on);
    cJSON_Delete(expect_passes(NULL, "--settle on --sync end", 2, "on", "all", "end"));
}

/* The first workload's median and its span's memset and memcpy count. */
static double side_run(const char *span, int *memset_n, int *memcpy_n)
{
    cJSON *j = expect_passes(CHEAT("side_stream"), span, 1, "on", strstr(span, "kernels") ? "kernels" : "all",
                             "iteration");
    const cJSON *w0 = cJSON_GetArrayItem(tu_get(j, "workloads"), 0);
    *memset_n = tu_get(tu_get(w0, "span_activities"), "memset")->valueint;
    *memcpy_n = tu_get(tu_get(w0, "span_activities"), "memcpy")->valueint;
    double median = tu_get(tu_get(w0, "time_ns"), "median")->valuedouble;
    cJSON_Delete(j);
    return median;
}

/* A 256 MiB memset and a 64 MiB copy on the plugin's own stream: inside
 * the span with --span all (and far longer than the kernel), outside with
 * --span kernels. */
static void test_other_stream_work_in_span(void **state)
{
    (void)state;
    int ms_all, mc_all, ms_k, mc_k;
    const double all = side_run("--span all", &ms_all, &mc_all);
    const double kernels = side_run("--span kernels", &ms_k, &mc_k);
    print_message("    side stream: span all %.1f us (memset %d, memcpy %d), kernels %.1f us (memset %d, memcpy %d)\n",
                  all / 1e3, ms_all, mc_all, kernels / 1e3, ms_k, mc_k);
    assert_int_equal(ms_all, 1);
    assert_int_equal(mc_all, 1);
    assert_int_equal(ms_k, 0);
    assert_int_equal(mc_k, 0);
    assert_true(all > 2 * kernels);
}

int main(void)
{
#ifdef RG_TEST_GPU_PLUGINS
    const char *skip = ropegrad_cuda_available() ? NULL : "no usable CUDA device";
#else
    const char *skip = "built without CUDA (the cheating CUDA plugins need nvcc)";
#endif
    if (skip) {
        printf("skipped: %s\n", skip);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_honest_passes_every_point_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_honest_passes_old_protocol, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_by_pointer_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_on_second_call_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_in_input_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_kernels_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_stream_work_in_span, setup, teardown),
        cmocka_unit_test_setup_teardown(test_settle_on, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
