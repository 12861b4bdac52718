/* listener.h -- the broker's PLAINTEXT listener: accepting clients within
 * max.connections and max.connections.per.ip, and running out of file
 * descriptors without spinning or flooding the log. Loop thread only. */
#ifndef KIPPER_BROKER_CORE_LISTENER_H
#define KIPPER_BROKER_CORE_LISTENER_H

#include <stddef.h>

#include "broker_impl.h"

/* Binds the listener (b->port is set) and settles the connection limits;
 * nothing is accepted until listener_accept_start. 0, or -1 with err. */
int listener_open(broker_t *b, char *err, size_t errlen);
/* Start accepting clients. 0, or -1 with err. */
int listener_accept_start(broker_t *b, char *err, size_t errlen);
/* Closes the listening socket: new clients are refused; those connected
 * stay. */
void listener_stop_accepting(broker_t *b);
/* Closes the listener (the connections are the broker's). */
void listener_close(broker_t *b);
/* A connection listener_* let in is closed: its address has one less. */
void listener_conn_closed(broker_t *b, conn_t *c);

#endif
