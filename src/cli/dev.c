/* dev.c -- `kipper dev [--verbose] [dir]`: a local development cluster on
 * loopback.
 *
 * Three keepers as an ensemble (client ports 2181-2183) and three brokers
 * (ids 1-3 on ports 9092-9094, replication factor 3, min.insync.replicas 2),
 * each its own `kipper keeper` or `kipper broker` process as in production,
 * started and supervised here. Their logs go to files under dir/logs,
 * appended across runs, so the terminal shows only what dev says; --verbose
 * streams them to the terminal instead. The banner comes last, once the
 * ensemble has a leader and every broker serves Metadata listing all three,
 * so what it tells the user works when it appears. Ctrl-C stops the brokers
 * one at a time (each with a controlled shutdown, which needs the keepers),
 * then the keepers; a second Ctrl-C kills everything at once. Nothing else
 * is created: no topic the user did not ask for. Data lives under dir
 * (default ./kipper-dev) and survives restarts. */
#define _GNU_SOURCE
#include "dev.h"
#include "dev_probe.h"
#include "base/fsutil.h"
#include "base/logging.h"
#include "base/loop.h"
#include "base/net.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEV_KEEPERS 3
#define DEV_BROKERS 3
#define DEV_PROCS (DEV_KEEPERS + DEV_BROKERS)
#define KEEPER_PORT(id) (2180 + (id))   /* client port */
#define QUORUM_PORT(id) (2887 + (id))
#define ELECTION_PORT(id) (3887 + (id))
#define BROKER_PORT(id) (9091 + (id))
#define DIR_MAX 2048                    /* so every path below it fits PATH_BUF */
#define PATH_BUF 4096

#define REAP_EVERY_MS 200
#define PROBE_EVERY_MS 250
#define PROBE_TIMEOUT_MS 1000
#define READY_TIMEOUT_MS 60000
/* A broker's controlled shutdown first moves the leadership of each
 * partition it leads to another ISR member: it may take a few seconds. */
#define BROKER_STOP_MS 30000
#define KEEPER_STOP_MS 10000

typedef enum { DEV_STARTING, DEV_UP, DEV_STOPPING } dev_phase_t;

struct dev_cluster;

typedef struct {
    struct dev_cluster *d;
    const char *role;      /* "keeper" or "broker" */
    int id;                /* 1..3 */
    int port;              /* its client port, where it is asked whether it is up */
    pid_t pid;             /* 0 when not running (never started, or reaped) */
    int signalled;         /* SIGTERM sent: it is stopping */
    uint64_t stop_sent_ms; /* when (loop clock), for the SIGKILL after BROKER_STOP_MS / KEEPER_STOP_MS */
    int killed;            /* SIGKILL sent (and said) */
    dev_probe_t *probe;    /* the question in flight while starting */
    int up;                /* broker: answered Metadata listing every broker */
} dev_proc_t;

typedef struct dev_cluster {
    loop_t *loop;
    const char *dir;
    int verbose;
    dev_phase_t phase;
    int keeper_leader;     /* id of a keeper that said "Mode: leader", 0 while none has */
    int keepers_stopping;  /* SIGTERM sent to the keepers */
    int exit_code;
    dev_proc_t procs[DEV_PROCS];   /* keepers first, then brokers */
} dev_cluster_t;

static int is_broker(const dev_proc_t *p)
{
    return p->role[0] == 'b';
}

/* ---- configuration files ---- */

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        log_error("cannot write %s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    return 0;
}

static int write_keeper_files(const char *dir, int id, char *cfg_path, size_t cfg_len)
{
    char data_dir[DIR_MAX + 32], path[PATH_BUF], text[PATH_BUF + 1024], myid[16];
    snprintf(data_dir, sizeof(data_dir), "%s/keeper%d", dir, id);
    if (fs_make_dirs(data_dir) < 0) {
        log_error("cannot create %s: %s", data_dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/myid", data_dir);
    snprintf(myid, sizeof(myid), "%d\n", id);
    if (write_file(path, myid) < 0)
        return -1;
    int n = snprintf(text, sizeof(text),
                     "# written by kipper dev\n"
                     "tickTime=2000\ninitLimit=10\nsyncLimit=5\n"
                     "dataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"
                     "4lw.commands.whitelist=*\n",
                     data_dir, KEEPER_PORT(id));
    for (int i = 1; i <= DEV_KEEPERS; i++)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "server.%d=127.0.0.1:%d:%d\n", i, QUORUM_PORT(i),
                      ELECTION_PORT(i));
    snprintf(cfg_path, cfg_len, "%s/keeper%d.cfg", dir, id);
    return write_file(cfg_path, text);
}

static int write_broker_files(const char *dir, int id, char *cfg_path, size_t cfg_len)
{
    char text[PATH_BUF + 1024];
    snprintf(text, sizeof(text),
             "# written by kipper dev\n"
             "broker.id=%d\n"
             "listeners=PLAINTEXT://127.0.0.1:%d\n"
             "log.dirs=%s/broker%d\n"
             "zookeeper.connect=127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183\n"
             "# Short, for a dev box: a crashed broker's registration expires, and its\n"
             "# partitions move to another replica, within about 6 s (Kafka's default is 18 s).\n"
             "zookeeper.session.timeout.ms=6000\n"
             "num.partitions=1\n"
             "default.replication.factor=%d\n"
             "min.insync.replicas=2\n",
             id, BROKER_PORT(id), dir, id, DEV_BROKERS);
    snprintf(cfg_path, cfg_len, "%s/broker%d.properties", dir, id);
    return write_file(cfg_path, text);
}

/* ---- starting the servers ---- */

static int port_free(int port)
{
    char err[256];
    int fd = net_listen_tcp("127.0.0.1", port, 1, err, sizeof(err));
    if (fd < 0) {
        log_error("%s: is another kipper dev, ZooKeeper or Kafka running?", err);
        return 0;
    }
    close(fd);
    return 1;
}

/* Every port the servers will listen on must be free first: otherwise a
 * server exits at once, and meanwhile whatever holds its port (another
 * kipper dev, ZooKeeper, Kafka) could answer dev's questions in its place. */
static int check_ports_free(void)
{
    int ok = 1;
    for (int id = 1; id <= DEV_KEEPERS && ok; id++)
        ok = port_free(KEEPER_PORT(id)) && port_free(QUORUM_PORT(id)) && port_free(ELECTION_PORT(id));
    for (int id = 1; id <= DEV_BROKERS && ok; id++)
        ok = port_free(BROKER_PORT(id));
    return ok ? 0 : -1;
}

/* Where a server's stdout and stderr go: its log file, appended so earlier
 * runs stay readable; with --verbose, dev's own terminal (-2). -1 on error. */
static int open_log(const dev_cluster_t *d, const dev_proc_t *p)
{
    char path[PATH_BUF];
    if (d->verbose)
        return -2;
    snprintf(path, sizeof(path), "%s/logs/%s%d.log", d->dir, p->role, p->id);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        log_error("cannot open %s: %s", path, strerror(errno));
    return fd;
}

/* In the child, before exec. Its own process group: a Ctrl-C in the
 * terminal reaches dev alone, which then stops the brokers before the
 * keepers. If dev itself dies, the child is told to stop (SIGTERM). */
static void prepare_child(pid_t parent, int log_fd)
{
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
        _exit(127);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0)
        dup2(null_fd, STDIN_FILENO);
    if (log_fd >= 0) {
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);   /* dev's loop blocked them; the server handles its own */
}

static int spawn(dev_cluster_t *d, dev_proc_t *p, const char *cfg_path)
{
    int log_fd = open_log(d, p);
    if (log_fd == -1)
        return -1;
    pid_t parent = getpid();
    fflush(NULL);   /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid == 0) {
        prepare_child(parent, log_fd);
        execl("/proc/self/exe", "kipper", p->role, cfg_path, (char *)NULL);
        fprintf(stderr, "kipper dev: cannot run the %s: %s\n", p->role, strerror(errno));
        _exit(127);
    }
    if (log_fd >= 0)
        close(log_fd);
    if (pid < 0) {
        log_error("cannot start %s %d: %s", p->role, p->id, strerror(errno));
        return -1;
    }
    setpgid(pid, pid);   /* also here, so no Ctrl-C reaches it before its own call */
    p->pid = pid;
    return 0;
}

static int start_all(dev_cluster_t *d)
{
    for (int i = 0; i < DEV_PROCS; i++) {
        dev_proc_t *p = &d->procs[i];
        char cfg[PATH_BUF];
        int rc = is_broker(p) ? write_broker_files(d->dir, p->id, cfg, sizeof(cfg))
                              : write_keeper_files(d->dir, p->id, cfg, sizeof(cfg));
        if (rc < 0 || spawn(d, p, cfg) < 0)
            return -1;
    }
    return 0;
}

/* ---- waiting until the cluster is up ---- */

#define METADATA_CORRELATION_ID 0x6b646576   /* "kdev" */

/* A Metadata v1 request for no topics: the answer lists the brokers the
 * asked broker sees registered, and asks for nothing to be created. Built
 * by hand: six fields, not worth the codec. */
static const uint8_t metadata_v1_request[] = {
    0, 0, 0, 24,                                  /* size of what follows */
    0, 3, 0, 1,                                   /* Metadata, version 1 */
    0x6b, 0x64, 0x65, 0x76,                       /* correlation id */
    0, 10, 'k', 'i', 'p', 'p', 'e', 'r', '-', 'd', 'e', 'v',   /* client id */
    0, 0, 0, 0,                                   /* topics: none */
};

typedef struct {
    const uint8_t *p;
    size_t left;
    int bad;
} reader_t;

/* A big-endian int of n (2 or 4) bytes; 0 and bad once past the end. */
static int32_t take(reader_t *r, size_t n)
{
    uint32_t v = 0;
    if (r->bad || r->left < n) {
        r->bad = 1;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        v = v << 8 | r->p[i];
    r->p += n;
    r->left -= n;
    return n == 2 ? (int16_t)v : (int32_t)v;
}

/* A Kafka (nullable) string: skipped. */
static void skip_string(reader_t *r)
{
    int32_t len = take(r, 2);
    if (len <= 0)
        return;
    if ((size_t)len > r->left)
        r->bad = 1;
    else
        r->p += len, r->left -= (size_t)len;
}

static int metadata_answer_whole(const uint8_t *a, size_t len)
{
    return len >= 4 && len - 4 >= ((uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3]);
}

/* Whether a Metadata v1 answer lists every dev broker: the asked broker
 * serves, and all three are registered in the coordinator. */
static int metadata_lists_every_broker(const uint8_t *a, size_t len)
{
    reader_t r = {a, len, 0};
    unsigned seen = 0;
    take(&r, 4);   /* size */
    if (take(&r, 4) != METADATA_CORRELATION_ID)
        return 0;
    int32_t n = take(&r, 4);
    for (int32_t i = 0; i < n && !r.bad; i++) {
        int32_t id = take(&r, 4);
        skip_string(&r);   /* host */
        take(&r, 4);       /* port */
        skip_string(&r);   /* rack */
        if (id >= 1 && id <= DEV_BROKERS)
            seen |= 1u << id;
    }
    return !r.bad && seen == ((1u << (DEV_BROKERS + 1)) - 2);
}

static void print_banner(const dev_cluster_t *d)
{
    printf("kipper dev: 3 keepers and 3 brokers are up (data in %s)\n"
           "  bootstrap servers:     127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d\n"
           "  keeper connect string: 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183\n"
           "  try:  echo hello | kcat -P -b 127.0.0.1:%d -t demo\n"
           "        kcat -C -b 127.0.0.1:%d -t demo -e\n"
           "        (the first produce creates topic demo: 1 partition, 3 replicas, min.insync.replicas=2)\n"
           "        kipper topics --describe    (leaders and in-sync replicas)\n",
           d->dir, BROKER_PORT(1), BROKER_PORT(2), BROKER_PORT(3), BROKER_PORT(1), BROKER_PORT(1));
    if (d->verbose)
        printf("  logs: on this terminal (--verbose)\n");
    else
        printf("  logs: %s/logs/keeper{1,2,3}.log and broker{1,2,3}.log (--verbose shows them here)\n", d->dir);
    printf("  Ctrl-C stops them all.\n");
    fflush(stdout);
}

static void maybe_up(dev_cluster_t *d)
{
    if (d->phase != DEV_STARTING || !d->keeper_leader)
        return;
    for (int i = DEV_KEEPERS; i < DEV_PROCS; i++)
        if (!d->procs[i].up)
            return;
    d->phase = DEV_UP;
    for (int i = 0; i < DEV_PROCS; i++) {
        if (d->procs[i].probe)
            dev_probe_cancel(d->procs[i].probe);
        d->procs[i].probe = NULL;
    }
    print_banner(d);
}

static void on_answer(void *arg, const uint8_t *answer, size_t len)
{
    dev_proc_t *p = arg;
    p->probe = NULL;
    if (!answer)
        return;   /* not serving yet: asked again on the next round */
    if (!is_broker(p) && memmem(answer, len, "\nMode: leader\n", 14))
        p->d->keeper_leader = p->id;
    if (is_broker(p) && metadata_lists_every_broker(answer, len))
        p->up = 1;
    maybe_up(p->d);
}

/* Every PROBE_EVERY_MS while starting: each keeper is asked `srvr` until
 * one says it leads, each broker for Metadata until it lists all three. */
static void on_probe_round(loop_t *loop, void *arg)
{
    dev_cluster_t *d = arg;
    if (d->phase != DEV_STARTING)
        return;
    for (int i = 0; i < DEV_PROCS; i++) {
        dev_proc_t *p = &d->procs[i];
        int wanted = is_broker(p) ? !p->up : !d->keeper_leader;
        if (p->pid <= 0 || p->probe || !wanted)
            continue;
        if (is_broker(p))
            p->probe = dev_probe_start(loop, p->port, metadata_v1_request, sizeof(metadata_v1_request),
                                       metadata_answer_whole, PROBE_TIMEOUT_MS, on_answer, p);
        else
            p->probe = dev_probe_start(loop, p->port, "srvr", 4, NULL, PROBE_TIMEOUT_MS, on_answer, p);
    }
    loop_timer_add(loop, PROBE_EVERY_MS, on_probe_round, d);
}

/* Where the user finds a server's own account of what went wrong (p NULL:
 * every server's). */
static const char *logs_hint(const dev_cluster_t *d, const dev_proc_t *p, char *out, size_t n)
{
    if (d->verbose)
        snprintf(out, n, "see %s above", p ? "its log" : "their logs");
    else if (p)
        snprintf(out, n, "see its log, %s/logs/%s%d.log", d->dir, p->role, p->id);
    else
        snprintf(out, n, "see their logs in %s/logs/", d->dir);
    return out;
}

static void begin_stop(dev_cluster_t *d, const char *why);

static void on_ready_deadline(loop_t *loop, void *arg)
{
    dev_cluster_t *d = arg;
    char missing[128] = "", hint[PATH_BUF];
    (void)loop;
    if (d->phase != DEV_STARTING)
        return;
    logs_hint(d, NULL, hint, sizeof(hint));
    for (int i = DEV_KEEPERS; i < DEV_PROCS; i++)
        if (!d->procs[i].up)
            snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%sbroker %d",
                     missing[0] ? ", " : "", d->procs[i].id);
    /* Without a keeper leader no broker can register: name the cause. */
    if (!d->keeper_leader)
        log_error("the cluster did not come up within %d s: no keeper leads the ensemble; %s",
                  READY_TIMEOUT_MS / 1000, hint);
    else
        log_error("the cluster did not come up within %d s: not serving yet: %s; %s", READY_TIMEOUT_MS / 1000,
                  missing, hint);
    d->exit_code = 1;
    begin_stop(d, NULL);
}

/* ---- stopping ---- */

static int count_running(const dev_cluster_t *d, int brokers)
{
    int n = 0;
    for (int i = 0; i < DEV_PROCS; i++)
        n += d->procs[i].pid > 0 && is_broker(&d->procs[i]) == brokers;
    return n;
}

static void terminate(dev_cluster_t *d, dev_proc_t *p)
{
    kill(p->pid, SIGTERM);
    p->signalled = 1;
    p->stop_sent_ms = loop_now_ms(d->loop);
}

/* The brokers one at a time, from the highest id, so each one's controlled
 * shutdown hands its leaderships to brokers that stay (stopped all at once,
 * they would hand them to each other); then the keepers, which the brokers
 * need until the last one is gone. Called again as each one exits. */
static void stop_next(dev_cluster_t *d)
{
    if (d->phase != DEV_STOPPING)
        return;
    dev_proc_t *next = NULL;
    for (int i = DEV_PROCS - 1; i >= DEV_KEEPERS; i--) {
        dev_proc_t *p = &d->procs[i];
        if (p->pid > 0 && p->signalled)
            return;   /* still stopping */
        if (p->pid > 0 && !next)
            next = p;
    }
    if (next) {
        log_info("stopping broker %d", next->id);
        terminate(d, next);
        return;
    }
    if (count_running(d, 0) == 0 || d->keepers_stopping)
        return;
    log_info("stopping the keepers");
    d->keepers_stopping = 1;
    for (int i = 0; i < DEV_KEEPERS; i++)
        if (d->procs[i].pid > 0)
            terminate(d, &d->procs[i]);
}

/* A server still running after its time to stop is killed, and the user
 * is told which. */
static void kill_late(dev_cluster_t *d)
{
    uint64_t now = loop_now_ms(d->loop);
    for (int i = 0; i < DEV_PROCS; i++) {
        dev_proc_t *p = &d->procs[i];
        uint64_t limit = is_broker(p) ? BROKER_STOP_MS : KEEPER_STOP_MS;
        if (p->pid <= 0 || !p->signalled || p->killed || now - p->stop_sent_ms < limit)
            continue;
        log_warn("%s %d did not stop within %d s: killing it (SIGKILL)", p->role, p->id, (int)(limit / 1000));
        kill(p->pid, SIGKILL);
        p->killed = 1;
    }
}

static void begin_stop(dev_cluster_t *d, const char *why)
{
    if (d->phase == DEV_STOPPING)
        return;
    d->phase = DEV_STOPPING;
    for (int i = 0; i < DEV_PROCS; i++) {
        if (d->procs[i].probe)
            dev_probe_cancel(d->procs[i].probe);
        d->procs[i].probe = NULL;
    }
    if (why)
        log_info("%s", why);
    stop_next(d);
}

static void on_signal(loop_t *loop, int signo, void *arg)
{
    dev_cluster_t *d = arg;
    const char *name = signo == SIGINT ? "Ctrl-C" : "SIGTERM";
    (void)loop;
    if (d->phase != DEV_STOPPING) {
        char why[96];
        snprintf(why, sizeof(why), "%s: stopping the cluster (%s again kills everything at once)", name, name);
        begin_stop(d, why);
        return;
    }
    log_info("%s again: killing every server at once (SIGKILL)", name);
    for (int i = 0; i < DEV_PROCS; i++) {
        dev_proc_t *p = &d->procs[i];
        if (p->pid > 0 && !p->killed) {
            kill(p->pid, SIGKILL);
            p->killed = 1;
        }
    }
}

/* ---- supervising ---- */

static void describe_status(int status, char *out, size_t n)
{
    if (WIFEXITED(status))
        snprintf(out, n, "status %d", WEXITSTATUS(status));
    else
        snprintf(out, n, "signal %s", sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
}

static void on_exited(dev_cluster_t *d, dev_proc_t *p, int status)
{
    char how[64], hint[PATH_BUF];
    p->pid = 0;
    if (p->probe)
        dev_probe_cancel(p->probe);
    p->probe = NULL;
    describe_status(status, how, sizeof(how));
    logs_hint(d, p, hint, sizeof(hint));
    if (d->phase == DEV_STOPPING) {
        /* A clean stop says nothing; a failed one, or a crash, is reported. */
        if (!p->killed && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            log_warn("%s %d stopped with %s; %s", p->role, p->id, how, hint);
    } else if (d->phase == DEV_STARTING) {
        log_error("%s %d exited with %s before the cluster was up; %s", p->role, p->id, how, hint);
        d->exit_code = 1;
        begin_stop(d, NULL);
    } else {
        log_warn("%s %d exited with %s; the others go on; %s", p->role, p->id, how, hint);
    }
}

static void on_reap(loop_t *loop, void *arg)
{
    dev_cluster_t *d = arg;
    for (int i = 0; i < DEV_PROCS; i++) {
        dev_proc_t *p = &d->procs[i];
        int status;
        if (p->pid > 0 && waitpid(p->pid, &status, WNOHANG) == p->pid)
            on_exited(d, p, status);
    }
    kill_late(d);
    stop_next(d);
    if (count_running(d, 0) + count_running(d, 1) > 0) {
        loop_timer_add(loop, REAP_EVERY_MS, on_reap, d);
        return;
    }
    if (d->phase != DEV_STOPPING) {
        log_error("every server has exited");
        d->exit_code = 1;
    } else {
        log_info("all stopped");
    }
    loop_stop(loop);
}

/* ---- the command ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: kipper dev [--verbose] [dir]\n"
               "\n"
               "Runs 3 keepers (127.0.0.1:2181-2183) and 3 brokers (127.0.0.1:9092-9094) on loopback until\n"
               "Ctrl-C. Their data lives in dir (default ./kipper-dev) and survives restarts; their logs go to\n"
               "dir/logs/, or to the terminal with --verbose (-v).\n");
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "kipper dev: %s '%.200s'\n\n", what, arg);
    usage(stderr);
    return 2;
}

/* 0 to go on, -1 after --help, or 2 for a bad command line. */
static int parse_args(dev_cluster_t *d, int argc, char **argv)
{
    int have_dir = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            d->verbose = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (a[0] == '-') {
            return usage_error("unknown option", a);
        } else if (have_dir) {
            return usage_error("one data folder only, also got", a);
        } else if (!a[0] || strlen(a) > DIR_MAX) {
            return usage_error("the data folder must be a path of 1 to 2048 bytes, got", a);
        } else {
            d->dir = a;
            have_dir = 1;
        }
    }
    return 0;
}

static void init_procs(dev_cluster_t *d)
{
    for (int i = 0; i < DEV_PROCS; i++) {
        dev_proc_t *p = &d->procs[i];
        int broker = i >= DEV_KEEPERS;
        p->d = d;
        p->role = broker ? "broker" : "keeper";
        p->id = broker ? i - DEV_KEEPERS + 1 : i + 1;
        p->port = broker ? BROKER_PORT(p->id) : KEEPER_PORT(p->id);
    }
}

int dev_main(int argc, char **argv)
{
    dev_cluster_t d = {.dir = "kipper-dev", .phase = DEV_STARTING};
    int rc = parse_args(&d, argc, argv);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    log_set_tag("dev");
    char logs[PATH_BUF];
    snprintf(logs, sizeof(logs), "%s/logs", d.dir);
    if (fs_make_dirs(logs) < 0) {
        log_error("cannot create %s: %s", logs, strerror(errno));
        return 1;
    }
    if (check_ports_free() < 0)
        return 1;
    init_procs(&d);
    d.loop = loop_create();
    if (!d.loop || loop_on_shutdown_signals(d.loop, on_signal, &d) < 0) {
        log_error("cannot set up the event loop");
        return 1;
    }
    log_info("starting 3 keepers and 3 brokers in %s; the banner follows once they all serve", d.dir);
    if (start_all(&d) < 0) {
        d.exit_code = 1;
        begin_stop(&d, NULL);
    } else {
        loop_timer_add(d.loop, 0, on_probe_round, &d);
        loop_timer_add(d.loop, READY_TIMEOUT_MS, on_ready_deadline, &d);
    }
    loop_timer_add(d.loop, REAP_EVERY_MS, on_reap, &d);
    loop_run(d.loop);
    loop_destroy(d.loop);
    return d.exit_code;
}
