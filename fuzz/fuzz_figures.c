/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_figures.c -- <gpu>-figures.json, against a valid three-workload suite
 * (so per_workload indices and shapes are checked against real workloads). */
#include "fuzz_suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        fz_write("definition.json", fz_definition, sizeof fz_definition - 1);
        fz_write("workload.jsonl", fz_workloads, sizeof fz_workloads - 1);
        ready = 1;
    }
    fz_write("h200-figures.json", data, size);
    fz_load_and_check();
    return 0;
}
