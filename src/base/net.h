/* net.h -- small socket helpers in the manner of Redis's anet. */
#ifndef KIPPER_BASE_NET_H
#define KIPPER_BASE_NET_H

#include <stddef.h>

#include "buf.h"

/* Non-blocking listening TCP socket on host:port (host NULL or "" = all
 * addresses). Returns the fd, or -1 with a message in err. */
int net_listen_tcp(const char *host, int port, int backlog, char *err, size_t errlen);
/* Accept one connection as a non-blocking, close-on-exec, TCP_NODELAY socket.
 * Fills ip (text) and *port. Returns fd, or -1 (errno EAGAIN when none waits). */
int net_accept(int listen_fd, char *ip, size_t iplen, int *port);
/* Write as much of out's unread bytes as the non-blocking socket takes,
 * consuming them. 0 when all is written or the socket is full, -1 on an
 * error (errno set; EPIPE for a peer that stopped reading). */
int net_write_buffer(int fd, buf_t *out);

/* Port a bound socket listens on (for port 0 in tests). */
int net_local_port(int fd);

#endif
