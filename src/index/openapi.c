/* SPDX-License-Identifier: Apache-2.0 */
/*
 * openapi.c -- the OpenAPI 3.1 document of `ropegrad serve`, served at
 * /api/openapi.json. Written by hand, route by route: test_serve_openapi.c
 * checks that it lists exactly the routes of routes.c (path and method).
 */
#include "routes.h"

#include <pthread.h>
#include <string.h>

#define ERR_JSON "{\"description\":\"the error, as {status, error}\",\"content\":{\"application/json\":{\"schema\":{\"$ref\":\"#/components/schemas/Error\"}}}}"
#define HTML_OK "{\"description\":\"the page\",\"content\":{\"text/html\":{\"schema\":{\"type\":\"string\"}}}}"
#define RUN_PARAM "{\"$ref\":\"#/components/parameters/run\"}"
#define WRITE_SECURITY "\"security\":[{\"bearer\":[]}]"

static const char *const parts[] = {
    "{\"openapi\":\"3.1.0\","
    "\"info\":{\"title\":\"ropegrad index\",\"version\":\"0.2.0\",\"license\":{\"name\":\"Apache-2.0\","
    "\"identifier\":\"Apache-2.0\"},\"description\":\"The HTTP interface of `ropegrad serve`: pages (text/html), "
    "the same data as JSON under /api/, the stored manifests byte for byte, and the writes (a bearer token, or the "
    "pages' forms with their CSRF field). A run is named by its local id or by the first 8 hex digits of its run "
    "digest; a prefix two runs share answers 404 naming both. Errors of /api/ routes are JSON {status, error}; "
    "a write to a registry that is read-only, busy or replaced answers 503, to a full disk 507.\"},"
    "\"paths\":{"
    "\"/\":{\"get\":{\"summary\":\"the problems, each group's #1\",\"responses\":{\"200\":" HTML_OK "}}},"
    "\"/api/problems\":{\"get\":{\"summary\":\"the problems and their groups as JSON\",\"responses\":{\"200\":"
    "{\"description\":\"the problems\",\"content\":{\"application/json\":{\"schema\":{\"type\":\"object\"}}}}}}},"
    "\"/problems/{definition}\":{\"get\":{\"summary\":\"one problem: its groups, ranked\",\"parameters\":["
    "{\"$ref\":\"#/components/parameters/definition\"}],\"responses\":{\"200\":" HTML_OK ",\"404\":" HTML_OK "}}},"
    "\"/api/problems/{definition}\":{\"get\":{\"summary\":\"one problem as JSON (rows carry rank_class and "
    "rank_reason)\",\"parameters\":[{\"$ref\":\"#/components/parameters/definition\"}],\"responses\":{\"200\":"
    "{\"description\":\"the problem\",\"content\":{\"application/json\":{\"schema\":{\"type\":\"object\"}}}},"
    "\"404\":" ERR_JSON "}}},"
    "\"/records/{definition}\":{\"get\":{\"summary\":\"one problem's records over time, per group\",\"parameters\":["
    "{\"$ref\":\"#/components/parameters/definition\"}],\"responses\":{\"200\":" HTML_OK ",\"404\":" HTML_OK "}}},"
    "\"/runs/{run}\":{\"get\":{\"summary\":\"one run's page\",\"parameters\":[" RUN_PARAM "],\"responses\":{"
    "\"200\":" HTML_OK ",\"404\":" HTML_OK ",\"500\":" HTML_OK "}}},"
    "\"/runs/{run}.json\":{\"get\":{\"summary\":\"the run's manifest, as stored\",\"parameters\":[" RUN_PARAM "],"
    "\"responses\":{\"200\":{\"description\":\"the manifest\",\"content\":{\"application/json\":{\"schema\":"
    "{\"type\":\"object\"}}}},\"404\":" ERR_JSON "}}},",
    "\"/api/runs/{run}\":{\"get\":{\"summary\":\"one run as JSON\",\"parameters\":[" RUN_PARAM "],\"responses\":{"
    "\"200\":{\"description\":\"the run\",\"content\":{\"application/json\":{\"schema\":{\"type\":\"object\"}}}},"
    "\"404\":" ERR_JSON "}}},"
    "\"/history/{run}\":{\"get\":{\"summary\":\"the run's implementation line over revisions\",\"parameters\":["
    RUN_PARAM "],\"responses\":{\"200\":" HTML_OK ",\"404\":" HTML_OK "}}},"
    "\"/compare/{a}/{b}\":{\"get\":{\"summary\":\"two runs side by side, per workload\",\"parameters\":["
    "{\"name\":\"a\",\"in\":\"path\",\"required\":true,\"schema\":{\"$ref\":\"#/components/schemas/RunName\"}},"
    "{\"name\":\"b\",\"in\":\"path\",\"required\":true,\"schema\":{\"$ref\":\"#/components/schemas/RunName\"}}],"
    "\"responses\":{\"200\":" HTML_OK ",\"404\":" HTML_OK "}}},"
    "\"/search\":{\"get\":{\"summary\":\"runs and problems matching q\",\"parameters\":[{\"name\":\"q\",\"in\":"
    "\"query\",\"required\":false,\"schema\":{\"type\":\"string\"}}],\"responses\":{\"200\":" HTML_OK "}}},"
    "\"/api/regressions\":{\"get\":{\"summary\":\"every line's latest revision checked against its previous one "
    "(as `ropegrad runs regressions --json`)\",\"responses\":{\"200\":{\"description\":\"the feed\",\"content\":"
    "{\"application/json\":{\"schema\":{\"type\":\"object\"}}}}}}},"
    "\"/api/openapi.json\":{\"get\":{\"summary\":\"this document\",\"responses\":{\"200\":{\"description\":"
    "\"OpenAPI 3.1\",\"content\":{\"application/json\":{\"schema\":{\"type\":\"object\"}}}}}}},"
    "\"/api/runs\":{\"post\":{\"summary\":\"store a manifest (as `ropegrad runs push`); verified first\","
    WRITE_SECURITY ",\"requestBody\":{\"required\":true,\"content\":{\"application/json\":{\"schema\":"
    "{\"type\":\"object\"}}}},\"responses\":{\"201\":{\"description\":\"stored (Location: its page)\"},",
    "\"200\":{\"description\":\"already stored\"},\"400\":" ERR_JSON ",\"401\":" ERR_JSON ",\"403\":" ERR_JSON
    ",\"413\":" ERR_JSON ",\"422\":" ERR_JSON ",\"503\":" ERR_JSON ",\"507\":" ERR_JSON "}}},"
    "\"/api/runs/{run}/notes\":{\"post\":{\"summary\":\"attach a note {kind, text} (kind: note, reproduction or "
    "flag)\"," WRITE_SECURITY ",\"parameters\":[" RUN_PARAM "],\"requestBody\":{\"required\":true,\"content\":"
    "{\"application/json\":{\"schema\":{\"type\":\"object\",\"required\":[\"text\"],\"properties\":{\"kind\":"
    "{\"enum\":[\"note\",\"reproduction\",\"flag\"]},\"text\":{\"type\":\"string\"}}}}}},\"responses\":{\"201\":"
    "{\"description\":\"added\"},\"400\":" ERR_JSON ",\"401\":" ERR_JSON ",\"404\":" ERR_JSON ",\"503\":" ERR_JSON
    ",\"507\":" ERR_JSON "}}},"
    "\"/runs/{run}/notes\":{\"post\":{\"summary\":\"the run page's note form (token and csrf fields)\","
    "\"parameters\":[" RUN_PARAM "],\"requestBody\":{\"required\":true,\"content\":{"
    "\"application/x-www-form-urlencoded\":{\"schema\":{\"$ref\":\"#/components/schemas/Form\"}}}},",
    "\"responses\":{\"303\":{\"description\":\"added: back to the run page\"},\"401\":" HTML_OK ",\"403\":" HTML_OK
    ",\"503\":" HTML_OK ",\"507\":" HTML_OK "}}},"
    "\"/runs/{run}/flags\":{\"post\":{\"summary\":\"the run page's report-an-issue form (a note of kind flag)\","
    "\"parameters\":[" RUN_PARAM "],\"requestBody\":{\"required\":true,\"content\":{"
    "\"application/x-www-form-urlencoded\":{\"schema\":{\"$ref\":\"#/components/schemas/Form\"}}}},"
    "\"responses\":{\"303\":{\"description\":\"added: back to the run page\"},\"401\":" HTML_OK ",\"403\":" HTML_OK
    ",\"503\":" HTML_OK ",\"507\":" HTML_OK "}}}"
    "},"
    "\"components\":{"
    "\"securitySchemes\":{\"bearer\":{\"type\":\"http\",\"scheme\":\"bearer\",\"description\":\"the write token "
    "(serve --write-token-file)\"}},"
    "\"parameters\":{"
    "\"run\":{\"name\":\"run\",\"in\":\"path\",\"required\":true,\"schema\":{\"$ref\":\"#/components/schemas/RunName\"}},"
    "\"definition\":{\"name\":\"definition\",\"in\":\"path\",\"required\":true,\"schema\":{\"type\":\"string\"},"
    "\"description\":\"the problem's definition name, e.g. 014_rotary_embedding_with_attention_scaling_backward\"}},"
    "\"schemas\":{"
    "\"RunName\":{\"type\":\"string\",\"pattern\":\"^([1-9][0-9]{0,14}|[0-9a-f]{8})$\",\"description\":\"a run's "
    "local id, or the first 8 hex digits of its run digest (tried first; a prefix no run has, all digits, is an id)\"},"
    "\"Form\":{\"type\":\"object\",\"required\":[\"token\",\"csrf\",\"text\"],\"properties\":{\"token\":{\"type\":"
    "\"string\"},\"csrf\":{\"type\":\"string\"},\"text\":{\"type\":\"string\"},\"kind\":{\"type\":\"string\"}}},"
    "\"Error\":{\"type\":\"object\",\"required\":[\"status\",\"error\"],\"properties\":{\"status\":{\"type\":"
    "\"integer\"},\"error\":{\"type\":\"string\"}}}}}}\n",
};

static char joined[16384];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The parts in one buffer (C11 compilers need not take a string literal over 4095 bytes). */
static void join(void)
{
    size_t at = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t n = strlen(parts[i]);
        if (at + n >= sizeof joined) {   /* never: a test checks the document parses */
            joined[0] = 0;
            return;
        }
        memcpy(joined + at, parts[i], n);
        at += n;
    }
    joined[at] = 0;
}

const char *rg_openapi_json(void)
{
    pthread_once(&once, join);
    return joined;
}
