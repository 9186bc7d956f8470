/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve_deadline.h -- the request-header deadline of `ropegrad serve`.
 *
 * libmicrohttpd closes a connection that stays idle for its timeout, but a
 * client that sends a byte of its headers every few seconds is never idle:
 * enough of them, from enough addresses, hold every connection the server
 * may open. So a connection gets deadline_s seconds from its start (or from
 * the end of its previous request) to finish a request's headers, and while
 * more than `pressure` connections are waiting for headers the ones waiting
 * longest are closed first: slow clients never hold every slot. A watch
 * thread cuts such connections with shutdown(2); libmicrohttpd then closes
 * them as it does any connection its peer closed.
 */
#ifndef RG_INDEX_SERVE_DEADLINE_H
#define RG_INDEX_SERVE_DEADLINE_H

#include <stddef.h>

#include <microhttpd.h>

typedef struct rg_deadline rg_deadline;

/* A watch (its thread started): 0, or 2 with err. */
int rg_deadline_start(rg_deadline **out, unsigned deadline_s, unsigned pressure, char *err, size_t errlen);
/* Stops the watch thread (before MHD_stop_daemon, which still notifies). */
void rg_deadline_stop(rg_deadline *w);
/* Frees the watch (after MHD_stop_daemon). */
void rg_deadline_free(rg_deadline *w);

/* The MHD_OPTION_NOTIFY_CONNECTION callback (cls: the watch). */
void rg_deadline_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe);
/* A request's headers arrived (the first call of the access handler). */
void rg_deadline_headers_done(struct MHD_Connection *c);
/* A request ended: the connection waits for the next one's headers. */
void rg_deadline_request_done(struct MHD_Connection *c);

#endif
