/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_manifest.h -- helpers for the manifest and registry targets.
 *
 * Every item of a manifest is sealed by a SHA-256 digest, so a mutated
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

static inline cJSON *fz_item(cJSON *m, const char *kind)
{
    cJSON *items = cJSON_GetObjectItemCaseSensitive(m, "items");
    if (!cJSON_IsArray(items)) return NULL;
    for (cJSON *it = items->child; it; it = it->next) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "kind");
        if (cJSON_IsString(k) && k->valuestring && !strcmp(k->valuestring, kind)) return it;
    }
    return NULL;
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

/* Recomputes the digests the way manifest.c defines them (record.h and the
 * comment at the top of manifest.c): workloadDigest, protocolDigest,
 * environmentDigest, comparisonKey over {definition, workloadDigest, device,
 * protocolDigest}, then each item's metadata.digest over its spec. */
static inline void fz_reseal(cJSON *m)
{
    cJSON *ir = fz_item(m, "BenchmarkRun"), *ip = fz_item(m, "BenchmarkProtocol"),
          *ie = fz_item(m, "ExecutionEnvironment");
    cJSON *run = cJSON_GetObjectItemCaseSensitive(ir, "spec"), *proto = cJSON_GetObjectItemCaseSensitive(ip, "spec"),
          *env = cJSON_GetObjectItemCaseSensitive(ie, "spec");
    char dw[RG_DIGEST_LEN], dp[RG_DIGEST_LEN], de[RG_DIGEST_LEN], dk[RG_DIGEST_LEN], dr[RG_DIGEST_LEN];
    int have_w = cJSON_IsObject(run) && !fz_digest(cJSON_GetObjectItemCaseSensitive(run, "workload"), dw);
    int have_p = cJSON_IsObject(proto) && !fz_digest(proto, dp);
    int have_e = cJSON_IsObject(env) && !fz_digest(env, de);
    if (have_w) fz_set_str(run, "workloadDigest", dw);
    if (have_p) fz_set_str(run, "protocolDigest", dp);
    if (have_e) fz_set_str(run, "environmentDigest", de);
    /* The device: the GPU product when there is one, else the CPU model. */
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(env, "gpu"), *cpu = cJSON_GetObjectItemCaseSensitive(env, "cpu");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(gpu, "product");
    if (!cJSON_IsObject(gpu) || !cJSON_IsString(dev)) dev = cJSON_GetObjectItemCaseSensitive(cpu, "model");
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(run, "definition");
    if (have_w && have_p && cJSON_IsString(dev) && cJSON_IsString(def)) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "definition", def->valuestring);
        cJSON_AddStringToObject(k, "workloadDigest", dw);
        cJSON_AddStringToObject(k, "device", dev->valuestring);
        cJSON_AddStringToObject(k, "protocolDigest", dp);
        if (!fz_digest(k, dk)) fz_set_str(run, "comparisonKey", dk);
        cJSON_Delete(k);
    }
    if (cJSON_IsObject(run) && !fz_digest(run, dr))
        fz_set_str(cJSON_GetObjectItemCaseSensitive(ir, "metadata"), "digest", dr);
    if (have_p) fz_set_str(cJSON_GetObjectItemCaseSensitive(ip, "metadata"), "digest", dp);
    if (have_e) fz_set_str(cJSON_GetObjectItemCaseSensitive(ie, "metadata"), "digest", de);
}

/* What `runs export` writes, read back: a manifest that verified still
 * verifies after a print/parse round trip (the registry and export rely on
 * rg_json_print keeping every number exact). */
static inline void fz_check_roundtrip(const cJSON *m)
{
    char err[RG_ERRLEN], msg[RG_ERRLEN];
    char *text = rg_json_print(m, 1, err, sizeof err);
    if (!text) {
        /* Verify hashes the specs only; the bundle's own metadata may hold
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
static inline void fz_protocol(const cJSON *m)
{
    rg_recorded_protocol p;
    char err[RG_ERRLEN] = "";
    int rc = rg_protocol_from_manifest(m, &p, err, sizeof err);
    FZ_CHECK(rc == 0 || rc == 2);
    if (rc) fz_check_msg(err, sizeof err);
    rg_recorded_protocol_free(&p);
}

#endif
