/* SPDX-License-Identifier: Apache-2.0 */
/*
 * migrate.c -- `ropegrad migrate FILE...`: old ManifestBundle files converted
 * to the KernelIndex envelope in place, after checking their own digests.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "commands.h"
#include "record.h"
#include "runs_format.h"
#include "strict_json.h"

int rg_cmd_migrate(int argc, char **argv)
{
    int h = rg_cli_help_only(argc, argv, "migrate",
                      "usage: ropegrad migrate FILE...\n\nConverts old ropegrad manifests (kind ManifestBundle) to the "
                      "KernelIndex envelope in place,\nafter checking their own digests; a file already current is left "
                      "as it is.\nexit status: 0 all converted or current, 1 an old file whose digests do not match, "
                      "2 unreadable\n");
    if (h >= 0) return h;
    if (optind >= argc) {
        rg_term_printf(stderr, "ropegrad migrate: expected one or more manifest files (usage: ropegrad migrate FILE...)\n");
        return 2;
    }
    int worst = 0;
    for (int i = optind; i < argc; i++) {
        char err[RG_ERRLEN];
        const char *path = argv[i];
        cJSON *doc = rg_json_read_file(path, err, sizeof err);
        if (!doc) {
            rg_term_printf(stderr, "ropegrad migrate: %s\n", err);
            worst = 2;
            continue;
        }
        if (!rg_manifest_is_legacy(doc)) {
            int rc = rg_manifest_verify(doc, err, sizeof err);
            if (rc) rg_term_printf(stderr, "ropegrad migrate: %s: not an old manifest, and it does not verify: %s\n", path, err);
            else tprintf("%s: already current\n", path);
            if (rc > worst) worst = rc;
            cJSON_Delete(doc);
            continue;
        }
        int rc = rg_legacy_verify(doc, err, sizeof err);
        cJSON *nd = rc ? NULL : rg_manifest_convert_legacy(doc, err, sizeof err);
        cJSON_Delete(doc);
        char *text = nd ? rg_json_print(nd, 1, err, sizeof err) : NULL;
        if (text && !rg_manifest_verify(nd, err, sizeof err) &&
            !rg_write_file_atomic(path, text, strlen(text), err, sizeof err)) {
            tprintf("%s: converted to the KernelIndex envelope\n", path);
        } else {
            rg_term_printf(stderr, "ropegrad migrate: %s: %s\n", path, err);
            if (!rc) rc = 2;
            if (rc > worst || worst == 0) worst = rc;
        }
        free(text);
        cJSON_Delete(nd);
    }
    return worst;
}
