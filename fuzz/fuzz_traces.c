/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_traces.c -- the official evaluator's traces.jsonl (rg_traces_parse,
 * `ropegrad runs import traces.jsonl`), and the run made from what it
 * accepts against the bundled 014 suite. */
#include <math.h>

#include "fuzz_common.h"
#include "harness.h"
#include "record.h"
#include "traces.h"
#include "traces_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static rg_suite suite;
static int suite_state;   /* 0 not tried, 1 loaded, -1 not */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rg_traces t;
    char err[RG_ERRLEN] = "";
    if (rg_traces_parse((const char *)data, size, "fuzz", &t, err, sizeof err)) {
        size_t n = strnlen(err, sizeof err);
        FZ_CHECK(n > 0 && n < sizeof err && !memchr(err, '\n', n));
        FZ_CHECK(t.n == 0 && !t.t);
        return 0;
    }
    FZ_CHECK(t.n >= 1 && t.n <= RG_TRACES_MAX && t.definition[0] && t.solution[0] && t.hardware[0]);
    for (size_t i = 0; i < t.n; i++) {
        const rg_trace *x = &t.t[i];
        FZ_CHECK(x->uuid[0] && x->status[0] && x->timestamp[0]);
        for (size_t k = 0; k < i; k++) FZ_CHECK(strcmp(t.t[k].uuid, x->uuid));
        if (!rg_trace_failed(x)) FZ_CHECK(x->has_performance && x->latency_ms > 0 && isfinite(x->latency_ms));
        else FZ_CHECK(!x->has_performance);
    }
    if (!suite_state) suite_state = rg_suite_load(RG_SOURCE_DIR "/suites/014-rope_backward", &suite, err, sizeof err) ? -1 : 1;
    if (suite_state > 0) {
        cJSON *m = rg_traces_manifest(&t, &suite, err, sizeof err);
        if (m) FZ_CHECK(rg_manifest_verify(m, err, sizeof err) == 0);
        else FZ_CHECK(err[0] && !strchr(err, '\n'));
        cJSON_Delete(m);
    }
    rg_traces_free(&t);
    return 0;
}
