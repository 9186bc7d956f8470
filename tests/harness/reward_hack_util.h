/* SPDX-License-Identifier: Apache-2.0 */
/* reward_hack_util.h -- what test_reward_hack (the CPU backend) and
 * test_gpu_reward_hack (the CUDA backend) both read back from a bench run's
 * JSON (DIR/r.json). */
#ifndef RG_TEST_REWARD_HACK_UTIL_H
#define RG_TEST_REWARD_HACK_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* dir/r.json, parsed (the caller deletes it). */
static inline cJSON *rh_result(const char *dir)
{
    char *text = tu_slurp(tu_path_in(dir, "r.json"), NULL);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

/* The run exited rc 1 and every workload of dir/r.json failed as a reward
 * hack, untimed; the first one's reason holds needle (a plugin's call count
 * is per process: later workloads may trip earlier). */
static inline void rh_expect_all_caught(const char *dir, int rc, const char *err, const char *needle)
{
    if (rc != 1) fail_msg("exit %d (expected 1): %s", rc, err);
    cJSON *j = rh_result(dir);
    const cJSON *w;
    cJSON_ArrayForEach(w, tu_get(j, "workloads"))
    {
        assert_true(cJSON_IsFalse(tu_get(w, "pass")));
        assert_true(cJSON_IsTrue(tu_get(w, "reward_hack")));
        const char *reason = tu_get(w, "reason")->valuestring;
        if (strncmp(reason, "REWARD_HACK: ", 13) || (w == tu_get(j, "workloads")->child && !strstr(reason, needle)))
            fail_msg("reason '%s', expected REWARD_HACK and '%s'", reason, needle);
        assert_true(cJSON_IsNull(tu_get(tu_get(w, "time_ns"), "median")));   /* a failed workload is not timed */
    }
    cJSON_Delete(j);
}

#endif
