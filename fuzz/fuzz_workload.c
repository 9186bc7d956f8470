/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_workload.c -- workload.jsonl (one JSON object per line), with a
 * valid definition.json beside it. */
#include "fuzz_suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        fz_write("definition.json", fz_definition, sizeof fz_definition - 1);
        ready = 1;
    }
    fz_write("workload.jsonl", data, size);
    fz_load_and_check();
    return 0;
}
