/* broker_impl.h -- what broker.c (connections) and broker_api.c (requests)
 * share. Not an interface for other parts: they use broker.h. */
#ifndef KIPPER_BROKER_BROKER_IMPL_H
#define KIPPER_BROKER_BROKER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/loop.h"
#include "broker_config.h"

typedef struct broker broker_t;

typedef struct conn {
    int fd;
    int port;
    char ip[64];
    int closed;          /* freed in the before-sleep hook */
    buf_t in, out;
    broker_t *broker;
    struct conn *next;
} conn_t;

struct broker {
    broker_config_t cfg;
    loop_t *loop;
    int listen_fd;
    int port;            /* the port really bound */
    char adv_host[BROKER_HOST_MAX];
    int adv_port;
    char cluster_id[64];
    conn_t *conns;
    int n_conns;
};

/* Closes c (logging why at info level, or quietly when why is NULL); the
 * memory goes in the before-sleep hook. Safe to call twice. */
void broker_conn_close(broker_t *b, conn_t *c, const char *why);

/* One request frame (without its size prefix): the answer is appended to
 * c->out, or the connection is closed with a log line. -1 when closed. */
int broker_handle_frame(broker_t *b, conn_t *c, const uint8_t *p, size_t n);

#endif
