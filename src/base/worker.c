/* worker.c -- see worker.h. The thread sleeps on a condition variable; done
 * callbacks travel back through a mailbox. */
#define _GNU_SOURCE
#include "worker.h"
#include "logging.h"
#include "mailbox.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

typedef struct job {
    mailbox_msg_t msg;      /* first: posted back to the loop when run */
    struct job *next;
    worker_fn run, done;
    void *arg;
} job_t;

struct worker {
    pthread_t thread;
    mailbox_t *mailbox;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    job_t *head, *tail;     /* guarded by lock */
    int stopping;           /* guarded by lock */
    int max_queued;
    int queued;             /* loop thread only: submitted, done not yet run */
    char name[32];
};

static void on_done(mailbox_t *mb, mailbox_msg_t *msg, void *arg)
{
    (void)mb;
    worker_t *w = arg;
    job_t *j = (job_t *)msg;
    w->queued--;
    if (j->done)
        j->done(j->arg);
    free(j);
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->stopping)
            pthread_cond_wait(&w->wake, &w->lock);
        job_t *j = w->head;
        if (!j)
            break;   /* stopping and drained */
        w->head = j->next;
        if (!w->head)
            w->tail = NULL;
        pthread_mutex_unlock(&w->lock);
        if (j->run)
            j->run(j->arg);
        mailbox_post(w->mailbox, &j->msg);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

worker_t *worker_create(loop_t *loop, const char *name, int max_queued)
{
    worker_t *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    snprintf(w->name, sizeof(w->name), "%s", name);
    w->max_queued = max_queued;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    w->mailbox = mailbox_create(loop, on_done, w);
    /* Signals stay with the loop's signalfd: the thread inherits a mask
     * that blocks them. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = w->mailbox ? pthread_create(&w->thread, NULL, worker_main, w) : -1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        log_error("cannot start the %s thread", name);
        mailbox_destroy(w->mailbox);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

void worker_destroy(worker_t *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    mailbox_destroy(w->mailbox);   /* runs the done callbacks still queued */
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

int worker_submit(worker_t *w, worker_fn run, worker_fn done, void *arg)
{
    if (w->queued >= w->max_queued)
        return -1;
    job_t *j = calloc(1, sizeof(*j));
    if (!j)
        return -1;
    j->run = run;
    j->done = done;
    j->arg = arg;
    w->queued++;
    pthread_mutex_lock(&w->lock);
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    return 0;
}

int worker_queued(const worker_t *w)
{
    return w->queued;
}
