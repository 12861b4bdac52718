/* dev.c -- `kipper dev [dir]`: a local development cluster on loopback.
 *
 * A 3-keeper ensemble (client ports 2181-2183) and one broker (port 9092;
 * three once replication lands). Each is its own `kipper keeper` or `kipper
 * broker` process, as in production, started and supervised here and
 * stopped on Ctrl-C. Nothing else is created: no topics the user did not
 * ask for. Data lives under dir (default ./kipper-dev) and survives
 * restarts. */
#define _GNU_SOURCE
#include "dev.h"
#include "base/logging.h"
#include "base/loop.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEV_KEEPERS 3
#define DEV_BROKERS 1
#define DEV_PROCS (DEV_KEEPERS + DEV_BROKERS)
#define DEV_BROKER_PORT 9092

typedef struct {
    pid_t pids[DEV_PROCS];
    int running;
    int stopping;
} dev_t_;

static int write_keeper_files(const char *dir, int id, char *cfg_path, size_t cfg_len)
{
    char data_dir[600], myid[700];
    snprintf(data_dir, sizeof(data_dir), "%s/keeper%d", dir, id);
    snprintf(cfg_path, cfg_len, "%s/keeper%d.cfg", dir, id);
    snprintf(myid, sizeof(myid), "%s/myid", data_dir);
    if (mkdir(data_dir, 0755) < 0 && errno != EEXIST) {
        log_error("cannot create %s: %s", data_dir, strerror(errno));
        return -1;
    }
    FILE *f = fopen(myid, "w");
    if (!f || fprintf(f, "%d\n", id) < 0 || fclose(f) != 0) {
        log_error("cannot write %s: %s", myid, strerror(errno));
        return -1;
    }
    f = fopen(cfg_path, "w");
    if (!f) {
        log_error("cannot write %s: %s", cfg_path, strerror(errno));
        return -1;
    }
    fprintf(f,
            "# written by kipper dev\n"
            "tickTime=2000\ninitLimit=10\nsyncLimit=5\n"
            "dataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"
            "4lw.commands.whitelist=*\n",
            data_dir, 2180 + id);
    for (int i = 1; i <= DEV_KEEPERS; i++)
        fprintf(f, "server.%d=127.0.0.1:%d:%d\n", i, 2887 + i, 3887 + i);
    if (fclose(f) != 0) {
        log_error("cannot write %s: %s", cfg_path, strerror(errno));
        return -1;
    }
    return 0;
}

static int write_broker_files(const char *dir, int id, char *cfg_path, size_t cfg_len)
{
    snprintf(cfg_path, cfg_len, "%s/broker%d.properties", dir, id);
    FILE *f = fopen(cfg_path, "w");
    if (!f) {
        log_error("cannot write %s: %s", cfg_path, strerror(errno));
        return -1;
    }
    fprintf(f,
            "# written by kipper dev\n"
            "broker.id=%d\n"
            "listeners=PLAINTEXT://127.0.0.1:%d\n"
            "log.dirs=%s/broker%d\n"
            "zookeeper.connect=127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183\n"
            "num.partitions=1\n"
            "default.replication.factor=%d\n",
            id, DEV_BROKER_PORT + id - 1, dir, id, DEV_BROKERS);
    if (fclose(f) != 0) {
        log_error("cannot write %s: %s", cfg_path, strerror(errno));
        return -1;
    }
    return 0;
}

static pid_t spawn(const char *role, const char *cfg_path)
{
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);   /* the keeper handles its own signals */
        execl("/proc/self/exe", "kipper", role, cfg_path, (char *)NULL);
        fprintf(stderr, "kipper dev: cannot run the %s: %s\n", role, strerror(errno));
        _exit(127);
    }
    return pid;
}

static void on_signal(loop_t *loop, int signo, void *arg)
{
    dev_t_ *d = arg;
    (void)loop;
    if (d->stopping)
        return;
    d->stopping = 1;
    log_info("signal %d: stopping the cluster", signo);
    /* Brokers first (their clean stop still talks to the keepers); the
     * keepers when no broker is left (on_check). */
    for (int i = DEV_KEEPERS; i < DEV_PROCS; i++)
        if (d->pids[i] > 0)
            kill(d->pids[i], SIGTERM);
}

static void on_check(loop_t *loop, void *arg)
{
    dev_t_ *d = arg;
    for (int i = 0; i < DEV_PROCS; i++) {
        int status;
        if (d->pids[i] <= 0 || waitpid(d->pids[i], &status, WNOHANG) != d->pids[i])
            continue;
        if (!d->stopping)
            log_warn("%s %d exited (status %d); the others go on", i < DEV_KEEPERS ? "keeper" : "broker",
                     i < DEV_KEEPERS ? i + 1 : i - DEV_KEEPERS + 1,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
        d->pids[i] = 0;
        d->running--;
    }
    int brokers_left = 0;
    for (int i = DEV_KEEPERS; i < DEV_PROCS; i++)
        brokers_left += d->pids[i] > 0;
    if (d->stopping && brokers_left == 0)
        for (int i = 0; i < DEV_KEEPERS; i++)
            if (d->pids[i] > 0)
                kill(d->pids[i], SIGTERM);
    if (d->running == 0)
        loop_stop(loop);
    else
        loop_timer_add(loop, 200, on_check, d);
}

int dev_main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "kipper-dev";
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        log_error("cannot create %s: %s", dir, strerror(errno));
        return 1;
    }
    loop_t *loop = loop_create();
    dev_t_ d = {{0}, 0, 0};
    if (!loop || loop_on_shutdown_signals(loop, on_signal, &d) < 0) {
        log_error("cannot set up the event loop");
        return 1;
    }
    for (int id = 1; id <= DEV_KEEPERS; id++) {
        char cfg[700];
        if (write_keeper_files(dir, id, cfg, sizeof(cfg)) < 0)
            break;
        d.pids[id - 1] = spawn("keeper", cfg);
        if (d.pids[id - 1] > 0)
            d.running++;
    }
    for (int id = 1; id <= DEV_BROKERS && d.running == id + DEV_KEEPERS - 1; id++) {
        char cfg[700];
        if (write_broker_files(dir, id, cfg, sizeof(cfg)) < 0)
            break;
        d.pids[DEV_KEEPERS + id - 1] = spawn("broker", cfg);
        if (d.pids[DEV_KEEPERS + id - 1] > 0)
            d.running++;
    }
    if (d.running < DEV_PROCS)
        on_signal(loop, SIGTERM, &d);
    else
        printf("kipper dev: 3 keepers and 1 broker (data in %s)\n"
               "  bootstrap servers:     127.0.0.1:%d\n"
               "  keeper connect string: 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183\n"
               "  try: echo hello | kcat -P -b 127.0.0.1:%d -t demo && kcat -C -b 127.0.0.1:%d -t demo -e\n"
               "       (the first produce creates topic demo: auto.create.topics.enable)\n"
               "  Ctrl-C stops them all.\n",
               dir, DEV_BROKER_PORT, DEV_BROKER_PORT, DEV_BROKER_PORT);
    fflush(stdout);
    loop_timer_add(loop, 200, on_check, &d);
    loop_run(loop);
    loop_destroy(loop);
    return 0;
}
