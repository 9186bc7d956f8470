/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve_fill.c -- copies of one manifest with varied run digests, for the
 * index's load benchmark (bench/serve_load.sh). Not part of ropegrad.
 *
 *   serve_fill store DB MANIFEST N     stores N copies (evidence imported)
 *   serve_fill files DIR MANIFEST N K  writes N copies as DIR/push-K..K+N-1.json
 *
 * Copy i differs from the original only in the run object's observedAt (a
 * microsecond suffix) and so in its run digest (the digest of the run
 * object): every copy verifies, and each is a distinct run of the same
 * comparison group. Stored through rg_registry_store_bytes,
 * the function `runs import` and POST /api/runs store with.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

static cJSON *variant(const cJSON *m, long i, char *err, size_t errlen)
{
    cJSON *c = cJSON_Duplicate(m, 1);
    cJSON *run = c ? cJSON_GetObjectItemCaseSensitive(c, "run") : NULL;
    cJSON *spec = run ? cJSON_GetObjectItemCaseSensitive(run, "spec") : NULL;
    const cJSON *at = spec ? cJSON_GetObjectItemCaseSensitive(spec, "observedAt") : NULL;
    if (!cJSON_IsString(at)) {
        snprintf(err, errlen, "not a manifest (no run.spec.observedAt)");
        cJSON_Delete(c);
        return NULL;
    }
    char stamp[64];
    snprintf(stamp, sizeof stamp, "%.19s.%06ldZ", at->valuestring, i % 1000000);
    cJSON_ReplaceItemInObjectCaseSensitive(spec, "observedAt", cJSON_CreateString(stamp));
    return c;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[1], "store") && strcmp(argv[1], "files")) || (!strcmp(argv[1], "files") && argc < 6)) {
        fprintf(stderr, "usage: serve_fill store DB MANIFEST N | serve_fill files DIR MANIFEST N K\n");
        return 2;
    }
    char err[1024], msg[1024];
    cJSON *m = rg_json_read_file(argv[3], err, sizeof err);
    long n = strtol(argv[4], NULL, 10), k0 = argc > 5 ? strtol(argv[5], NULL, 10) : 1;
    if (!m || n <= 0 || n > 1000000) {
        fprintf(stderr, "serve_fill: %s\n", m ? "N must be 1..1000000" : err);
        return 2;
    }
    rg_registry *g = NULL;
    if (!strcmp(argv[1], "store") && rg_registry_open(argv[2], 1, &g, err, sizeof err)) {
        fprintf(stderr, "serve_fill: %s\n", err);
        return 2;
    }
    for (long i = k0; i < k0 + n; i++) {
        cJSON *c = variant(m, i, err, sizeof err);
        char *text = c ? rg_json_print(c, 0, err, sizeof err) : NULL;
        int rc = !text;
        if (!rc && rg_manifest_verify(c, msg, sizeof msg)) {
            snprintf(err, sizeof err, "copy %ld does not verify: %.900s", i, msg);
            rc = 1;
        }
        if (!rc && g) {
            int64_t id;
            int existed;
            rc = rg_registry_store_bytes(g, c, text, strlen(text), RG_EVIDENCE_IMPORTED, &id, &existed, err,
                                         sizeof err);
        } else if (!rc) {
            char path[4200];
            snprintf(path, sizeof path, "%s/push-%ld.json", argv[2], i);
            rc = rg_write_file_atomic(path, text, strlen(text), err, sizeof err);
        }
        free(text);
        cJSON_Delete(c);
        if (rc) {
            fprintf(stderr, "serve_fill: %s\n", err);
            rg_registry_close(g);
            return 2;
        }
    }
    rg_registry_close(g);
    cJSON_Delete(m);
    return 0;
}
