/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_serve_fixture.h -- a server over a test registry for the index's
 * tests (rg_serve_route is called directly; nothing listens until
 * rg_serve_run).
 */
#ifndef TEST_SERVE_FIXTURE_H
#define TEST_SERVE_FIXTURE_H

#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "serve.h"

/* A write token file at path holding token (mode 0600, as serve wants it); 0, or -1. */
static inline int fx_token_file(const char *path, const char *token)
{
    char text[256], err[RG_ERRLEN];
    snprintf(text, sizeof text, "%s\n", token);
    if (rg_write_file_atomic(path, text, strlen(text), err, sizeof err)) return -1;
    return chmod(path, 0600) ? -1 : 0;
}

/* A server on db, read-only when tokfile is NULL; the test fails on an error. */
static inline rg_server *fx_serve(const char *db, const char *tokfile)
{
    rg_serve_options o = {.db_path = db, .listen = "127.0.0.1:0", .write_token_file = tokfile};
    rg_server *s;
    char err[RG_ERRLEN];
    if (rg_serve_create(&o, &s, err, sizeof err)) fail_msg("%s", err);
    return s;
}

#endif
