/* net.c -- see net.h. */
#define _GNU_SOURCE
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int net_listen_tcp(const char *host, int port, int backlog, char *err, size_t errlen)
{
    struct addrinfo hints = {0}, *res = NULL;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int rc = getaddrinfo(host && *host ? host : NULL, portstr, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", host ? host : "*", gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = net_listen_addr(ai->ai_addr, ai->ai_addrlen, backlog);
        if (fd < 0)
            snprintf(err, errlen, "cannot listen on %s:%d: %s", host && *host ? host : "*", port,
                     strerror(errno));
    }
    freeaddrinfo(res);
    return fd;
}

int net_listen_addr(const struct sockaddr *addr, socklen_t addrlen, int backlog)
{
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, addr, addrlen) == 0 && listen(fd, backlog) == 0)
        return fd;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

int net_accept(int listen_fd, char *ip, size_t iplen, int *port)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int fd = accept4(listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *s = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &s->sin_addr, ip, (socklen_t)iplen);
        *port = ntohs(s->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s->sin6_addr, ip, (socklen_t)iplen);
        *port = ntohs(s->sin6_port);
    } else {
        snprintf(ip, iplen, "?");
        *port = 0;
    }
    return fd;
}

/* The backlog is bounded (somaxconn), but so is the time we spend here. */
#define SHED_MAX 4096

int net_accept_shed(int listen_fd, int *spare)
{
    if (*spare < 0)
        return 0;
    close(*spare);
    int n = 0;
    for (; n < SHED_MAX; n++) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            break;
        close(fd);
    }
    *spare = net_spare_fd();
    return n;
}

int net_spare_fd(void)
{
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

int net_local_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

int net_write_buffer(int fd, buf_t *out)
{
    while (buf_unread(out) > 0) {
        ssize_t n = send(fd, buf_read_ptr(out), buf_unread(out), MSG_NOSIGNAL);
        if (n > 0) {
            buf_consume(out, (size_t)n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

/* net_resolve with getaddrinfo's flags (AI_NUMERICHOST: no DNS). */
static int resolve(const char *host, int port, int flags, struct sockaddr_storage *addr, socklen_t *addrlen,
                   char *err, size_t errlen)
{
    struct addrinfo hints = {0}, *res = NULL;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = flags;
    int rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0 || !res || res->ai_addrlen > sizeof(*addr)) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, rc ? gai_strerror(rc) : "no address");
        if (res)
            freeaddrinfo(res);
        return -1;
    }
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int net_resolve(const char *host, int port, struct sockaddr_storage *addr, socklen_t *addrlen, char *err,
                size_t errlen)
{
    return resolve(host, port, 0, addr, addrlen, err, errlen);
}

int net_resolve_numeric(const char *host, int port, struct sockaddr_storage *addr, socklen_t *addrlen)
{
    char err[160];
    return resolve(host, port, AI_NUMERICHOST, addr, addrlen, err, sizeof(err));
}

int net_connect_addr(const struct sockaddr *addr, socklen_t addrlen, int *connected)
{
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, addr, addrlen) == 0) {
        *connected = 1;
        return fd;
    }
    if (errno != EINPROGRESS) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    *connected = 0;
    return fd;
}

int net_connect_tcp(const char *host, int port, int *connected, char *err, size_t errlen)
{
    struct sockaddr_storage addr;
    socklen_t addrlen;
    if (net_resolve(host, port, &addr, &addrlen, err, errlen) < 0)
        return -1;
    int fd = net_connect_addr((struct sockaddr *)&addr, addrlen, connected);
    if (fd < 0)
        snprintf(err, errlen, "cannot connect to %s:%d: %s", host, port, strerror(errno));
    return fd;
}

int net_connect_result(int fd)
{
    int soerr = 0;
    socklen_t len = sizeof(soerr);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        return -1;
    if (soerr) {
        errno = soerr;
        return -1;
    }
    /* No error yet is not success: a wake-up may come before the handshake
     * ends. Only a socket with a peer is connected. */
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
        return errno == ENOTCONN ? 1 : -1;
    return 0;
}

ssize_t net_read_into(buf_t *b, int fd, size_t max)
{
    buf_reserve(b, max);
    for (;;) {
        ssize_t n = read(fd, b->data + b->len, max);
        if (n > 0)
            b->len += (size_t)n;
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno == EWOULDBLOCK)
            errno = EAGAIN;
        return -1;
    }
}

/* A decimal port in [lo, 65535], the whole of s; -1 if not. */
static int parse_port(const char *s, int lo)
{
    long v = 0;
    size_t n = 0;
    for (; s[n]; n++) {
        if (s[n] < '0' || s[n] > '9' || n == 5)
            return -1;
        v = v * 10 + (s[n] - '0');
    }
    return n == 0 || v < lo || v > 65535 ? -1 : (int)v;
}

int net_parse_host_port(const char *s, char *host, size_t hostlen, int *port, int port_min)
{
    const char *start = s, *end, *colon;
    if (*s == '[') {   /* an IPv6 address: its colons are inside the brackets */
        start = s + 1;
        end = strchr(start, ']');
        colon = end ? end + 1 : NULL;
        if (!end || *colon != ':')
            return -1;
    } else {
        colon = strrchr(s, ':');
        end = colon;
        if (!colon || memchr(s, ':', (size_t)(colon - s)))
            return -1;   /* an unbracketed v6 address is ambiguous */
    }
    size_t n = (size_t)(end - start);
    if (n >= hostlen)
        return -1;
    memcpy(host, start, n);
    host[n] = '\0';
    *port = parse_port(colon + 1, port_min);
    return *port < 0 ? -1 : 0;
}
