/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_baseline.c -- the user's baseline file (bench --baseline FILE), both
 * formats: the bench JSON and {"per_workload": [...]}. */
#include <math.h>

#include "fuzz_common.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write("input.json", data, size);
    rg_baseline b;
    char err[RG_ERRLEN] = "";
    if (rg_baseline_load(path, &b, err, sizeof err)) {
        size_t n = strnlen(err, sizeof err);
        FZ_CHECK(n > 0 && n < sizeof err && !memchr(err, '\n', n));
        FZ_CHECK(b.n == 0 && !b.index && !b.time_ns);
        return 0;
    }
    FZ_CHECK(b.n >= 1 && b.index && b.time_ns);
    FZ_CHECK(rg_digest_valid(b.digest));
    FZ_CHECK(!strcmp(b.format, "bench-json") || !strcmp(b.format, "per-workload"));
    for (size_t i = 0; i < b.n; i++) {
        FZ_CHECK(b.index[i] >= 0 && b.index[i] <= 1000000);
        FZ_CHECK(isfinite(b.time_ns[i]) && b.time_ns[i] > 0);
        /* Indices are unique, so a lookup finds exactly this entry's time. */
        FZ_CHECK(rg_baseline_lookup(&b, b.index[i]) == b.time_ns[i]);
    }
    FZ_CHECK(isnan(rg_baseline_lookup(&b, -1)));
    rg_baseline_free(&b);
    return 0;
}
