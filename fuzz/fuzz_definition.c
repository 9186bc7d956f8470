/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_definition.c -- definition.json, with a valid workload.jsonl beside it. */
#include "fuzz_suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        fz_write("workload.jsonl", fz_workloads, sizeof fz_workloads - 1);
        ready = 1;
    }
    fz_write("definition.json", data, size);
    fz_load_and_check();
    return 0;
}
