/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_field_fixture.h -- named fixture runs for the field's tests: a run of
 * the fixture suite (test_record_fixture.h) under an implementation name,
 * as manifest text, and its import with the id it must get.
 */
#ifndef TEST_FIELD_FIXTURE_H
#define TEST_FIELD_FIXTURE_H

#include "test_record_fixture.h"

/* A fixture run (scale x the fixture's times) named kernel_name on gpu ("":
 * a CPU), observed at `stamp` (test_record_fixture.h), passed or not (its
 * second workload failed); malloc'd text, NULL on error. */
static char *fx_named_run_text(const char *gpu, const char *kernel_name, double scale, int stamp, int passed)
{
    rg_suite s;
    rg_run_result r;
    char err[RG_ERRLEN];
    fx_suite(&s);
    fx_run(&r, &s, gpu, 0, scale, stamp);
    snprintf(r.kernel_name, sizeof r.kernel_name, "%s", kernel_name);
    if (!passed) {
        r.workloads[1].check.pass = 0;
        r.passed = r.total - 1;
    }
    cJSON *m = rg_manifest_build(&r, &s, NULL, err, sizeof err);
    char *t = m ? rg_json_print(m, 0, err, sizeof err) : NULL;
    if (!t) fprintf(stderr, "fx_named_run_text: %s\n", err);
    cJSON_Delete(m);
    fx_run_free(&r);
    fx_suite_free(&s);
    return t;
}

/* Imports text (freed) as evidence "imported"; 0 when it got id want. */
static int fx_add(rg_registry *g, char *text, int64_t want)
{
    char err[RG_ERRLEN];
    int64_t id = 0;
    int existed;
    int rc = !text || rg_registry_import(g, text, strlen(text), RG_EVIDENCE_IMPORTED, &id, &existed, err, sizeof err);
    if (rc || id != want) fprintf(stderr, "import: %s (id %lld)\n", text ? err : "no manifest", (long long)id);
    free(text);
    return rc || id != want ? -1 : 0;
}

#endif
