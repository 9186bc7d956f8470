/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve_writer.h -- one thread that runs the server's writes, in order.
 *
 * libmicrohttpd binds each connection to one worker thread, which answers its
 * connections one after another: a push that waits for its write to reach the
 * disk (tens of milliseconds) held up every page of that worker's other
 * connections (the load benchmark's p99 under pushes). Writes go to this
 * thread instead (serve.c suspends the connection meanwhile); SQLite takes one
 * writer at a time anyway.
 */
#ifndef RG_SERVE_WRITER_H
#define RG_SERVE_WRITER_H

#include <stddef.h>

typedef struct rg_writer rg_writer;

/* Starts the thread. 0, or 2 with a message. */
int rg_writer_start(rg_writer **out, char *err, size_t errlen);

/* Queues run(arg), to be run on the writer thread after the jobs queued
 * before it. before(arg), when not NULL, runs first, here, with the queue
 * locked: the job cannot start before it returns. 0 when queued; -1 when
 * the writer is stopping or stopped (or w is NULL): nothing was called. */
int rg_writer_submit(rg_writer *w, void (*run)(void *), void (*before)(void *), void *arg);

/* Runs the jobs already queued, then ends the thread; later submits are
 * refused. w stays valid (other threads may still submit) until rg_writer_free. */
void rg_writer_stop(rg_writer *w);
/* Frees a stopped w (stops it first when it is not). */
void rg_writer_free(rg_writer *w);

#endif
