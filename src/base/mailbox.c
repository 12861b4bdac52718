/* mailbox.c -- see mailbox.h. */
#define _GNU_SOURCE
#include "mailbox.h"
#include "logging.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct mailbox {
    loop_t *loop;
    int event_fd;
    pthread_mutex_t lock;
    mailbox_msg_t *head, *tail;   /* guarded by lock */
    mailbox_fn fn;
    void *arg;
};

static void on_wakeup(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)events;
    uint64_t count;
    while (read(fd, &count, sizeof(count)) < 0 && errno == EINTR)
        ;
    mailbox_drain(arg);
}

mailbox_t *mailbox_create(loop_t *loop, mailbox_fn fn, void *arg)
{
    mailbox_t *mb = calloc(1, sizeof(*mb));
    if (!mb)
        return NULL;
    mb->loop = loop;
    mb->fn = fn;
    mb->arg = arg;
    pthread_mutex_init(&mb->lock, NULL);
    mb->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (mb->event_fd < 0 || loop_watch(loop, mb->event_fd, LOOP_READABLE, on_wakeup, mb) < 0) {
        if (mb->event_fd >= 0)
            close(mb->event_fd);
        pthread_mutex_destroy(&mb->lock);
        free(mb);
        return NULL;
    }
    return mb;
}

void mailbox_destroy(mailbox_t *mb)
{
    if (!mb)
        return;
    mailbox_drain(mb);
    loop_unwatch(mb->loop, mb->event_fd);
    close(mb->event_fd);
    pthread_mutex_destroy(&mb->lock);
    free(mb);
}

void mailbox_post(mailbox_t *mb, mailbox_msg_t *msg)
{
    msg->next = NULL;
    pthread_mutex_lock(&mb->lock);
    int was_empty = mb->head == NULL;
    if (mb->tail)
        mb->tail->next = msg;
    else
        mb->head = msg;
    mb->tail = msg;
    pthread_mutex_unlock(&mb->lock);
    /* One wakeup per empty-to-non-empty transition is enough: the loop
     * takes the whole list at once. */
    if (was_empty) {
        uint64_t one = 1;
        while (write(mb->event_fd, &one, sizeof(one)) < 0 && errno == EINTR)
            ;
    }
}

void mailbox_drain(mailbox_t *mb)
{
    pthread_mutex_lock(&mb->lock);
    mailbox_msg_t *m = mb->head;
    mb->head = mb->tail = NULL;
    pthread_mutex_unlock(&mb->lock);
    while (m) {
        mailbox_msg_t *next = m->next;
        mb->fn(mb, m, mb->arg);
        m = next;
    }
}
