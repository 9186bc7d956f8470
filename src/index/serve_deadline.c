/* SPDX-License-Identifier: Apache-2.0 */
/* serve_deadline.c -- the request-header deadline of `ropegrad serve` (serve_deadline.h). */
#define _POSIX_C_SOURCE 200809L
#include "serve_deadline.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define TICK_MS 100

/* One connection, in the watch's list (oldest wait first). */
typedef struct conn {
    struct rg_deadline *w;
    int fd;
    int waiting;        /* for a request's headers */
    int cut;            /* shut down by the watch */
    double t0;          /* when the wait began (monotonic seconds) */
    struct conn *prev, *next;
} conn;

struct rg_deadline {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int running, stopping;
    unsigned deadline_s, pressure;
    size_t waiting;     /* connections waiting for headers, not cut */
    conn *head, *tail;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void unlink_conn(rg_deadline *w, conn *e)
{
    if (e->prev) e->prev->next = e->next;
    else w->head = e->next;
    if (e->next) e->next->prev = e->prev;
    else w->tail = e->prev;
    e->prev = e->next = NULL;
}

static void append_conn(rg_deadline *w, conn *e)
{
    e->prev = w->tail;
    e->next = NULL;
    if (w->tail) w->tail->next = e;
    else w->head = e;
    w->tail = e;
}

/* Under the lock: cut what waited past the deadline, and the oldest waits beyond the pressure. */
static void sweep(rg_deadline *w)
{
    double t = now_s();
    for (conn *e = w->head; e; e = e->next) {
        if (!e->waiting || e->cut) continue;
        if (t - e->t0 < w->deadline_s && w->waiting <= w->pressure) continue;
        shutdown(e->fd, SHUT_RDWR);   /* the fd stays open until MHD closes it, after it notified CLOSED */
        e->cut = 1;
        w->waiting--;
    }
}

static void *watch(void *p)
{
    rg_deadline *w = p;
    pthread_mutex_lock(&w->mu);
    while (!w->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&w->cv, &w->mu, &until);
        if (!w->stopping) sweep(w);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int rg_deadline_start(rg_deadline **out, unsigned deadline_s, unsigned pressure, char *err, size_t errlen)
{
    *out = NULL;
    rg_deadline *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    w->deadline_s = deadline_s ? deadline_s : 1;
    w->pressure = pressure ? pressure : 1;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    int rc = pthread_create(&w->thread, NULL, watch, w);
    if (rc) {
        snprintf(err, errlen, "serve: cannot start the header deadline's thread: %s", strerror(rc));
        rg_deadline_free(w);
        return 2;
    }
    w->running = 1;
    *out = w;
    return 0;
}

void rg_deadline_stop(rg_deadline *w)
{
    if (!w || !w->running) return;
    pthread_mutex_lock(&w->mu);
    w->stopping = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    w->running = 0;
}

void rg_deadline_free(rg_deadline *w)
{
    if (!w) return;
    rg_deadline_stop(w);
    while (w->head) {   /* none after MHD_stop_daemon notified every close; kept safe anyway */
        conn *e = w->head;
        unlink_conn(w, e);
        free(e);
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

void rg_deadline_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
    rg_deadline *w = cls;
    if (!w || !socket_context) return;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn *e = fd ? calloc(1, sizeof *e) : NULL;
        if (!e) return;   /* unwatched: the idle timeout still applies */
        e->w = w;
        e->fd = fd->connect_fd;
        e->waiting = 1;
        e->t0 = now_s();
        pthread_mutex_lock(&w->mu);
        append_conn(w, e);
        w->waiting++;
        pthread_mutex_unlock(&w->mu);
        *socket_context = e;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        conn *e = *socket_context;
        pthread_mutex_lock(&w->mu);
        if (e->waiting && !e->cut) w->waiting--;
        unlink_conn(w, e);
        pthread_mutex_unlock(&w->mu);
        free(e);
        *socket_context = NULL;
    }
}

static conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i ? i->socket_context : NULL;
}

void rg_deadline_headers_done(struct MHD_Connection *c)
{
    conn *e = conn_of(c);
    if (!e) return;
    pthread_mutex_lock(&e->w->mu);
    if (e->waiting && !e->cut) e->w->waiting--;
    e->waiting = 0;
    pthread_mutex_unlock(&e->w->mu);
}

void rg_deadline_request_done(struct MHD_Connection *c)
{
    conn *e = c ? conn_of(c) : NULL;
    if (!e) return;
    rg_deadline *w = e->w;
    pthread_mutex_lock(&w->mu);
    if (!e->waiting && !e->cut) {   /* the next request's headers: a new wait, at the back */
        e->waiting = 1;
        e->t0 = now_s();
        w->waiting++;
        unlink_conn(w, e);
        append_conn(w, e);
    }
    pthread_mutex_unlock(&w->mu);
}
