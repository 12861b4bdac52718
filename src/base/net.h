/* net.h -- small socket helpers in the manner of Redis's anet. */
#ifndef KIPPER_BASE_NET_H
#define KIPPER_BASE_NET_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "buf.h"

/* Non-blocking listening TCP socket on host:port (host NULL or "" = all
 * addresses). Returns the fd, or -1 with a message in err. */
int net_listen_tcp(const char *host, int port, int backlog, char *err, size_t errlen);
/* The same on an address already resolved (base/resolver.h): never waits
 * for DNS. The fd, or -1 with errno. */
int net_listen_addr(const struct sockaddr *addr, socklen_t addrlen, int backlog);
/* Accept one connection as a non-blocking, close-on-exec, TCP_NODELAY socket.
 * Fills ip (text) and *port. Returns fd, or -1 (errno EAGAIN when none waits). */
int net_accept(int listen_fd, char *ip, size_t iplen, int *port);
/* Descriptors ran out (accept failed with EMFILE or ENFILE): the
 * connections waiting in the backlog keep a level-triggered listener
 * readable, so the loop would spin on accept. The way out nginx and libuv
 * take: give up the spare descriptor kept for the purpose (*spare, from
 * net_spare_fd), accept and close what waits (the clients see the
 * connection closed at once instead of hanging), and take the spare again.
 * Returns how many connections were closed; 0 when none could be (no spare,
 * or another thread took the freed descriptor first): then the caller stops
 * watching the listener for a moment. *spare is -1 afterwards if it could
 * not be taken again (the next call returns 0). */
int net_accept_shed(int listen_fd, int *spare);
/* A descriptor to hold in reserve for net_accept_shed (/dev/null). -1 on failure. */
int net_spare_fd(void);
/* Write as much of out's unread bytes as the non-blocking socket takes,
 * consuming them. 0 when all is written or the socket is full, -1 on an
 * error (errno set; EPIPE for a peer that stopped reading). */
int net_write_buffer(int fd, buf_t *out);

/* The first address of host:port, for a peer dialled again and again.
 * 0, or -1 with a message in err. */
int net_resolve(const char *host, int port, struct sockaddr_storage *addr, socklen_t *addrlen, char *err,
                size_t errlen);
/* The same for a numeric address only, which needs no DNS (never blocks):
 * 0, or -1 when host is a name (or not an address at all). */
int net_resolve_numeric(const char *host, int port, struct sockaddr_storage *addr, socklen_t *addrlen);
/* Start connecting a non-blocking, close-on-exec, TCP_NODELAY socket to
 * addr. Returns the fd with *connected 1 when the connection is already up,
 * 0 when it is under way: watch the fd for writing (under the caller's own
 * deadline), then ask net_connect_result. -1 with errno if it cannot start. */
int net_connect_addr(const struct sockaddr *addr, socklen_t addrlen, int *connected);
/* net_resolve, then net_connect_addr; -1 with a message in err. */
int net_connect_tcp(const char *host, int port, int *connected, char *err, size_t errlen);
/* A connecting socket became writable: 0 it is connected, 1 not yet (a
 * stale wake-up: keep waiting), -1 the connection failed (errno says why). */
int net_connect_result(int fd);

/* Read once from fd, at most max bytes, appended to b (room reserved
 * first, so a caller bounds its buffer by what it passes as max).
 * Returns the bytes read; 0 when the peer closed; -1 with errno EAGAIN
 * when nothing is there now, or another errno on an error. EINTR is
 * retried here. */
ssize_t net_read_into(buf_t *b, int fd, size_t max);

/* "host:port" or "[v6 address]:port" (the whole of s) into host and *port,
 * the port decimal in [port_min, 65535]. 0, or -1 if s is not that. */
int net_parse_host_port(const char *s, char *host, size_t hostlen, int *port, int port_min);

/* Port a bound socket listens on (for port 0 in tests). */
int net_local_port(int fd);

#endif
