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
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "commands.h"
#include "record.h"
#include "runs_format.h"

static const char verify_help[] =
    "usage: ropegrad verify FILE [--run-digest sha256:...] [--trusted-keys DIR|FILE] [--json]\n\n"
    "Recomputes every digest of a manifest whose object the file carries (sha256 of the RFC 8785\n"
    "form of the object without metadata), lists a digest whose object is absent as not\n"
    "recomputable, checks the comparison key and the figures that follow from others, and\n"
    "any signatures over the run digest (--trusted-keys: which public keys are trusted).\n"
    "--run-digest: also require this run digest (e.g. from the record's page).\n"
    "--json: one JSON document on stdout instead: each object's name, expected and computed\n"
    "digest and ok (null when not recomputable), the signatures, ok and the exit status\n"
    "(an old ManifestBundle: exit 2, convert it with `ropegrad migrate`).\n"
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

/* A string member, or null when s is NULL or empty. */
static int add_str(cJSON *o, const char *k, const char *s)
{
    return !(s && *s ? cJSON_AddStringToObject(o, k, rg_term(s)) : cJSON_AddNullToObject(o, k));
}

/* `verify --json`: the rows as one document. ok per object: true when its
 * digest matches (the run: when it passed every check), false when not, null
 * when the file does not carry the object. 0, or 2 when out of memory or
 * standard output cannot be written (one line on stderr). */
static int print_json(const char *path, const rg_verify_report *rep, int vrc, const char *expect, const char *err,
                      const char *sig, int rc)
{
    cJSON *doc = cJSON_CreateObject();
    int oom = !doc || add_str(doc, "file", path);
    cJSON *objs = oom ? NULL : cJSON_AddArrayToObject(doc, "objects");
    oom |= !objs;
    for (int k = 0; k < RG_N_ROLES && !oom; k++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(objs, o)) {
            cJSON_Delete(o);
            oom = 1;
            break;
        }
        int run = k == RG_ROLE_RUN;
        const char *v = run ? run_verdict(rep, vrc, expect, rep->computed[k]) : "";
        oom |= add_str(o, "name", rg_role_name(k));
        oom |= add_str(o, "expected", run ? expect : rep->recorded[k]);
        oom |= add_str(o, "computed", rep->computed[k]);
        if (run) oom |= !cJSON_AddBoolToObject(o, "ok", !vrc);
        else if (rep->state[k] == RG_DIGEST_NOT_RECOMPUTABLE) oom |= !cJSON_AddNullToObject(o, "ok");
        else oom |= !cJSON_AddBoolToObject(o, "ok", rep->state[k] == RG_DIGEST_MATCH);
        oom |= add_str(o, "state", run ? v
                                       : rep->state[k] == RG_DIGEST_MATCH    ? "matches"
                                         : rep->state[k] == RG_DIGEST_MISMATCH ? "MISMATCH"
                                                                              : "not recomputable from this file");
    }
    if (!oom) {
        oom |= add_str(doc, "error", vrc ? err : NULL);
        oom |= add_str(doc, "signatures", sig);
        oom |= !cJSON_AddBoolToObject(doc, "ok", !rc);
        oom |= !cJSON_AddNumberToObject(doc, "exit", rc);
    }
    char *text = oom ? NULL : cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text) {
        rg_term_printf(stderr, "ropegrad verify: out of memory\n");
        return 2;
    }
    int bad = fputs(text, stdout) < 0 || putchar('\n') == EOF || fflush(stdout);
    free(text);
    if (bad) rg_term_printf(stderr, "ropegrad verify: cannot write to standard output\n");
    return bad ? 2 : 0;
}

/* Takes --json out of argv (the other options are rg_cli_value_options');
 * 1 when it was there. Operands after "--" are left alone. */
static int take_json_flag(int *argc, char **argv)
{
    int found = 0, j = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--")) {
            while (i < *argc) argv[j++] = argv[i++];
            break;
        }
        if (!strcmp(argv[i], "--json")) found = 1;
        else argv[j++] = argv[i];
    }
    *argc = j;
    argv[j] = NULL;
    return found;
}

int rg_cmd_verify(int argc, char **argv)
{
    const char *expect = NULL, *trusted = NULL;
    int json = take_json_flag(&argc, argv);
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
        else if (json) {   /* its digests are the old layout's: no rows to report */
            rg_term_printf(stderr, "verify: %s: an old ManifestBundle (its own digests match): --json reads "
                           "manifests only; convert it with `ropegrad migrate %s`\n", path, path);
            rc = 2;
        }
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
    int vrc = rc;   /* the digests and checks; then the signatures */
    char sig[RG_ERRLEN] = "";
    if (!rc) rc = rg_signatures_check(&m, trusted, sig, sizeof sig);
    if (json) {
        if (print_json(path, &rep, vrc, expect, err, sig, rc)) rc = 2;
    } else {
        print_rows(path, &rep, vrc, expect, err);
        if (!vrc) tprintf("  %-15s %s\n", "signatures", sig);
        if (!rc) tprintf("verify: ok\n");
    }
    if (vrc) rg_term_printf(stderr, "verify: %s: %s\n", path, err);
    rg_manifest_free(&m);
    cJSON_Delete(doc);
    return rc;
}
