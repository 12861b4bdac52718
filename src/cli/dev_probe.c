/* dev_probe.c -- see dev_probe.h. */
#define _GNU_SOURCE
#include "dev_probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct dev_probe {
    loop_t *loop;
    int fd;
    loop_timer_t *timer;
    uint8_t question[DEV_PROBE_QUESTION_MAX];
    size_t question_len, sent;
    uint8_t answer[DEV_PROBE_ANSWER_MAX];
    size_t answer_len;
    dev_probe_whole_fn whole;
    dev_probe_done_fn done;
    void *arg;
};

static void release(dev_probe_t *p)
{
    loop_unwatch(p->loop, p->fd);
    close(p->fd);
    free(p);
}

/* Reports and frees. The timer is cancelled unless it is the one firing
 * (the loop frees a timer after its callback). */
static void finish(dev_probe_t *p, int ok, int from_timer)
{
    if (!from_timer)
        loop_timer_cancel(p->loop, p->timer);
    p->done(p->arg, ok ? p->answer : NULL, ok ? p->answer_len : 0);
    release(p);
}

static void on_timeout(loop_t *loop, void *arg)
{
    (void)loop;
    finish(arg, 0, 1);
}

/* 1 when the question is out, 0 to wait for room, -1 on failure (the
 * connection was refused: the first writable event reports it). */
static int send_question(dev_probe_t *p)
{
    int error = 0;
    socklen_t len = sizeof(error);
    if (p->sent == 0 && (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &error, &len) < 0 || error != 0))
        return -1;
    while (p->sent < p->question_len) {
        ssize_t n = send(p->fd, p->question + p->sent, p->question_len - p->sent, MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        p->sent += (size_t)n;
    }
    return 1;
}

/* 1 when the answer is whole, 0 to wait for more, -1 on failure. */
static int read_answer(dev_probe_t *p)
{
    for (;;) {
        size_t room = sizeof(p->answer) - p->answer_len;
        if (room == 0)
            return -1;
        ssize_t n = recv(p->fd, p->answer + p->answer_len, room, 0);
        if (n == 0)
            return p->whole ? -1 : 1;   /* closed: the end, unless the answer says its own length */
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        p->answer_len += (size_t)n;
        if (p->whole && p->whole(p->answer, p->answer_len))
            return 1;
    }
}

static void on_io(loop_t *loop, int fd, unsigned events, void *arg)
{
    dev_probe_t *p = arg;
    (void)fd;
    (void)events;
    if (p->sent < p->question_len) {
        int rc = send_question(p);
        if (rc < 0)
            finish(p, 0, 0);
        else if (rc > 0)
            loop_watch(loop, p->fd, LOOP_READABLE, on_io, p);
        return;
    }
    int rc = read_answer(p);
    if (rc != 0)
        finish(p, rc > 0, 0);
}

dev_probe_t *dev_probe_start(loop_t *loop, int port, const void *question, size_t len, dev_probe_whole_fn whole,
                             uint64_t timeout_ms, dev_probe_done_fn done, void *arg)
{
    if (len == 0 || len > DEV_PROBE_QUESTION_MAX)
        return NULL;
    dev_probe_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    *p = (dev_probe_t){.loop = loop, .question_len = len, .whole = whole, .done = done, .arg = arg};
    memcpy(p->question, question, len);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    p->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* On loopback a refusal is often immediate: no probe then, the caller
     * asks again on its next round. */
    if (p->fd < 0 || (connect(p->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) ||
        loop_watch(loop, p->fd, LOOP_WRITABLE, on_io, p) < 0) {
        if (p->fd >= 0)
            close(p->fd);
        free(p);
        return NULL;
    }
    p->timer = loop_timer_add(loop, timeout_ms, on_timeout, p);
    return p;
}

void dev_probe_cancel(dev_probe_t *p)
{
    loop_timer_cancel(p->loop, p->timer);
    release(p);
}
