/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_catalog.c -- KernelIndex's catalog export (rg_catalog_read, `ropegrad
 * runs import-catalog`), plain or zstd-compressed (the reader sniffs the
 * magic number): either typed rows whose text members are never NULL, or
 * one line of error and nothing kept. */
#include <math.h>

#include "catalog.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write("catalog.jsonl", data, size);
    rg_catalog c;
    char err[512] = "";
    if (rg_catalog_read(path, &c, err, sizeof err)) {
        size_t n = strnlen(err, sizeof err);
        FZ_CHECK(n > 0 && n < sizeof err && !memchr(err, '\n', n));
        FZ_CHECK(c.n_runs == 0 && !c.runs && c.lines == 0);
        return 0;
    }
    FZ_CHECK(c.lines >= 1);
    size_t rows = c.n_sources + c.n_projects + c.n_operations + c.n_aliases + c.n_workloads + c.n_implementations +
                  c.n_runs + c.n_measurements + c.n_events + c.n_artifacts + c.skipped_rows;
    FZ_CHECK(rows == c.lines);
    for (size_t i = 0; i < c.n_runs; i++) {
        const rg_ki_run *r = &c.runs[i];
        FZ_CHECK(r->id && r->run_digest && r->status && r->published_at && r->retracted_at && r->manifest);
        FZ_CHECK(cJSON_IsObject(r->manifest) && r->line >= 1 && (size_t)r->line <= c.lines);
    }
    for (size_t i = 0; i < c.n_implementations; i++)
        FZ_CHECK(c.implementations[i].authors && c.implementations[i].title && c.implementations[i].target_architectures);
    rg_catalog_free(&c);
    return 0;
}
