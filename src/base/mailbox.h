/* mailbox.h -- the one way another thread hands work to an event loop.
 *
 * A helper thread (an fsync worker, the ZooKeeper client's completion
 * thread) posts messages; the loop's thread receives them, in order, in the
 * callback given at creation. The queue is a mutex-protected list woken
 * through an eventfd, so posting never blocks on the loop. */
#ifndef KIPPER_BASE_MAILBOX_H
#define KIPPER_BASE_MAILBOX_H

#include "loop.h"

typedef struct mailbox mailbox_t;

/* A message is any struct that begins with this header; the poster
 * allocates it and the receiver owns (frees) it. */
typedef struct mailbox_msg {
    struct mailbox_msg *next;
} mailbox_msg_t;

typedef void (*mailbox_fn)(mailbox_t *mb, mailbox_msg_t *msg, void *arg);

mailbox_t *mailbox_create(loop_t *loop, mailbox_fn fn, void *arg);
/* Messages still queued are handed to fn before the mailbox goes, so their
 * owners can free them; call it after every poster has stopped. */
void mailbox_destroy(mailbox_t *mb);
/* Any thread. Never blocks beyond a short mutex hold. */
void mailbox_post(mailbox_t *mb, mailbox_msg_t *msg);
/* Loop thread: deliver whatever is queued now (also done when woken). */
void mailbox_drain(mailbox_t *mb);

#endif
