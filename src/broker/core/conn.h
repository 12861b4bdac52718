/* conn.h -- what broker.c offers the request handlers and the services:
 * answering a request on its connection, waking a request that waits, and
 * closing a connection. The structs (conn_t, broker_request_t) are in
 * broker_impl.h. Loop thread only. */
#ifndef KIPPER_BROKER_CORE_CONN_H
#define KIPPER_BROKER_CORE_CONN_H

#include "broker_impl.h"

/* A client the listener accepted (fd non-blocking, counted in slot): a
 * new connection. */
void broker_conn_open(broker_t *b, int fd, const char *ip, int port, struct ip_slot *slot);
void broker_conn_close(broker_t *b, conn_t *c, const char *why);
/* Appends an encoded response to c->out; with ext records, their file
 * ranges are queued to follow at the right places. -1 if it cannot be built. */
int broker_reply(conn_t *c, const broker_request_t *r, const kafka_value_t *body);
/* Queue file bytes at ext->out_offset of the response just encoded. -1
 * when they cannot be (out of descriptors): the handler returns REQ_CLOSE,
 * and the connection is closed once the request is done with. */
int broker_conn_splice(conn_t *c, const kafka_ext_records_t *ext, int fd, int64_t pos);
/* Run a waiting request's handler again (data arrived, or its async work
 * finished). Safe to call for any connection id; a gone one is ignored. */
void broker_wake_request(broker_t *b, uint64_t conn_id, uint64_t request_id);
/* The same from the before-sleep hook: for callers inside another
 * request's handler, where running a second one at once is not safe. */
void broker_wake_later(broker_t *b, uint64_t conn_id, uint64_t request_id);
/* Wake every request waiting for data (after an append). */
void broker_wake_data_waiters(broker_t *b);
/* Stop the broker for a fault it cannot serve through (a failed log dir):
 * the controlled shutdown SIGTERM starts, then exit status 1. */
void broker_stop_on_fault(broker_t *b);
/* From broker_handle_frame: keep a request that waits, with its frame
 * (copied, or shared when it was taken out of the input: r->frame_mem). */
int broker_request_detach(broker_t *b, conn_t *c, const broker_request_t *r, const uint8_t *p, size_t n);

#endif
