/* loop.c -- epoll + timer heap + signalfd. See loop.h. */
#define _GNU_SOURCE
#include "loop.h"
#include "clock.h"
#include "logging.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

struct loop_timer {
    uint64_t when_ms;
    uint64_t seq;          /* ties broken by insertion order */
    size_t heap_index;
    loop_timer_fn fn;
    void *arg;
};

typedef struct {
    loop_io_fn fn;
    void *arg;
    unsigned events;       /* 0 = not watched */
} io_slot_t;

struct loop {
    int epfd;
    int stopping;
    uint64_t now_ms;
    io_slot_t *slots;
    int nslots;
    loop_timer_t **heap;
    size_t heap_len, heap_cap;
    uint64_t timer_seq;
    int sigfd;
    loop_signal_fn sig_fn;
    void *sig_arg;
    void (*before_sleep)(loop_t *loop, void *arg);
    void *before_sleep_arg;
};

loop_t *loop_create(void)
{
    loop_t *loop = calloc(1, sizeof(*loop));
    if (!loop)
        return NULL;
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) {
        free(loop);
        return NULL;
    }
    loop->sigfd = -1;
    loop->now_ms = clock_mono_ms();
    return loop;
}

void loop_destroy(loop_t *loop)
{
    if (!loop)
        return;
    for (size_t i = 0; i < loop->heap_len; i++)
        free(loop->heap[i]);
    free(loop->heap);
    free(loop->slots);
    if (loop->sigfd >= 0)
        close(loop->sigfd);
    close(loop->epfd);
    free(loop);
}

static int ensure_slot(loop_t *loop, int fd)
{
    if (fd < loop->nslots)
        return 0;
    int n = loop->nslots ? loop->nslots : 64;
    while (n <= fd)
        n *= 2;
    io_slot_t *s = realloc(loop->slots, (size_t)n * sizeof(*s));
    if (!s)
        return -1;
    memset(s + loop->nslots, 0, (size_t)(n - loop->nslots) * sizeof(*s));
    loop->slots = s;
    loop->nslots = n;
    return 0;
}

int loop_watch(loop_t *loop, int fd, unsigned events, loop_io_fn fn, void *arg)
{
    if (fd < 0 || ensure_slot(loop, fd) < 0)
        return -1;
    io_slot_t *slot = &loop->slots[fd];
    if (slot->fn && slot->fn == fn && slot->arg == arg && slot->events == events)
        return 0;   /* nothing changes: spare the system call */
    struct epoll_event ev = {0};
    ev.events = ((events & LOOP_READABLE) ? EPOLLIN : 0) | ((events & LOOP_WRITABLE) ? EPOLLOUT : 0);
    ev.data.fd = fd;
    int op = slot->events || slot->fn ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(loop->epfd, op, fd, &ev) < 0)
        return -1;
    slot->fn = fn;
    slot->arg = arg;
    slot->events = events;
    return 0;
}

void loop_unwatch(loop_t *loop, int fd)
{
    if (fd < 0 || fd >= loop->nslots || !loop->slots[fd].fn)
        return;
    epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
    loop->slots[fd].fn = NULL;
    loop->slots[fd].arg = NULL;
    loop->slots[fd].events = 0;
}

/* ---- timer heap ---- */

static int timer_before(const loop_timer_t *a, const loop_timer_t *b)
{
    return a->when_ms < b->when_ms || (a->when_ms == b->when_ms && a->seq < b->seq);
}

static void heap_swap(loop_t *loop, size_t i, size_t j)
{
    loop_timer_t *t = loop->heap[i];
    loop->heap[i] = loop->heap[j];
    loop->heap[j] = t;
    loop->heap[i]->heap_index = i;
    loop->heap[j]->heap_index = j;
}

static void heap_up(loop_t *loop, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!timer_before(loop->heap[i], loop->heap[parent]))
            break;
        heap_swap(loop, i, parent);
        i = parent;
    }
}

static void heap_down(loop_t *loop, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < loop->heap_len && timer_before(loop->heap[l], loop->heap[m]))
            m = l;
        if (r < loop->heap_len && timer_before(loop->heap[r], loop->heap[m]))
            m = r;
        if (m == i)
            return;
        heap_swap(loop, i, m);
        i = m;
    }
}

static void heap_remove(loop_t *loop, size_t i)
{
    loop->heap_len--;
    if (i != loop->heap_len) {
        heap_swap(loop, i, loop->heap_len);
        heap_down(loop, i);
        heap_up(loop, i);
    }
}

loop_timer_t *loop_timer_add(loop_t *loop, uint64_t delay_ms, loop_timer_fn fn, void *arg)
{
    if (loop->heap_len == loop->heap_cap) {
        size_t cap = loop->heap_cap ? loop->heap_cap * 2 : 64;
        loop_timer_t **h = realloc(loop->heap, cap * sizeof(*h));
        if (!h)
            return NULL;
        loop->heap = h;
        loop->heap_cap = cap;
    }
    loop_timer_t *t = malloc(sizeof(*t));
    if (!t)
        return NULL;
    t->when_ms = clock_mono_ms() + delay_ms;
    t->seq = loop->timer_seq++;
    t->fn = fn;
    t->arg = arg;
    t->heap_index = loop->heap_len;
    loop->heap[loop->heap_len++] = t;
    heap_up(loop, t->heap_index);
    return t;
}

void loop_timer_cancel(loop_t *loop, loop_timer_t *timer)
{
    if (!timer)
        return;
    heap_remove(loop, timer->heap_index);
    free(timer);
}

static void run_due_timers(loop_t *loop)
{
    /* Only timers due now run; ones added by callbacks wait for the next turn. */
    uint64_t now = loop->now_ms;
    uint64_t last_seq = loop->timer_seq;
    while (loop->heap_len > 0 && loop->heap[0]->when_ms <= now && loop->heap[0]->seq < last_seq) {
        loop_timer_t *t = loop->heap[0];
        heap_remove(loop, 0);
        loop_timer_fn fn = t->fn;
        void *arg = t->arg;
        free(t);
        fn(loop, arg);
        if (loop->stopping)
            return;
    }
}

static int next_timeout_ms(loop_t *loop)
{
    if (loop->heap_len == 0)
        return 1000;
    uint64_t when = loop->heap[0]->when_ms, now = clock_mono_ms();
    if (when <= now)
        return 0;
    uint64_t d = when - now;
    return d > 1000 ? 1000 : (int)d;
}

/* ---- signals ---- */

static void on_signalfd(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)events;
    (void)arg;
    struct signalfd_siginfo si;
    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        if (loop->sig_fn)
            loop->sig_fn(loop, (int)si.ssi_signo, loop->sig_arg);
}

int loop_on_shutdown_signals(loop_t *loop, loop_signal_fn fn, void *arg)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
        return -1;
    loop->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (loop->sigfd < 0)
        return -1;
    loop->sig_fn = fn;
    loop->sig_arg = arg;
    return loop_watch(loop, loop->sigfd, LOOP_READABLE, on_signalfd, NULL);
}

int loop_shutdown_pending(void)
{
    sigset_t pending;
    if (sigpending(&pending) < 0)
        return 0;
    return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1;
}

uint64_t loop_now_ms(loop_t *loop)
{
    return loop->now_ms;
}

void loop_set_before_sleep(loop_t *loop, void (*fn)(loop_t *loop, void *arg), void *arg)
{
    loop->before_sleep = fn;
    loop->before_sleep_arg = arg;
}

void loop_stop(loop_t *loop)
{
    loop->stopping = 1;
}

void loop_run(loop_t *loop)
{
    struct epoll_event events[256];
    signal(SIGPIPE, SIG_IGN);
    loop->stopping = 0;
    while (!loop->stopping) {
        if (loop->before_sleep)
            loop->before_sleep(loop, loop->before_sleep_arg);
        int n = epoll_wait(loop->epfd, events, 256, next_timeout_ms(loop));
        loop->now_ms = clock_mono_ms();
        if (n < 0 && errno != EINTR) {
            log_error("epoll_wait: %s", strerror(errno));
            return;
        }
        for (int i = 0; i < n && !loop->stopping; i++) {
            int fd = events[i].data.fd;
            if (fd >= loop->nslots || !loop->slots[fd].fn)
                continue;   /* unwatched by an earlier callback in this batch */
            io_slot_t slot = loop->slots[fd];
            unsigned ev = 0;
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                ev |= LOOP_READABLE;
            if (events[i].events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
                ev |= LOOP_WRITABLE;
            ev &= slot.events ? slot.events : ev;
            if (ev)
                slot.fn(loop, fd, ev, slot.arg);
        }
        if (!loop->stopping)
            run_due_timers(loop);
    }
}
