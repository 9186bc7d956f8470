/* SPDX-License-Identifier: Apache-2.0 */
/*
 * listen.h -- the address `ropegrad serve --listen` binds.
 *
 *   ADDR:PORT     an IPv4 address, as given (0.0.0.0: every interface)
 *   [ADDR6]:PORT  an IPv6 address, as given ([::1]: loopback, [::]: every interface)
 *   NAME:PORT     a name that resolves to loopback only (localhost:8080): the
 *                 server binds its first IPv4 loopback address, else its
 *                 IPv6 one. A name that resolves to any other address is
 *                 refused: a name can change what it points at, so
 *                 listening beyond this machine takes the address itself.
 * PORT is 0..65535 (0: any free port).
 */
#ifndef RG_LISTEN_H
#define RG_LISTEN_H

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

typedef struct rg_listen_addr {
    struct sockaddr_storage sa;     /* sockaddr_in or sockaddr_in6, port set */
    socklen_t len;
    char host[INET6_ADDRSTRLEN + 2];   /* as a URL names it: 127.0.0.1, [::1] */
    int any;                        /* the wildcard address (no one URL names the server) */
} rg_listen_addr;

/* Parses spec (NULL: 127.0.0.1:8080) into out: 0, or 2 with err saying why. */
int rg_listen_parse(const char *spec, rg_listen_addr *out, char *err, size_t errlen);

/* The name rule on the addresses a name resolved to (list, from
 * getaddrinfo): the first IPv4 loopback address, else the IPv6 one, with
 * port; 2 when the list is empty or holds an address that is not loopback.
 * spec is quoted in err. */
int rg_listen_pick(const char *spec, const struct addrinfo *list, unsigned port, rg_listen_addr *out, char *err,
                   size_t errlen);

#endif
