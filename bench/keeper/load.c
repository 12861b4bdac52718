/* load.c -- closed-loop load generator for ZooKeeper-protocol servers, on
 * Apache ZooKeeper's own C client library (libzookeeper-mt, asynchronous API).
 *
 * It opens C sessions and keeps exactly W requests outstanding in total (W
 * "slots", dealt round-robin over the sessions): each completion records the
 * request's latency (monotonic clock, from just before the zoo_a* call to the
 * completion callback) and issues the slot's next request, until the duration
 * has passed or the op count is reached; then the outstanding requests drain.
 *
 * Workloads (data size D, default 100 bytes):
 *   create      create persistent nodes with unique names  /B/c/r<run>-<slot>-<n>
 *   create-seq  create persistent sequential nodes          /B/s/n-<seq>
 *   set         setData(version -1) on K pre-created nodes  /B/d/k<i>, uniform random
 *   get         getData on the same K nodes (checks the data length)
 *   mixed       R% getData (default 90), the rest setData, on the same K nodes
 * The K nodes (and the parents) are created, pipelined, before the measured
 * phase when they do not exist yet. An optional warm-up (-W seconds or -X
 * ops) runs the same workload untimed on the same sessions first.
 *
 * Output: one line of key=value on stdout, e.g.
 *   workload=get conns=4 outstanding=64 data=100 keys=1000 duration_s=10.001 ops=812345
 *   ops_per_s=81226.4 errors=0 valid=1 p50_ms=0.712 p99_ms=1.803 max_ms=9.871 mean_ms=0.781 ...
 * Every error (an rc other than ZOK, a submission that failed, a getData whose
 * length is wrong, a session event during the run) is counted, listed as
 * err_<NAME>=<count>, and makes valid=0. The exit status is 0 when valid, 1
 * when not, 2 on a usage or connection error.
 *
 * With -P <server pid> it also reports the server's CPU time (utime+stime from
 * /proc/<pid>/stat) over the measured phase, and per op. -P also takes a
 * comma-separated list (the members of an ensemble): the CPU is summed, and
 * each process's share is listed as server_cpu_s_each=a,b,c.
 *
 * -s takes a host list, host:port[,host:port...], passed to zookeeper_init as
 * it is (the client library picks one member per session, at random). With -S
 * (spread) session i is given only the (i mod n)-th host of the list instead,
 * so the sessions are dealt round-robin over the members of an ensemble; the
 * sessions then also `sync` after the parents and after the K data nodes are
 * created, so that no member reads before it has applied them.
 *
 * Build: cc -O2 -o load load.c -lzookeeper_mt -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#define THREADED 1
#include <zookeeper/zookeeper.h>

enum { W_CREATE, W_CREATE_SEQ, W_SET, W_GET, W_MIXED, W_PREP };
static const char *const workload_names[] = {"create", "create-seq", "set", "get", "mixed", "prep"};

enum { OP_CREATE, OP_SET, OP_GET };

/* error slots: ZooKeeper rcs are small negative numbers; three of our own */
#define ERR_SLOTS 160
#define ERR_BADLEN 150   /* getData returned ZOK with the wrong data length */
#define ERR_SUBMIT 151   /* zoo_a* refused the request (its rc counted too) */
#define ERR_SESSION 152  /* session state changed during the run */

static int rc_slot(int rc)
{
    int s = -rc;
    return (s > 0 && s < ERR_BADLEN) ? s : 149;
}

static const char *err_name(int slot)
{
    switch (slot) {
    case ERR_BADLEN: return "BADLEN";
    case ERR_SUBMIT: return "SUBMIT";
    case ERR_SESSION: return "SESSION";
    case 149: return "OTHER";
    }
    switch (-slot) {
    case ZSYSTEMERROR: return "ZSYSTEMERROR";
    case ZRUNTIMEINCONSISTENCY: return "ZRUNTIMEINCONSISTENCY";
    case ZDATAINCONSISTENCY: return "ZDATAINCONSISTENCY";
    case ZCONNECTIONLOSS: return "ZCONNECTIONLOSS";
    case ZMARSHALLINGERROR: return "ZMARSHALLINGERROR";
    case ZUNIMPLEMENTED: return "ZUNIMPLEMENTED";
    case ZOPERATIONTIMEOUT: return "ZOPERATIONTIMEOUT";
    case ZBADARGUMENTS: return "ZBADARGUMENTS";
    case ZINVALIDSTATE: return "ZINVALIDSTATE";
    case ZAPIERROR: return "ZAPIERROR";
    case ZNONODE: return "ZNONODE";
    case ZNOAUTH: return "ZNOAUTH";
    case ZBADVERSION: return "ZBADVERSION";
    case ZNOCHILDRENFOREPHEMERALS: return "ZNOCHILDRENFOREPHEMERALS";
    case ZNODEEXISTS: return "ZNODEEXISTS";
    case ZNOTEMPTY: return "ZNOTEMPTY";
    case ZSESSIONEXPIRED: return "ZSESSIONEXPIRED";
    case ZINVALIDCALLBACK: return "ZINVALIDCALLBACK";
    case ZINVALIDACL: return "ZINVALIDACL";
    case ZAUTHFAILED: return "ZAUTHFAILED";
    case ZCLOSING: return "ZCLOSING";
    case ZNOTHING: return "ZNOTHING";
    case ZSESSIONMOVED: return "ZSESSIONMOVED";
    case ZNOTREADONLY: return "ZNOTREADONLY";
    case ZNEWCONFIGNOQUORUM: return "ZNEWCONFIGNOQUORUM";
    case ZRECONFIGINPROGRESS: return "ZRECONFIGINPROGRESS";
    case ZTHROTTLEDOP: return "ZTHROTTLEDOP";
    }
    return NULL;
}

/* ---- settings ---- */
static const char *opt_servers;
static int opt_workload = -1;
static int opt_conns = 4;
static int opt_outstanding = 64;
static double opt_duration = 10.0;
static long opt_ops;              /* 0: run for opt_duration */
static int opt_datasize = 100;
static int opt_keys = 1000;
static int opt_read_pct = 90;
static const char *opt_base = "/kbench";
static int opt_session_ms = 30000;
static double opt_warmup;
static long opt_warmup_ops;       /* -X: warm-up by op count instead of seconds */
static double opt_drain_timeout = 30.0;
static const char *opt_tag;
#define MAX_PIDS 16
static long opt_server_pids[MAX_PIDS];  /* -P: report these processes' CPU time over the measured phase */
static int opt_npids;
static int opt_spread;            /* -S: session i connects only to host i mod n of the -s list */
static int opt_resolve_ms = -1;   /* zoo_set_servers_resolution_delay; see main() */
static int opt_timeline;          /* -I: per-second ops and max latency on stderr */
static int opt_verbose;

static char *databuf;
static char run_id[32];

/* ---- time ---- */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* utime+stime of another process (the server), in seconds; -1 if unknown */
static double proc_cpu_seconds(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long ut, st;
    /* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* ---- sessions ---- */
typedef struct {
    zhandle_t *zh;
    int idx;
} conn_t;

static conn_t *conns;
static pthread_mutex_t conn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conn_cv = PTHREAD_COND_INITIALIZER;
static int connected_count;
static atomic_int session_events;  /* non-connected state changes after start-up */
static atomic_int running;         /* 1 while a phase is running */

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh; (void)path; (void)ctx;
    if (type != ZOO_SESSION_EVENT)
        return;
    pthread_mutex_lock(&conn_mu);
    if (state == ZOO_CONNECTED_STATE) {
        connected_count++;
    } else {
        if (atomic_load(&running))
            atomic_fetch_add(&session_events, 1);
        fprintf(stderr, "load: session %d state %d\n", ((conn_t *)ctx)->idx, state);
    }
    pthread_cond_broadcast(&conn_cv);
    pthread_mutex_unlock(&conn_mu);
}

/* ---- slots: one logical request stream each; touched by one thread at a time ---- */
typedef struct {
    conn_t *c;
    int idx;
    int op;
    uint64_t t0;
    uint64_t rng;
    long counter;        /* per-slot name counter for create */
    uint64_t *lat;       /* latencies in ns */
    size_t nlat, cap;
    long errs[ERR_SLOTS];
    uint64_t last_done;  /* time of this slot's last completion */
    int record;          /* record latencies in this phase */
} slot_t;

static slot_t *slots;

/* the current phase */
static int ph_workload;
static uint64_t ph_deadline;   /* duration mode */
static long ph_limit;          /* op-count mode (0: duration) */
static atomic_long ph_issued;
static atomic_int ph_active;   /* slots still running */
static atomic_long prep_next;
static uint64_t ph_start;

/* -I timeline: per second of the measured phase, completions and the worst latency */
#define TL_SECS 3600
static atomic_ulong tl_ops[TL_SECS];
static atomic_ulong tl_max[TL_SECS];

static void timeline_add(uint64_t t1, uint64_t lat)
{
    uint64_t sec = (t1 - ph_start) / 1000000000u;
    if (sec >= TL_SECS)
        sec = TL_SECS - 1;
    atomic_fetch_add_explicit(&tl_ops[sec], 1, memory_order_relaxed);
    unsigned long cur = atomic_load_explicit(&tl_max[sec], memory_order_relaxed);
    while (lat > cur && !atomic_compare_exchange_weak(&tl_max[sec], &cur, lat))
        ;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void lat_push(slot_t *s, uint64_t v)
{
    if (s->nlat == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 4096;
        uint64_t *n = realloc(s->lat, ncap * sizeof(*n));
        if (!n) {
            fprintf(stderr, "load: out of memory\n");
            exit(2);
        }
        s->lat = n;
        s->cap = ncap;
    }
    s->lat[s->nlat++] = v;
}

static void issue(slot_t *s);

static void retire(slot_t *s)
{
    (void)s;
    atomic_fetch_sub(&ph_active, 1);
}

/* a completion: account, then go on (or retire the slot on error) */
static void completed(slot_t *s, int rc, int badlen)
{
    uint64_t t1 = now_ns();
    s->last_done = t1;
    int ok = (rc == ZOK && !badlen) || (ph_workload == W_PREP && rc == ZNODEEXISTS);
    if (!ok) {
        s->errs[badlen && rc == ZOK ? ERR_BADLEN : rc_slot(rc)]++;
        if (opt_verbose)
            fprintf(stderr, "load: slot %d op %d rc %d (%s)%s\n", s->idx, s->op, rc, zerror(rc),
                    badlen ? " bad data length" : "");
        retire(s);  /* an error never turns into a spin: the slot stops */
        return;
    }
    if (s->record) {
        lat_push(s, t1 - s->t0);
        if (opt_timeline)
            timeline_add(t1, t1 - s->t0);
    }
    issue(s);
}

static void create_done(int rc, const char *value, const void *data)
{
    (void)value;
    completed((slot_t *)data, rc, 0);
}

static void set_done(int rc, const struct Stat *stat, const void *data)
{
    (void)stat;
    completed((slot_t *)data, rc, 0);
}

static void get_done(int rc, const char *value, int value_len, const struct Stat *stat, const void *data)
{
    (void)value; (void)stat;
    completed((slot_t *)data, rc, rc == ZOK && value_len != opt_datasize);
}

static int may_issue(void)
{
    if (ph_workload == W_PREP)
        return 1;  /* bounded by prep_next */
    if (ph_limit > 0)
        return atomic_fetch_add(&ph_issued, 1) < ph_limit;
    return now_ns() < ph_deadline;
}

static void issue(slot_t *s)
{
    char path[256];
    int rc;

    if (!may_issue()) {
        retire(s);
        return;
    }
    switch (ph_workload) {
    case W_PREP: {
        long i = atomic_fetch_add(&prep_next, 1);
        if (i >= opt_keys) {
            retire(s);
            return;
        }
        snprintf(path, sizeof(path), "%s/d/k%ld", opt_base, i);
        s->op = OP_CREATE;
        s->t0 = now_ns();
        rc = zoo_acreate(s->c->zh, path, databuf, opt_datasize, &ZOO_OPEN_ACL_UNSAFE, 0, create_done, s);
        break;
    }
    case W_CREATE:
        snprintf(path, sizeof(path), "%s/c/r%s-%d-%ld", opt_base, run_id, s->idx, s->counter++);
        s->op = OP_CREATE;
        s->t0 = now_ns();
        rc = zoo_acreate(s->c->zh, path, databuf, opt_datasize, &ZOO_OPEN_ACL_UNSAFE, 0, create_done, s);
        break;
    case W_CREATE_SEQ:
        snprintf(path, sizeof(path), "%s/s/n-", opt_base);
        s->op = OP_CREATE;
        s->t0 = now_ns();
        rc = zoo_acreate(s->c->zh, path, databuf, opt_datasize, &ZOO_OPEN_ACL_UNSAFE, ZOO_SEQUENCE,
                         create_done, s);
        break;
    default: {
        int op;
        if (ph_workload == W_SET)
            op = OP_SET;
        else if (ph_workload == W_GET)
            op = OP_GET;
        else
            op = (int)(xorshift(&s->rng) % 100) < opt_read_pct ? OP_GET : OP_SET;
        snprintf(path, sizeof(path), "%s/d/k%" PRIu64, opt_base, xorshift(&s->rng) % (uint64_t)opt_keys);
        s->op = op;
        s->t0 = now_ns();
        if (op == OP_GET)
            rc = zoo_aget(s->c->zh, path, 0, get_done, s);
        else
            rc = zoo_aset(s->c->zh, path, databuf, opt_datasize, -1, set_done, s);
        break;
    }
    }
    if (rc != ZOK) {
        s->errs[rc_slot(rc)]++;
        s->errs[ERR_SUBMIT]++;
        fprintf(stderr, "load: slot %d: submitting op %d failed: %d (%s)\n", s->idx, s->op, rc, zerror(rc));
        retire(s);
    }
}

typedef struct {
    uint64_t start, end;
    double cpu, server_cpu;
    double server_cpu_each[MAX_PIDS];
    int drained;
} phase_result_t;

/* Run one phase with every slot; wait for all to retire. */
static phase_result_t run_phase(int workload, double duration, long limit, int record)
{
    phase_result_t r = {0};
    ph_workload = workload;
    ph_limit = limit;
    atomic_store(&ph_issued, 0);
    atomic_store(&ph_active, opt_outstanding);
    for (int i = 0; i < opt_outstanding; i++)
        slots[i].record = record;
    double cpu0 = cpu_seconds();
    double scpu0[MAX_PIDS];
    for (int i = 0; i < opt_npids; i++)
        scpu0[i] = proc_cpu_seconds(opt_server_pids[i]);
    r.start = now_ns();
    ph_start = r.start;
    ph_deadline = r.start + (uint64_t)(duration * 1e9);
    atomic_store(&running, 1);
    for (int i = 0; i < opt_outstanding; i++)
        issue(&slots[i]);
    /* wait: the phase's own length, then a bounded drain */
    uint64_t give_up = (limit > 0 || workload == W_PREP ? r.start + (uint64_t)(600 * 1e9) : ph_deadline) +
                       (uint64_t)(opt_drain_timeout * 1e9);
    struct timespec nap = {0, 2 * 1000 * 1000};
    while (atomic_load(&ph_active) > 0 && now_ns() < give_up)
        nanosleep(&nap, NULL);
    atomic_store(&running, 0);
    r.drained = atomic_load(&ph_active) == 0;
    r.end = r.start;
    for (int i = 0; i < opt_outstanding; i++)
        if (slots[i].last_done > r.end)
            r.end = slots[i].last_done;
    if (!r.drained)
        r.end = now_ns();
    r.cpu = cpu_seconds() - cpu0;
    r.server_cpu = opt_npids ? 0 : -1;
    for (int i = 0; i < opt_npids; i++) {
        double scpu1 = proc_cpu_seconds(opt_server_pids[i]);
        r.server_cpu_each[i] = (scpu0[i] >= 0 && scpu1 >= 0) ? scpu1 - scpu0[i] : -1;
        if (r.server_cpu_each[i] < 0 || r.server_cpu < 0)
            r.server_cpu = -1;
        else
            r.server_cpu += r.server_cpu_each[i];
    }
    return r;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct_ms(const uint64_t *v, size_t n, double p)
{
    if (n == 0)
        return 0.0;
    size_t k = (size_t)(p * (double)n + 0.999999999);  /* nearest rank */
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return (double)v[k - 1] / 1e6;
}

static int sync_create(zhandle_t *zh, const char *path)
{
    int rc = zoo_create(zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) {
        fprintf(stderr, "load: create %s: %d (%s)\n", path, rc, zerror(rc));
        return -1;
    }
    return 0;
}

/* -S: `sync` every session (each on its own member) and wait, bounded */
static pthread_mutex_t sync_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_cv = PTHREAD_COND_INITIALIZER;
static int sync_pending, sync_failed;

static void sync_done(int rc, const char *value, const void *data)
{
    (void)value;
    pthread_mutex_lock(&sync_mu);
    if (rc != ZOK) {
        sync_failed++;
        fprintf(stderr, "load: sync on session %d: %d (%s)\n", ((const conn_t *)data)->idx, rc, zerror(rc));
    }
    sync_pending--;
    pthread_cond_broadcast(&sync_cv);
    pthread_mutex_unlock(&sync_mu);
}

static int sync_all(const char *path)
{
    pthread_mutex_lock(&sync_mu);
    sync_pending = 0;
    sync_failed = 0;
    for (int i = 0; i < opt_conns; i++) {
        int rc = zoo_async(conns[i].zh, path, sync_done, &conns[i]);
        if (rc != ZOK) {
            fprintf(stderr, "load: sync on session %d refused: %d (%s)\n", i, rc, zerror(rc));
            sync_failed++;
        } else {
            sync_pending++;
        }
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    while (sync_pending > 0)
        if (pthread_cond_timedwait(&sync_cv, &sync_mu, &until) == ETIMEDOUT)
            break;
    int bad = sync_failed || sync_pending > 0;
    if (sync_pending > 0)
        fprintf(stderr, "load: %d syncs unanswered after 30 s\n", sync_pending);
    pthread_mutex_unlock(&sync_mu);
    return bad ? -1 : 0;
}

/* -P a[,b,...] */
static int parse_pids(const char *arg)
{
    const char *p = arg;
    opt_npids = 0;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v <= 0 || opt_npids == MAX_PIDS || (*end && *end != ','))
            return -1;
        opt_server_pids[opt_npids++] = v;
        p = *end ? end + 1 : end;
    }
    return opt_npids ? 0 : -1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: load -s host:port[,host:port...] -w create|create-seq|set|get|mixed [options]\n"
            "  -c N   sessions (4)                     -o N   requests outstanding in total (64)\n"
            "  -d S   measured seconds (10)            -n N   measured op count instead of -d\n"
            "  -W S   untimed warm-up seconds first (0) -z N   data bytes (100)\n"
            "  -X N   untimed warm-up of N ops first (instead of -W)\n"
            "  -k N   nodes for set/get/mixed (1000)   -r P   mixed: read percent (90)\n"
            "  -b P   base path (/kbench)              -t MS  session timeout (30000)\n"
            "  -T tag printed as tag=...               -v     verbose (client log at WARN)\n"
            "  -P PID report that process's CPU seconds over the measured phase (server_cpu_s=);\n"
            "         a list PID,PID,... is summed (server_cpu_s_each= lists the shares)\n"
            "  -S     spread: session i connects only to host (i mod n) of the -s list, and\n"
            "         every session syncs after the nodes are created (an ensemble's members)\n"
            "  -R MS  client's host re-resolution delay (-1: off, the default; 0: the library's\n"
            "         default, re-resolving on every poll)\n"
            "  -I     timeline: per second of the measured phase, ops and max latency (stderr)\n");
}

static int parse_workload(const char *s)
{
    for (int i = 0; i < W_PREP; i++)
        if (strcmp(s, workload_names[i]) == 0)
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    int ch;
    while ((ch = getopt(argc, argv, "s:w:c:o:d:n:W:X:z:k:r:b:t:T:P:R:SIvh")) != -1) {
        switch (ch) {
        case 's': opt_servers = optarg; break;
        case 'w': opt_workload = parse_workload(optarg); break;
        case 'c': opt_conns = atoi(optarg); break;
        case 'o': opt_outstanding = atoi(optarg); break;
        case 'd': opt_duration = atof(optarg); break;
        case 'n': opt_ops = atol(optarg); break;
        case 'W': opt_warmup = atof(optarg); break;
        case 'X': opt_warmup_ops = atol(optarg); break;
        case 'z': opt_datasize = atoi(optarg); break;
        case 'k': opt_keys = atoi(optarg); break;
        case 'r': opt_read_pct = atoi(optarg); break;
        case 'b': opt_base = optarg; break;
        case 't': opt_session_ms = atoi(optarg); break;
        case 'T': opt_tag = optarg; break;
        case 'P':
            if (parse_pids(optarg) < 0) {
                fprintf(stderr, "load: -P wants a pid or a comma-separated list of at most %d pids\n", MAX_PIDS);
                return 2;
            }
            break;
        case 'S': opt_spread = 1; break;
        case 'R': opt_resolve_ms = atoi(optarg); break;
        case 'I': opt_timeline = 1; break;
        case 'v': opt_verbose = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!opt_servers || opt_workload < 0 || opt_conns < 1 || opt_outstanding < 1 || opt_duration <= 0 ||
        opt_ops < 0 || opt_datasize < 0 || opt_datasize > 1000000 || opt_keys < 1 || opt_read_pct < 0 ||
        opt_read_pct > 100 || opt_warmup < 0 || opt_warmup_ops < 0 || opt_base[0] != '/' || strlen(opt_base) > 100) {
        usage(stderr);
        return 2;
    }

    zoo_set_debug_level(opt_verbose ? ZOO_LOG_LEVEL_WARN : ZOO_LOG_LEVEL_ERROR);
    databuf = malloc((size_t)opt_datasize + 1);
    for (int i = 0; i < opt_datasize; i++)
        databuf[i] = (char)('a' + i % 26);
    snprintf(run_id, sizeof(run_id), "%ld%04lx", (long)getpid(), (unsigned long)(now_ns() & 0xffff));

    /* -S: the host list, split; session i gets host i mod n */
    char **hosts = NULL;
    int nhosts = 0;
    if (opt_spread) {
        char *copy = strdup(opt_servers), *save = NULL;
        for (char *h = strtok_r(copy, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
            hosts = realloc(hosts, (size_t)(nhosts + 1) * sizeof(*hosts));
            hosts[nhosts++] = h;
        }
        if (nhosts == 0) {
            usage(stderr);
            return 2;
        }
    }

    conns = calloc((size_t)opt_conns, sizeof(*conns));
    for (int i = 0; i < opt_conns; i++) {
        const char *where = opt_spread ? hosts[i % nhosts] : opt_servers;
        conns[i].idx = i;
        conns[i].zh = zookeeper_init(where, watcher, opt_session_ms, NULL, &conns[i], 0);
        if (!conns[i].zh) {
            fprintf(stderr, "load: zookeeper_init(%s): %s\n", where, strerror(errno));
            return 2;
        }
        /* By default the client re-resolves the server list every time its I/O
         * thread polls (getaddrinfo with AI_ADDRCONFIG: a netlink socket and
         * /etc/hosts each time), which costs more CPU than the request itself
         * and would make the client, not the server, the bottleneck. The
         * loopback address never changes: -1 turns routine re-resolution off. */
        if (opt_resolve_ms != 0 && zoo_set_servers_resolution_delay(conns[i].zh, opt_resolve_ms) != ZOK) {
            fprintf(stderr, "load: zoo_set_servers_resolution_delay(%d) refused\n", opt_resolve_ms);
            return 2;
        }
    }
    pthread_mutex_lock(&conn_mu);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 15;
    while (connected_count < opt_conns)
        if (pthread_cond_timedwait(&conn_cv, &conn_mu, &until) == ETIMEDOUT)
            break;
    int nconn = connected_count;
    pthread_mutex_unlock(&conn_mu);
    if (nconn < opt_conns) {
        fprintf(stderr, "load: only %d of %d sessions connected to %s within 15 s\n", nconn, opt_conns,
                opt_servers);
        return 2;
    }

    slots = calloc((size_t)opt_outstanding, sizeof(*slots));
    for (int i = 0; i < opt_outstanding; i++) {
        slots[i].idx = i;
        slots[i].c = &conns[i % opt_conns];
        slots[i].rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ull) ^ now_ns();
        if (!slots[i].rng)
            slots[i].rng = 1;
    }

    /* parents, then the K data nodes (pipelined) */
    char p[256];
    zhandle_t *zh0 = conns[0].zh;
    if (sync_create(zh0, opt_base) < 0)
        return 2;
    const char *kids[] = {"c", "s", "d"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof(p), "%s/%s", opt_base, kids[i]);
        if (sync_create(zh0, p) < 0)
            return 2;
    }
    if (opt_spread && sync_all(opt_base) < 0)
        return 2;
    if (opt_workload == W_SET || opt_workload == W_GET || opt_workload == W_MIXED) {
        atomic_store(&prep_next, 0);
        phase_result_t pr = run_phase(W_PREP, 0, 0, 0);
        long perr = 0;
        for (int i = 0; i < opt_outstanding; i++)
            for (int e = 0; e < ERR_SLOTS; e++)
                perr += slots[i].errs[e];
        if (!pr.drained || perr) {
            fprintf(stderr, "load: creating the %d data nodes failed (%ld errors%s)\n", opt_keys, perr,
                    pr.drained ? "" : ", not drained");
            return 2;
        }
        if (opt_spread && sync_all(opt_base) < 0)
            return 2;
    }
    long warmup_errs = 0;
    if (opt_warmup > 0 || opt_warmup_ops > 0) {
        phase_result_t wr = run_phase(opt_workload, opt_warmup > 0 ? opt_warmup : 1, opt_warmup_ops, 0);
        if (!wr.drained) {
            fprintf(stderr, "load: warm-up did not drain\n");
            return 2;
        }
        for (int i = 0; i < opt_outstanding; i++)
            for (int e = 0; e < ERR_SLOTS; e++)
                if (e != ERR_SUBMIT)
                    warmup_errs += slots[i].errs[e];
        warmup_errs += atomic_load(&session_events);
        if (warmup_errs)
            fprintf(stderr, "load: %ld errors during the warm-up\n", warmup_errs);
    }
    atomic_store(&session_events, 0);
    for (int i = 0; i < opt_outstanding; i++)
        memset(slots[i].errs, 0, sizeof(slots[i].errs));

    phase_result_t r = run_phase(opt_workload, opt_duration, opt_ops, 1);

    if (opt_timeline) {
        uint64_t secs_run = (r.end - r.start) / 1000000000u + 1;
        for (uint64_t i = 0; i < secs_run && i < TL_SECS; i++)
            fprintf(stderr, "timeline t=%" PRIu64 " ops=%lu max_ms=%.3f\n", i, atomic_load(&tl_ops[i]),
                    (double)atomic_load(&tl_max[i]) / 1e6);
    }

    /* aggregate */
    size_t n = 0;
    long errs[ERR_SLOTS] = {0};
    for (int i = 0; i < opt_outstanding; i++) {
        n += slots[i].nlat;
        for (int e = 0; e < ERR_SLOTS; e++)
            errs[e] += slots[i].errs[e];
    }
    errs[ERR_SESSION] += atomic_load(&session_events);
    long total_errs = 0;
    for (int e = 0; e < ERR_SLOTS; e++)
        if (e != ERR_SUBMIT)  /* already counted under its rc */
            total_errs += errs[e];
    if (!r.drained)
        total_errs += atomic_load(&ph_active);
    uint64_t *all = malloc((n ? n : 1) * sizeof(*all));
    size_t k = 0;
    double sum = 0;
    for (int i = 0; i < opt_outstanding; i++) {
        memcpy(all + k, slots[i].lat, slots[i].nlat * sizeof(*all));
        k += slots[i].nlat;
    }
    qsort(all, n, sizeof(*all), cmp_u64);
    for (size_t i = 0; i < n; i++)
        sum += (double)all[i];
    double secs = (double)(r.end - r.start) / 1e9;
    int valid = total_errs == 0 && warmup_errs == 0 && r.drained && n > 0;

    if (opt_tag)
        printf("tag=%s ", opt_tag);
    printf("workload=%s conns=%d outstanding=%d data=%d keys=%d", workload_names[opt_workload], opt_conns,
           opt_outstanding, opt_datasize, opt_keys);
    if (opt_workload == W_MIXED)
        printf(" read_pct=%d", opt_read_pct);
    if (opt_spread)
        printf(" spread=%d", nhosts);
    printf(" duration_s=%.3f ops=%zu ops_per_s=%.1f errors=%ld valid=%d", secs, n, secs > 0 ? n / secs : 0.0,
           total_errs, valid);
    printf(" p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f mean_ms=%.3f", pct_ms(all, n, 0.50),
           pct_ms(all, n, 0.90), pct_ms(all, n, 0.99), pct_ms(all, n, 0.999), n ? (double)all[n - 1] / 1e6 : 0.0,
           n ? sum / (double)n / 1e6 : 0.0);
    printf(" client_cpu_s=%.2f", r.cpu);
    if (opt_npids) {
        printf(" server_cpu_s=%.2f", r.server_cpu);
        if (r.server_cpu >= 0 && n > 0)
            printf(" server_cpu_us_per_op=%.2f", r.server_cpu * 1e6 / (double)n);
        if (opt_npids > 1)
            for (int i = 0; i < opt_npids; i++)
                printf("%s%.2f", i ? "," : " server_cpu_s_each=", r.server_cpu_each[i]);
    }
    if (warmup_errs)
        printf(" warmup_errors=%ld", warmup_errs);
    if (!r.drained)
        printf(" undrained=%d", atomic_load(&ph_active));
    for (int e = 0; e < ERR_SLOTS; e++) {
        if (!errs[e])
            continue;
        const char *nm = err_name(e);
        if (nm)
            printf(" err_%s=%ld", nm, errs[e]);
        else
            printf(" err_rc%d=%ld", -e, errs[e]);
    }
    printf("\n");
    fflush(stdout);

    if (!r.drained) {
        /* requests are still in flight: closing would wait on them */
        _exit(1);
    }
    for (int i = 0; i < opt_conns; i++)
        zookeeper_close(conns[i].zh);
    for (int i = 0; i < opt_outstanding; i++)
        free(slots[i].lat);
    free(slots);
    free(conns);
    free(all);
    free(databuf);
    return valid ? 0 : 1;
}
