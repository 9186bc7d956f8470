/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record.c -- what `ropegrad bench --record / --manifest / --baseline` does
 * after a completed run: build the manifest, check it the way `verify` will,
 * write it atomically, store it in the registry.
 */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record.h"

int rg_record_bench(const rg_run_result *r, const rg_suite *s, const rg_record_options *o,
                    int64_t *run_id, char *err, size_t errlen)
{
    if (run_id) *run_id = 0;
    if (!r || !s || !o) {
        snprintf(err, errlen, "record: no run, suite or options");
        return 2;
    }
    if (!o->record && !o->manifest_path) return 0;   /* --baseline alone records nothing */
    rg_baseline base, *b = NULL;
    if (o->baseline_path) {
        if (rg_baseline_load(o->baseline_path, &base, err, errlen)) return 2;
        b = &base;
    }
    cJSON *m = rg_manifest_build(r, s, b, err, errlen);
    if (b) rg_baseline_free(b);
    if (!m) return 2;
    char key_id[RG_DIGEST_LEN];
    if (o->sign_key && rg_manifest_sign(m, o->sign_key, key_id, err, errlen)) {
        cJSON_Delete(m);
        return 2;
    }
    /* What we write must verify: check it now rather than let a user find
     * out later (a NaN sneaking into a figure would be caught here). */
    char msg[RG_ERRLEN];
    if (rg_manifest_verify(m, msg, sizeof msg)) {
        snprintf(err, errlen, "record: the manifest just built does not verify: %s", msg);
        cJSON_Delete(m);
        return 2;
    }
    /* Stored first, then written: a manifest file only ever exists for a
     * run the registry took (when --record is given). */
    int rc = 0;
    char *text = o->manifest_path ? rg_json_print(m, 1, err, errlen) : NULL;
    if (o->manifest_path && !text) rc = 2;
    if (!rc && o->record) {
        rg_registry *g;
        rc = rg_registry_open(rg_registry_path(o->db_path), 1, &g, err, errlen);
        if (!rc) {
            int existed;
            rc = rg_registry_store(g, m, RG_EVIDENCE_MEASURED, 0, run_id, &existed, err, errlen) ? 2 : 0;
            rg_registry_close(g);
        }
    }
    if (!rc && text) rc = rg_write_file_atomic(o->manifest_path, text, strlen(text), err, errlen) ? 2 : 0;
    free(text);
    cJSON_Delete(m);
    return rc;
}

/* Whether a registry can be created at path, which does not exist yet,
 * without creating it (an interrupted or failed run leaves no file): the
 * nearest folder of path that exists (rg_registry_open makes the missing
 * ones) must be a folder that takes a new entry, probed with a temporary
 * folder made and removed at once. 0, or 2 with a message. */
static int creatable(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    struct stat st;
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
        snprintf(err, errlen, "%.200s...: path too long", path);
        return 2;
    }
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash) snprintf(dir, sizeof dir, ".");
        else slash[slash == dir] = '\0';   /* "/x" -> "/" */
        if (stat(dir, &st) == 0) break;
        if (errno != ENOENT || !slash || !strcmp(dir, "/")) {
            snprintf(err, errlen, "%s: cannot create a registry there (%s: %s)", path, dir, strerror(errno));
            return 2;
        }
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: cannot create a registry there (%s is not a folder)", path, dir);
        return 2;
    }
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.ropegrad-probe-XXXXXX", dir);
    if (!mkdtemp(probe)) {
        snprintf(err, errlen, "%s: cannot create a registry there (%s: %s)", path, dir, strerror(errno));
        return 2;
    }
    rmdir(probe);
    return 0;
}

int rg_record_precheck(const rg_record_options *o, char *err, size_t errlen)
{
    if (!o || !o->record) return 0;
    const char *path = rg_registry_path(o->db_path);
    if (access(path, F_OK) != 0) return creatable(path, err, errlen);   /* created when the run is stored */
    rg_registry *g;
    if (rg_registry_open(path, 1, &g, err, errlen)) return 2;
    int ro = rg_registry_read_only(g);
    rg_registry_close(g);
    if (ro) {
        snprintf(err, errlen, "%s: read-only (the file, its folder or its mount): cannot record a run", path);
        return 2;
    }
    return 0;
}
