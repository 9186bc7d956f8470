/* SPDX-License-Identifier: Apache-2.0 */
/*
 * listen.c -- the address `ropegrad serve --listen` binds (see listen.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "listen.h"

#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
    return 0;
}

/* out from an IPv4 or IPv6 address (in_addr or in6_addr at ip) and port. */
static void set_addr(rg_listen_addr *out, int family, const void *ip, unsigned port)
{
    memset(out, 0, sizeof *out);
    char text[INET6_ADDRSTRLEN];
    inet_ntop(family, ip, text, sizeof text);
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)(void *)&out->sa;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        memcpy(&a->sin_addr, ip, sizeof a->sin_addr);
        out->len = sizeof *a;
        out->any = a->sin_addr.s_addr == htonl(INADDR_ANY);
        snprintf(out->host, sizeof out->host, "%s", text);
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)(void *)&out->sa;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        memcpy(&a->sin6_addr, ip, sizeof a->sin6_addr);
        out->len = sizeof *a;
        out->any = IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr);
        snprintf(out->host, sizeof out->host, "[%s]", text);
    }
}

int rg_listen_pick(const char *spec, const struct addrinfo *list, unsigned port, rg_listen_addr *out, char *err,
                   size_t errlen)
{
    if (!spec || !out || port > 65535) {
        snprintf(err, errlen, "--listen: no address, output or a port above 65535");
        return 2;
    }
    const struct sockaddr *v4 = NULL, *v6 = NULL;
    for (const struct addrinfo *a = list; a; a = a->ai_next) {
        if (!a->ai_addr || (a->ai_family != AF_INET && a->ai_family != AF_INET6)) continue;
        if (!is_loopback(a->ai_addr)) {
            char text[INET6_ADDRSTRLEN] = "?";
            const void *ip = a->ai_family == AF_INET
                                 ? (const void *)&((const struct sockaddr_in *)(const void *)a->ai_addr)->sin_addr
                                 : (const void *)&((const struct sockaddr_in6 *)(const void *)a->ai_addr)->sin6_addr;
            inet_ntop(a->ai_family, ip, text, sizeof text);
            snprintf(err, errlen,
                     "--listen '%.100s': the name resolves to %s, not a loopback address; to listen beyond "
                     "this machine give the address itself",
                     spec, text);
            return 2;
        }
        if (a->ai_family == AF_INET && !v4) v4 = a->ai_addr;
        if (a->ai_family == AF_INET6 && !v6) v6 = a->ai_addr;
    }
    if (v4) set_addr(out, AF_INET, &((const struct sockaddr_in *)(const void *)v4)->sin_addr, port);
    else if (v6) set_addr(out, AF_INET6, &((const struct sockaddr_in6 *)(const void *)v6)->sin6_addr, port);
    else {
        snprintf(err, errlen, "--listen '%.100s': the name resolves to no IPv4 or IPv6 address", spec);
        return 2;
    }
    return 0;
}

/* A name, resolved here (no network beyond what the resolver does). */
static int resolve(const char *spec, const char *host, unsigned port, rg_listen_addr *out, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *list = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &list);
    if (rc) {
        snprintf(err, errlen, "--listen '%.100s': '%.64s' is not an address, and does not resolve (%s)", spec, host,
                 gai_strerror(rc));
        return 2;
    }
    rc = rg_listen_pick(spec, list, port, out, err, errlen);
    freeaddrinfo(list);
    return rc;
}

/* HOST and PORT of "HOST:PORT" or "[HOST]:PORT"; *bracketed says which. */
static int split(const char *spec, char *host, size_t hostlen, unsigned *port, int *bracketed, char *err,
                 size_t errlen)
{
    const char *colon = strrchr(spec, ':');
    *bracketed = spec[0] == '[';
    const char *h = spec + *bracketed, *hend = *bracketed ? strchr(spec, ']') : colon;
    if (!colon || !hend || hend == h || (size_t)(hend - h) >= hostlen || (*bracketed && hend + 1 != colon) ||
        (!*bracketed && memchr(h, ':', (size_t)(hend - h)))) {
        snprintf(err, errlen, "--listen '%.100s': expected ADDR:PORT, e.g. 127.0.0.1:8080, [::1]:8080 or localhost:8080",
                 spec);
        return 2;
    }
    memcpy(host, h, (size_t)(hend - h));
    host[hend - h] = 0;
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || !isdigit((unsigned char)colon[1]) || *end || p > 65535) {
        snprintf(err, errlen, "--listen '%.100s': the port is not a number in 0..65535", spec);
        return 2;
    }
    *port = (unsigned)p;
    return 0;
}

int rg_listen_parse(const char *spec, rg_listen_addr *out, char *err, size_t errlen)
{
    if (!out) {
        snprintf(err, errlen, "--listen: no output");
        return 2;
    }
    if (!spec) spec = "127.0.0.1:8080";
    char host[256];
    unsigned port;
    int bracketed;
    if (split(spec, host, sizeof host, &port, &bracketed, err, errlen)) return 2;
    struct in6_addr ip6;
    struct in_addr ip4;
    if (bracketed) {
        if (inet_pton(AF_INET6, host, &ip6) != 1) {
            snprintf(err, errlen, "--listen '%.100s': the address in brackets is not an IPv6 address", spec);
            return 2;
        }
        set_addr(out, AF_INET6, &ip6, port);
        return 0;
    }
    if (inet_pton(AF_INET, host, &ip4) == 1) {
        set_addr(out, AF_INET, &ip4, port);
        return 0;
    }
    return resolve(spec, host, port, out, err, errlen);
}
