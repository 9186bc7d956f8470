/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verify.c -- `ropegrad verify FILE`: recompute every digest of a manifest
 * (and check its signatures). A row per object; a failing object's row says
 * what failed. Exit codes: 0 all match, 1 a mismatch (named on its row and in
 * one line on stderr), 2 unreadable or not a manifest (one line on stderr).
 */
#define _GNU_SOURCE   /* getopt_long */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cliopt.h"
#include "commands.h"
#include "record.h"
#include "runs_format.h"

static const char verify_help[] =
    "usage: ropegrad verify FILE [--run-digest sha256:...] [--trusted-keys DIR|FILE]\n\n"
    "Recomputes every digest of a manifest whose object the file carries (sha256 of the RFC 8785\n"
    "form of the object without metadata), lists a digest whose object is absent as not\n"
    "recomputable, checks the comparison key and the figures that follow from others, and\n"
    "any signatures over the run digest (--trusted-keys: which public keys are trusted).\n"
    "--run-digest: also require this run digest (e.g. from the record's page).\n"
    "exit status: 0 all match, 1 a mismatch (named), 2 unreadable or not a manifest\n";

/* What failed, for the run's row: the run object's own checks (its figures,
 * comparison key, the expected run digest) or an object it names. */
static const char *run_verdict(const rg_verify_report *rep, int rc, const char *expect, const char *digest)
{
    if (!rc) return "matches (its references checked)";
    for (int k = 0; k < RG_N_ROLES; k++)
        if (k != RG_ROLE_RUN && rep->state[k] == RG_DIGEST_MISMATCH) return "FAILS: names a MISMATCH below";
    if (expect && strcmp(expect, digest)) return "MISMATCH: not the one expected";
    return "FAILS its checks";
}

/* A row per object: its role, what verify found, its digest; a failing
 * object's row names what failed, with the detail on the line below. */
static void print_rows(const char *path, const rg_verify_report *rep, int rc, const char *expect, const char *err)
{
    tprintf("verify: %s\n", path);
    const char *run = rep->computed[RG_ROLE_RUN];
    const char *v = run_verdict(rep, rc, expect, run);
    tprintf("  %-15s %-33s %s\n", rg_role_name(RG_ROLE_RUN), v, run);
    if (!strncmp(v, "MISMATCH", 8)) tprintf("  %-15s %-33s %s\n", "", "expected (--run-digest)", expect);
    else if (!strcmp(v, "FAILS its checks")) tprintf("  %-15s %s\n", "", err);
    for (int k = 0; k < RG_N_ROLES; k++) {
        if (k == RG_ROLE_RUN) continue;
        if (rep->state[k] == RG_DIGEST_MISMATCH) {
            tprintf("  %-15s %-33s %s\n", rg_role_name(k), "MISMATCH: the run names", rep->recorded[k]);
            tprintf("  %-15s %-33s %s\n", "", "the object in the file hashes to", rep->computed[k]);
        } else if (rep->state[k] == RG_DIGEST_NOT_RECOMPUTABLE) {
            tprintf("  %-15s %-33s %s\n", rg_role_name(k), "not recomputable from this file", rep->recorded[k]);
        } else {
            tprintf("  %-15s %-33s %s\n", rg_role_name(k), "matches", rep->computed[k]);
        }
    }
}

int rg_cmd_verify(int argc, char **argv)
{
    const char *expect = NULL, *trusted = NULL;
    const rg_cli_value_option opts[] = {{"run-digest", &expect}, {"trusted-keys", &trusted}};
    int h = rg_cli_value_options(argc, argv, "verify", opts, sizeof opts / sizeof opts[0], verify_help);
    if (h >= 0) return h;
    if (optind != argc - 1) {
        rg_term_printf(stderr, "ropegrad verify: expected one manifest file (usage: ropegrad verify FILE)\n");
        return 2;
    }
    if (expect && !rg_digest_valid(expect)) {
        rg_term_printf(stderr, "ropegrad verify: --run-digest '%.80s' is not sha256: + 64 hex digits\n", expect);
        return 2;
    }
    const char *path = argv[optind];
    char err[RG_ERRLEN];
    if (trusted && rg_trusted_keys_check(trusted, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad verify: %s\n", err);
        return 2;
    }
    cJSON *doc = rg_json_read_file(path, err, sizeof err);
    if (!doc) {
        rg_term_printf(stderr, "verify: %s\n", err);
        return 2;
    }
    if (rg_manifest_is_legacy(doc)) {
        int rc = rg_legacy_verify(doc, err, sizeof err);
        if (rc) rg_term_printf(stderr, "verify: %s: %s\n", path, err);
        else tprintf("verify: %s: an old ManifestBundle whose own digests match; convert it with `ropegrad migrate %s`\n",
                    path, path);
        cJSON_Delete(doc);
        return rc;
    }
    rg_manifest m;
    if (rg_manifest_read(doc, &m, err, sizeof err)) {
        rg_term_printf(stderr, "verify: %s: %s\n", path, err);
        cJSON_Delete(doc);
        return 2;
    }
    rg_verify_report rep;
    int rc = rg_manifest_verify_typed(&m, &rep, err, sizeof err);
    if (rc == 2) {
        rg_term_printf(stderr, "verify: %s: %s\n", path, err);
        rg_manifest_free(&m);
        cJSON_Delete(doc);
        return 2;
    }
    if (!rc && expect && strcmp(expect, m.obj[RG_ROLE_RUN].digest)) {
        snprintf(err, sizeof err, "the run digest is %s, not the expected %s", m.obj[RG_ROLE_RUN].digest, expect);
        rc = 1;
    }
    print_rows(path, &rep, rc, expect, err);
    if (rc) rg_term_printf(stderr, "verify: %s: %s\n", path, err);
    if (!rc) {
        char sig[RG_ERRLEN];
        int src = rg_signatures_check(&m, trusted, sig, sizeof sig);
        tprintf("  %-15s %s\n", "signatures", sig);
        if (src) rc = src;
    }
    if (!rc) tprintf("verify: ok\n");
    rg_manifest_free(&m);
    cJSON_Delete(doc);
    return rc;
}
