/* SPDX-License-Identifier: Apache-2.0 */
/* test_reward_hack.c -- correctness over rounds of fresh inputs and the
 * reward-hack checks of the CPU path (src/harness/rounds.c), through
 * `ropegrad bench --impl`: each cheating plugin of tests/plugins/cheat_plugin.c
 * (correct values, a cheated measurement) fails its workloads with the
 * REWARD_HACK reason of the check that caught it, exit 1; the honest example
 * plugin passes every round. With --rounds 1 the cache and lazy cheats pass:
 * the rounds are what catch them. The poison-aware, call-counting,
 * background-thread, input-scribbling and value-keyed-cache cheats pass the
 * rounds: the checked timed calls over rotating input sets catch them. Also: --ground-truth float32-reference and
 * its float64 yardstick in the JSON and the manifest's protocol. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "reward_hack_util.h"

#define PLAIN RG_BINARY_DIR "/examples/plugin-014/libplain014.so"
#define CHEAT(v) RG_BINARY_DIR "/tests/plugins/libcheat_" v ".so"
#define FEW "--backend cpu --workloads 0-1 --warmup 1 --iterations 3 --quiet"

static tu_scratch sc;
static char out_text[1 << 16], err_text[1 << 14];

#define rg(...) tu_run_captured(sc.dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static int setup(void **state)
{
    (void)state;
    return tu_scratch_open(&sc, "rg_hack");
}

static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(sc.dir);
}

static cJSON *result(void) { return rh_result(sc.dir); }

static void expect_caught(const char *plugin, const char *rounds, const char *needle)
{
    int rc = rg("bench " FEW " --impl %s --rounds %s --json r.json", plugin, rounds);
    rh_expect_all_caught(sc.dir, rc, err_text, needle);
}

static void expect_passes(const char *plugin, const char *rounds)
{
    TU_EXPECT_OK(rg("bench " FEW " --impl %s --rounds %s --json r.json", plugin, rounds), err_text);
    cJSON *j = result();
    assert_int_equal(tu_get(j, "rounds")->valueint, atoi(rounds));
    const cJSON *w;
    cJSON_ArrayForEach(w, tu_get(j, "workloads"))
    {
        assert_true(cJSON_IsTrue(tu_get(w, "pass")));
        assert_int_equal(tu_get(w, "rounds_run")->valueint, atoi(rounds));
    }
    cJSON_Delete(j);
}

static void test_honest_plugin_passes_every_round(void **state)
{
    (void)state;
    expect_passes(PLAIN, "10");
}

static void test_cache_by_pointer_caught(void **state)
{
    (void)state;
    expect_caught(CHEAT("cache"), "3", "round 1: output bit-identical to round 0's, inputs differ (a cache)");
    expect_passes(CHEAT("cache"), "1");
}

static void test_nothing_on_second_call_caught(void **state)
{
    (void)state;
    expect_caught(CHEAT("lazy"), "3", "round 1: the call wrote no output");
}

static void test_output_in_input_caught(void **state)
{
    (void)state;
    expect_caught(CHEAT("alias"), "1", "round 0: the call wrote into its input grad_cos");
}

static void test_stops_after_correctness_caught(void **state)
{
    (void)state;
    expect_caught(CHEAT("stop"), "3", "of 3 does not match the reference (input set");
}

/* The cheats below passed while the timed calls were neither filled nor
 * checked (timed_sets.c): each is now caught in its timed calls. The keyed
 * cache: the near-twin input sets share its sampled values, so it serves a
 * stale output (a low matched ratio, not the fill's NaN). */
static void test_timed_cheats_caught(void **state)
{
    (void)state;
    static const char *const cheats[][2] = {
        {"poison", "of 3 does not match the reference (input set"},
        {"count", "of 3 does not match the reference (input set"},
        {"thread", "of 3 does not match the reference (input set"},
        {"scribble", "wrote into its input grad_cos"},
        {"keyed", "matched ratio"},
    };
    for (size_t i = 0; i < sizeof cheats / sizeof cheats[0]; i++) {
        char plugin[512];
        snprintf(plugin, sizeof plugin, RG_BINARY_DIR "/tests/plugins/libcheat_%s.so", cheats[i][0]);
        print_message("    %s\n", cheats[i][0]);
        expect_caught(plugin, "3", cheats[i][1]);
    }
}

/* More timed iterations than one check window: still passes (one checked call per window and the last). */
static void test_honest_plugin_passes_many_iterations(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg("bench --backend cpu --workloads 1 --warmup 3 --iterations 21 --quiet --impl " PLAIN
                    " --rounds 2 --json r.json"), err_text);
    cJSON *j = result();
    const cJSON *w0 = cJSON_GetArrayItem(tu_get(j, "workloads"), 0);
    assert_true(cJSON_IsTrue(tu_get(w0, "pass")));
    assert_true(tu_get(tu_get(w0, "time_ns"), "median")->valuedouble > 0);
    cJSON_Delete(j);
}

/* float32-reference: the official semantics; the float64 yardstick beside it, in JSON and manifest. */
static void test_ground_truth_float32(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg("bench " FEW " --rounds 2 --ground-truth float32-reference --json r.json --manifest m.json"),
                 err_text);
    cJSON *j = result();
    assert_string_equal(tu_get(j, "ground_truth")->valuestring, "float32-reference");
    const cJSON *w0 = cJSON_GetArrayItem(tu_get(j, "workloads"), 0);
    const cJSON *y = tu_get(w0, "float64_yardstick");
    assert_true(cJSON_IsTrue(tu_get(y, "pass")));
    /* The two references differ: float32 arithmetic vs libm in double. */
    assert_true(tu_get(y, "max_abs_err")->valuedouble != tu_get(w0, "max_abs_err")->valuedouble);
    cJSON_Delete(j);
    char *m = tu_slurp(tu_path_in(sc.dir, "m.json"), NULL);
    assert_non_null(m);
    cJSON *doc = cJSON_Parse(m);
    free(m);
    const cJSON *c = tu_get(tu_get(tu_get(doc, "protocol"), "spec"), "correctness");
    assert_string_equal(tu_get(c, "groundTruth")->valuestring, "float32-reference");
    assert_int_equal(tu_get(c, "rounds")->valueint, 2);
    assert_non_null(strstr(tu_get(c, "yardstick")->valuestring, "float64"));
    cJSON_Delete(doc);
    TU_EXPECT_OK(rg("verify m.json"), err_text);
    TU_EXPECT_ONE_LINE_ERROR(rg("bench " FEW " --ground-truth float16"), err_text, "--ground-truth: unknown 'float16'");
    TU_EXPECT_ONE_LINE_ERROR(rg("check --backend cpu --rounds 0"), err_text, "--rounds: '0' is not an integer");
    TU_EXPECT_ONE_LINE_ERROR(rg("check --backend cpu --ground-truth float32-reference --suite %s/suites/011-rope_forward",
                                RG_SOURCE_DIR), err_text, "not available for op 011");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_honest_plugin_passes_every_round, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_by_pointer_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_on_second_call_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_in_input_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stops_after_correctness_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timed_cheats_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(test_honest_plugin_passes_many_iterations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ground_truth_float32, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
