/* SPDX-License-Identifier: Apache-2.0 */
/*
 * push.c -- POST a manifest to an index (see push.h), on libcurl.
 */
#define _POSIX_C_SOURCE 200809L
#include "push.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

typedef struct sink {
    char buf[4096];
    size_t n;
} sink;

static size_t on_data(char *p, size_t size, size_t nmemb, void *user)
{
    sink *s = user;
    size_t n = size * nmemb, room = sizeof s->buf - 1 - s->n;
    size_t k = n < room ? n : room;
    memcpy(s->buf + s->n, p, k);
    s->n += k;
    s->buf[s->n] = 0;
    return n;
}

int rg_push(const char *base_url, const char *bytes, size_t n, const char *token, long *status, char *reply,
            size_t reply_len, char *err, size_t errlen)
{
    *status = 0;
    if (reply && reply_len) *reply = 0;
    if (!base_url || strncmp(base_url, "http", 4) || !bytes) {
        snprintf(err, errlen, "push: expected an http:// or https:// URL and a manifest");
        return 2;
    }
    size_t bl = strlen(base_url);
    while (bl && base_url[bl - 1] == '/') bl--;
    char url[2048], auth[600];
    if (bl + 10 > sizeof url || (token && strlen(token) > 500)) {
        snprintf(err, errlen, "push: the URL or the token is too long");
        return 2;
    }
    snprintf(url, sizeof url, "%.*s/api/runs", (int)bl, base_url);
    CURL *c = curl_easy_init();
    if (!c) {
        snprintf(err, errlen, "push: cannot start libcurl");
        return 2;
    }
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    if (token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
    }
    sink s = {.n = 0};
    s.buf[0] = 0;
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, bytes);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    memset(auth, 0, sizeof auth);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "push: %s: %s", url, *cerr ? cerr : curl_easy_strerror(rc));
        return 2;
    }
    /* One line of the answer, control characters replaced. */
    char *nl = strchr(s.buf, '\n');
    if (nl) *nl = 0;
    for (char *p = s.buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    if (reply && reply_len) snprintf(reply, reply_len, "%s", s.buf);
    if (*status == 200 || *status == 201) return 0;
    snprintf(err, errlen, "push: %s answered %ld: %.300s", url, *status, s.buf);
    return 1;
}
