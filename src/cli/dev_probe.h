/* dev_probe.h -- one question to a server on loopback, asked from the dev
 * loop without blocking it.
 *
 * `kipper dev` asks its keepers (`srvr`) and brokers (a Kafka Metadata
 * request) whether they are up. A probe connects to 127.0.0.1:port, sends
 * the question, gathers the answer and reports once: the whole answer, or
 * NULL when the server refused, closed too early or did not finish within
 * the timeout. A server that is still starting simply fails the probe; the
 * caller asks again later. */
#ifndef KIPPER_CLI_DEV_PROBE_H
#define KIPPER_CLI_DEV_PROBE_H

#include "base/loop.h"

#include <stddef.h>
#include <stdint.h>

#define DEV_PROBE_QUESTION_MAX 256
#define DEV_PROBE_ANSWER_MAX 4096   /* a longer answer fails the probe */

typedef struct dev_probe dev_probe_t;

/* Whether the len bytes gathered so far are a whole answer. NULL instead of
 * a function: the answer ends when the server closes the connection (as a
 * four-letter word's does). */
typedef int (*dev_probe_whole_fn)(const uint8_t *answer, size_t len);
/* answer is NULL on failure; it is valid only during the call. */
typedef void (*dev_probe_done_fn)(void *arg, const uint8_t *answer, size_t len);

/* Starts a probe; done runs later, from the loop, never from inside this
 * call. NULL if it could not start (no socket, question too long): the
 * caller just tries again on its next round. */
dev_probe_t *dev_probe_start(loop_t *loop, int port, const void *question, size_t len, dev_probe_whole_fn whole,
                             uint64_t timeout_ms, dev_probe_done_fn done, void *arg);
/* Stops a probe in flight; done is not called. */
void dev_probe_cancel(dev_probe_t *p);

#endif
