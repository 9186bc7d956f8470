/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_serve_notes.c -- the notes API and the notes form of the index
 * (src/index/serve.c) over a writable one-run registry (fuzz_serve.h).
 *
 * The input is sent twice: as the JSON body of POST /api/runs/1/notes (with
 * the right bearer token), and as the form body of POST /runs/1/notes and
 * /runs/1/flags from a same-origin page with the right token and CSRF fields
 * appended (fields the input names first win, as in the form parser).
 * Every answer is checked (fz_check_response); a note is only ever 201 or
 * 303 or a 4xx; after each accepted note the run page still renders, with
 * nothing of the note unescaped. */
#include "fuzz_serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_note_status(const rg_response *r, int form)
{
    fz_check_response(r);
    if (form) FZ_CHECK(r->status == 303 || r->status == 400 || r->status == 401 || r->status == 403);
    else FZ_CHECK(r->status == 201 || r->status == 400);
}

static void api_note(rg_server *s, const uint8_t *data, size_t size)
{
    rg_request q = {.method = "POST", .path = "/api/runs/1/notes", .authorization = "Bearer " FZ_TOKEN,
                    .content_type = "application/json", .body = (const char *)data, .body_len = size};
    rg_response r;
    rg_serve_route(s, &q, &r);
    check_note_status(&r, 0);
    if (r.status == 201) fz_check_run_page(s);
    free(r.body);
}

static void form_note(rg_server *s, const char *path, const uint8_t *data, size_t size)
{
    char csrf[65];
    FZ_CHECK(rg_serve_form_csrf(s, csrf) == 0);
    char tail[256];
    int tn = snprintf(tail, sizeof tail, "&token=%s&csrf=%s", FZ_TOKEN, csrf);
    char *body = malloc(size + (size_t)tn + 1);
    if (!body) abort();
    if (size) memcpy(body, data, size);
    memcpy(body + size, tail, (size_t)tn + 1);
    rg_request q = {.method = "POST", .path = path, .host = "127.0.0.1:8080", .origin = "http://127.0.0.1:8080",
                    .content_type = "application/x-www-form-urlencoded", .body = body,
                    .body_len = size + (size_t)tn};
    rg_response r;
    rg_serve_route(s, &q, &r);
    check_note_status(&r, 1);
    if (r.status == 303) fz_check_run_page(s);
    free(r.body);
    free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rg_server *s = fz_server();
    api_note(s, data, size);
    form_note(s, "/runs/1/notes", data, size);
    form_note(s, "/runs/1/flags", data, size);
    rg_serve_destroy(s);
    return 0;
}
