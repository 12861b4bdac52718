/* accept_backoff.c -- see accept_backoff.h. */
#define _GNU_SOURCE
#include "accept_backoff.h"
#include "logging.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#define LOG_INTERVAL_MS 1000

int accept_backoff_start(accept_backoff_t *ab, loop_t *loop, int fd, loop_io_fn on_accept, void *arg,
                         const char *name)
{
    memset(ab, 0, sizeof(*ab));
    ab->loop = loop;
    ab->fd = fd;
    ab->on_accept = on_accept;
    ab->arg = arg;
    snprintf(ab->name, sizeof(ab->name), "%s", name);
    ab->pause_ms = ACCEPT_BACKOFF_MIN_MS;
    ratelimit_init(&ab->log, LOG_INTERVAL_MS, 1);
    return loop_watch(loop, fd, LOOP_READABLE, on_accept, arg);
}

static void on_pause_over(loop_t *loop, void *arg)
{
    accept_backoff_t *ab = arg;
    ab->timer = NULL;
    /* Level-triggered: connections still waiting make it readable at once. */
    loop_watch(loop, ab->fd, LOOP_READABLE, ab->on_accept, ab->arg);
}

/* Errors that concern one connection only (accept(2) passes the network's
 * errors of the new connection through), or none at all. */
static int per_connection_error(int err)
{
    switch (err) {
    case EINTR: case ECONNABORTED: case EPROTO: case EPERM: case ENETDOWN: case ENOPROTOOPT:
    case EHOSTDOWN: case ENONET: case EHOSTUNREACH: case EOPNOTSUPP: case ENETUNREACH:
        return 1;
    default:
        return 0;
    }
}

static void log_failure(accept_backoff_t *ab, int err)
{
    uint64_t missed = 0;
    if (!ratelimit_allow(&ab->log, loop_now_ms(ab->loop), &missed))
        return;
    char limit[96] = "", more[64] = "";
    struct rlimit rl;
    if (err == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0)
        snprintf(limit, sizeof(limit), " (this process may open %llu descriptors)", (unsigned long long)rl.rlim_cur);
    if (missed)
        snprintf(more, sizeof(more), "; %llu more failures since the last line", (unsigned long long)missed);
    log_warn("%s: cannot accept connections: %s%s; not accepting for %llu ms%s", ab->name, strerror(err), limit,
             (unsigned long long)ab->pause_ms, more);
}

int accept_backoff_failed(accept_backoff_t *ab, int err)
{
    if (err == EAGAIN || err == EWOULDBLOCK)
        return 1;
    if (per_connection_error(err))
        return 0;
    /* EMFILE, ENFILE, ENOBUFS, ENOMEM, or something unexpected: retrying at
     * once would fail the same way. */
    log_failure(ab, err);
    if (!ab->timer) {
        loop_unwatch(ab->loop, ab->fd);
        ab->timer = loop_timer_add(ab->loop, ab->pause_ms, on_pause_over, ab);
        if (!ab->timer)   /* no timer, no pause: watch again rather than never */
            loop_watch(ab->loop, ab->fd, LOOP_READABLE, ab->on_accept, ab->arg);
    }
    ab->pause_ms = ab->pause_ms * 2 > ACCEPT_BACKOFF_MAX_MS ? ACCEPT_BACKOFF_MAX_MS : ab->pause_ms * 2;
    return 1;
}

void accept_backoff_accepted(accept_backoff_t *ab)
{
    ab->pause_ms = ACCEPT_BACKOFF_MIN_MS;
}

int accept_backoff_paused(const accept_backoff_t *ab)
{
    return ab->timer != NULL;
}

void accept_backoff_stop(accept_backoff_t *ab)
{
    if (!ab->loop)
        return;
    if (ab->timer) {
        loop_timer_cancel(ab->loop, ab->timer);
        ab->timer = NULL;
    }
    loop_unwatch(ab->loop, ab->fd);
}
