/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manifest_envelope.c -- what the reader (manifest.c) and the builder
 * (manifest_build.c) share: the roles and their kinds, the digest rule, and
 * telling an old ManifestBundle from the current envelope.
 *
 * The digest of an object is "sha256:" + hex SHA-256 of the RFC 8785 form of
 * the object without its metadata member ({apiVersion, kind, spec}): the rule
 * of the public KernelIndex record, checked against its published values in
 * tests/record/test_record_kernelindex.c. The run digest is the digest of the run
 * object, which names the other objects by their digests.
 */
#include <stdio.h>
#include <string.h>

#include "record.h"
#include "rg_util.h"

static const char *const role_names[RG_N_ROLES] = {"run", "protocol", "environment", "workload", "implementation"};
static const char *const role_kinds[RG_N_ROLES] = {"BenchmarkRun", "BenchmarkProtocol", "ExecutionEnvironment",
                                                   "Workload", "Implementation"};

const char *rg_role_name(int role) { return role >= 0 && role < RG_N_ROLES ? role_names[role] : "?"; }
const char *rg_role_kind(int role) { return role >= 0 && role < RG_N_ROLES ? role_kinds[role] : "?"; }

int rg_object_digest(const cJSON *obj, char out[RG_DIGEST_LEN], char *err, size_t errlen)
{
    if (!cJSON_IsObject(obj)) {
        snprintf(err, errlen, "not an object");
        return 2;
    }
    /* A shallow view without metadata: the members are shared, not copied. */
    cJSON view;
    memset(&view, 0, sizeof view);
    view.type = cJSON_Object;
    cJSON *first = NULL, *last = NULL;
    cJSON copies[8];
    int n = 0;
    for (const cJSON *c = obj->child; c; c = c->next) {
        if (c->string && !strcmp(c->string, "metadata")) continue;
        if (n == 8) {
            snprintf(err, errlen, "an object with more than 8 members");
            return 2;
        }
        copies[n] = *c;
        copies[n].next = copies[n].prev = NULL;
        if (!first) first = &copies[n];
        else last->next = &copies[n], copies[n].prev = last;
        last = &copies[n];
        n++;
    }
    if (first) first->prev = last;
    view.child = first;
    return rg_digest_json(&view, out, err, errlen) ? 2 : 0;
}

int rg_manifest_is_legacy(const cJSON *doc)
{
    const char *k = rg_json_str(doc, "kind");
    return k && !strcmp(k, "ManifestBundle") && cJSON_IsArray(rg_json_get(doc, "items"));
}
