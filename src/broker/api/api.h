/* api.h -- the request dispatch (broker_api.c), which broker.c calls: a
 * frame in, its handler run, the answer queued on the connection. */
#ifndef KIPPER_BROKER_API_API_H
#define KIPPER_BROKER_API_API_H

#include <stddef.h>
#include <stdint.h>

#include "broker/core/broker_impl.h"

/* Decodes and answers one request frame (without its size prefix). -1 when
 * the connection was closed. */
/* mem: the frame's memory when it was taken out of the connection's input
 * (broker_request_t.frame_mem), else NULL. */
int broker_handle_frame(broker_t *b, conn_t *c, uint8_t *p, size_t n, shared_bytes_t *mem);
/* Runs r's handler (again, for a request that waited), building its
 * answer in ra (from api_response_arena): REQ_CLOSE when the answer would
 * take more than the arena allows. */
req_status_t broker_dispatch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* The arena an answer is built in. Answers are built from what the broker
 * holds (topics, groups) and what the request names, and the requests are
 * bounded (kafka_decode_budget); this bounds what is left: about 150,000
 * partitions in one Metadata answer. */
#define API_RESPONSE_ARENA_MAX ((size_t)64 << 20)
static inline void api_response_arena_init(kafka_arena_t *ra) { kafka_arena_init(ra, API_RESPONSE_ARENA_MAX); }

#endif
