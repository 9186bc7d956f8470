/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_manifest.h -- helpers for the manifest and registry targets.
 *
 * Every object of a manifest is named by a SHA-256 digest, so a mutated
 * manifest almost never gets past the first digest check and the fuzzer
 * would only ever test that check. fz_reseal() does what a forger would:
 * recomputes every digest and cross-reference after the mutation (as a PNG
 * fuzzer fixes CRCs), so the code behind the digest checks -- the figure
 * checks, the registry, the report -- sees hostile content that verifies.
 * Each target runs the input as given AND resealed.
 */
#ifndef ROPEGRAD_FUZZ_MANIFEST_H
#define ROPEGRAD_FUZZ_MANIFEST_H

#include <math.h>

#include "fuzz_common.h"
#include "record.h"

static inline void fz_check_msg(const char *msg, size_t len)
{
    size_t n = strnlen(msg, len);
    FZ_CHECK(n > 0 && n < len);
}

static inline void fz_set_str(cJSON *o, const char *k, const char *v)
{
    if (!cJSON_IsObject(o)) return;
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    cJSON_AddStringToObject(o, k, v);
}

/* digest of o into out; 0 when o could be hashed. */
static inline int fz_digest(const cJSON *o, char out[RG_DIGEST_LEN])
{
    char err[RG_ERRLEN];
    return o ? rg_digest_json(o, out, err, sizeof err) : 1;
}

/* Recomputes the digests the way manifest.c defines them: each object the
 * run names (protocol, environment, workload, implementation) by the digest
 * of the object without metadata into run.spec, then the comparison key by
 * its written rule. (The run digest itself is recorded nowhere.) */
static inline void fz_reseal(cJSON *m)
{
    static const char *const roles[4] = {"protocol", "environment", "workload", "implementation"};
    static const char *const refs[4] = {"protocolDigest", "environmentDigest", "workloadDigest",
                                        "implementationDigest"};
    cJSON *run = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "run"), "spec");
    if (!cJSON_IsObject(run)) return;
    char d[RG_DIGEST_LEN], err[RG_ERRLEN];
    for (int k = 0; k < 4; k++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(m, roles[k]);
        if (o && !rg_object_digest(o, d, err, sizeof err)) fz_set_str(run, refs[k], d);
    }
    rg_manifest tm;
    if (rg_manifest_read(m, &tm, err, sizeof err)) return;
    if (tm.comparison_key_recorded && !rg_comparison_key(&tm, d, err, sizeof err)) fz_set_str(run, "comparisonKey", d);
    rg_manifest_free(&tm);
}

/* What `runs export` writes, read back: a manifest that verified still
 * verifies after a print/parse round trip (the registry and export rely on
 * rg_json_print keeping every number exact). */
static inline void fz_check_roundtrip(const cJSON *m)
{
    char err[RG_ERRLEN], msg[RG_ERRLEN];
    char *text = rg_json_print(m, 1, err, sizeof err);
    if (!text) {
        /* Verify hashes objects without metadata; the metadata may hold
         * what the printer refuses (e.g. a member name that is not UTF-8).
         * Export then fails with a message, which is acceptable. */
        fz_check_msg(err, sizeof err);
        return;
    }
    cJSON *back = cJSON_Parse(text);
    FZ_CHECK(back);
    int rc = rg_manifest_verify(back, msg, sizeof msg);
    if (rc) fprintf(stderr, "round trip: %s\n", msg);
    FZ_CHECK(rc == 0);
    cJSON_Delete(back);
    free(text);
}

/* The replication path reads the protocol back out of a verified manifest. */
static inline void fz_protocol(const rg_manifest *m)
{
    rg_recorded_protocol p;
    char err[RG_ERRLEN] = "";
    int rc = rg_protocol_from_manifest(m, &p, err, sizeof err);
    FZ_CHECK(rc == 0 || rc == 2);
    if (rc) fz_check_msg(err, sizeof err);
    rg_recorded_protocol_free(&p);
}

#endif
