/* SPDX-License-Identifier: Apache-2.0 */
/* serve_writer.c -- one thread that runs the server's writes, in order (serve_writer.h). */
#include "serve_writer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct job {
    void (*run)(void *);
    void *arg;
    struct job *next;
} job;

struct rg_writer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t more;
    job *head, *tail;
    int stopping;
    int joined;                     /* rg_writer_stop has joined (or is joining) the thread */
};

/* The next job, or NULL once stopping with none left. */
static job *next_job(rg_writer *w)
{
    pthread_mutex_lock(&w->mu);
    while (!w->head && !w->stopping) pthread_cond_wait(&w->more, &w->mu);
    job *j = w->head;
    if (j) {
        w->head = j->next;
        if (!w->head) w->tail = NULL;
    }
    pthread_mutex_unlock(&w->mu);
    return j;
}

static void *writer_main(void *p)
{
    rg_writer *w = p;
    job *j;
    while ((j = next_job(w)) != NULL) {
        j->run(j->arg);
        free(j);
    }
    return NULL;
}

int rg_writer_start(rg_writer **out, char *err, size_t errlen)
{
    rg_writer *w = calloc(1, sizeof *w);
    if (!out || !w) {
        free(w);
        snprintf(err, errlen, "serve: the writer thread: %s", out ? "out of memory" : "no output");
        return 2;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->more, NULL);
    if (pthread_create(&w->thread, NULL, writer_main, w)) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->more);
        free(w);
        snprintf(err, errlen, "serve: cannot start the writer thread");
        return 2;
    }
    *out = w;
    return 0;
}

int rg_writer_submit(rg_writer *w, void (*run)(void *), void (*before)(void *), void *arg)
{
    job *j = w && run ? calloc(1, sizeof *j) : NULL;
    if (!j) return -1;
    j->run = run;
    j->arg = arg;
    pthread_mutex_lock(&w->mu);
    if (w->stopping) {
        pthread_mutex_unlock(&w->mu);
        free(j);
        return -1;
    }
    if (before) before(arg);
    if (w->tail) w->tail->next = j;
    else w->head = j;
    w->tail = j;
    pthread_cond_signal(&w->more);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

void rg_writer_stop(rg_writer *w)
{
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    int joined = w->joined;
    w->stopping = w->joined = 1;
    pthread_cond_signal(&w->more);
    pthread_mutex_unlock(&w->mu);
    if (!joined) pthread_join(w->thread, NULL);
}

void rg_writer_free(rg_writer *w)
{
    if (!w) return;
    rg_writer_stop(w);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->more);
    free(w);
}
