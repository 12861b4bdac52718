/* api.h -- the request dispatch (broker_api.c), which broker.c calls: a
 * frame in, its handler run, the answer queued on the connection. */
#ifndef KIPPER_BROKER_API_API_H
#define KIPPER_BROKER_API_API_H

#include <stddef.h>
#include <stdint.h>

#include "broker/core/broker_impl.h"

/* Decodes and answers one request frame (without its size prefix). -1 when
 * the connection was closed. */
int broker_handle_frame(broker_t *b, conn_t *c, uint8_t *p, size_t n);
/* Runs r's handler (again, for a request that waited). */
req_status_t broker_dispatch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);

#endif
