/* elect.c -- `kipper elect`, in the manner of kafka-leader-election.sh:
 *
 *   --preferred (--all | --topic T [--partition P])
 *       the preferred replica (first of the replica list) of each partition
 *       leads again, if it is live and in the ISR: the request goes to
 *       /admin/preferred_replica_election, each leader steps down, and this
 *       waits until the leaders are the preferred ones (or cannot be);
 *   --unclean --topic T --partition P
 *       a partition whose ISR has no live member elects another live replica
 *       (messages only the lost replicas had are lost): through
 *       /admin/unclean_leader_election, waiting for a leader.
 *
 * Exit codes: 0 done, 1 some election did not happen, 2 bad command line. */
#define _GNU_SOURCE
#include "elect.h"
#include "base/alloc.h"
#include "broker/coord/coord_elect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONNECT_TIMEOUT_MS 15000
#define WAIT_MS 30000
#define POLL_MS 100

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct {
    int preferred, unclean, all;
    const char *zookeeper, *topic;
    int32_t partition;   /* -1: every partition of the topic */
} elect_opts_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: kipper elect [--zookeeper host:port[,host:port...][/chroot]]\n"
               "         --preferred (--all | --topic T [--partition P])\n"
               "       | --unclean --topic T --partition P\n"
               "\n"
               "  --preferred  the first replica of each partition's list leads again, when it is live and in\n"
               "               the ISR (nothing acknowledged is lost)\n"
               "  --unclean    a partition with no live ISR member elects another live replica; messages only\n"
               "               the lost replicas had are lost\n");
}

static int usage_error(const char *what)
{
    fprintf(stderr, "kipper elect: %s\n\n", what);
    usage(stderr);
    return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, elect_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--preferred") == 0) {
            o->preferred = 1;
            continue;
        }
        if (strcmp(a, "--unclean") == 0) {
            o->unclean = 1;
            continue;
        }
        if (strcmp(a, "--all") == 0) {
            o->all = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(EXIT_OK);
        }
        if (!v)
            return usage_error("an option needs a value");
        if (strcmp(a, "--zookeeper") == 0) {
            o->zookeeper = v;
        } else if (strcmp(a, "--topic") == 0) {
            o->topic = v;
        } else if (strcmp(a, "--partition") == 0) {
            char *end;
            long p = strtol(v, &end, 10);
            if (*end || end == v || p < 0 || p >= COORD_MAX_PARTITIONS)
                return usage_error("--partition takes a partition number");
            o->partition = (int32_t)p;
        } else {
            return usage_error("unknown option");
        }
        i++;
    }
    if (o->preferred == o->unclean)
        return usage_error("give one of --preferred and --unclean");
    if (o->preferred && o->all == (o->topic != NULL))
        return usage_error("--preferred needs either --all or --topic");
    if (o->unclean && (!o->topic || o->partition < 0 || o->all))
        return usage_error("--unclean names one partition: --topic T --partition P");
    return EXIT_OK;
}

/* The partitions named: one, a topic's, or every topic's. */
static int collect(zhandle_t *zh, const elect_opts_t *o, coord_tp_t **out, int *n)
{
    char err[512], **names = NULL;
    int nnames = 0;
    *out = NULL;
    *n = 0;
    if (o->all && coord_admin_list_topics(zh, &names, &nnames, err, sizeof(err)) < 0) {
        fprintf(stderr, "kipper elect: %s\n", err);
        return -1;
    }
    const char *one[1] = {o->topic};
    for (int t = 0; t < (o->all ? nnames : 1); t++) {
        const char *topic = o->all ? names[t] : one[0];
        coord_topic_desc_t d;
        coord_admin_result_t res;
        if (coord_admin_describe_topic(zh, topic, &d, &res) < 0) {
            if (o->all)
                continue;   /* deleted meanwhile */
            fprintf(stderr, "kipper elect: %s: %s\n", topic, res.message);
            coord_admin_names_free(names, nnames);
            return -1;
        }
        for (int i = 0; i < d.npartitions; i++) {
            if (o->partition >= 0 && d.partitions[i].partition != o->partition)
                continue;
            *out = xrealloc(*out, sizeof(**out) * (size_t)(*n + 1));
            snprintf((*out)[*n].topic, sizeof((*out)[*n].topic), "%s", topic);
            (*out)[(*n)++].partition = d.partitions[i].partition;
        }
        coord_admin_topic_desc_free(&d);
    }
    coord_admin_names_free(names, nnames);
    if (*n == 0 && !o->all) {
        fprintf(stderr, "kipper elect: topic %s has no partition %d\n", o->topic, (int)o->partition);
        return -1;
    }
    return 0;
}

typedef enum { WAITING, ELECTED, ALREADY, NOT_POSSIBLE } outcome_t;

static int registered(const int32_t *live, int nlive, int32_t id)
{
    for (int i = 0; i < nlive; i++)
        if (live[i] == id)
            return 1;
    return 0;
}

/* Where one partition stands now (was: it was already led as asked before
 * the request). */
static outcome_t outcome(const coord_partition_desc_t *p, int unclean, int was_preferred, const int32_t *live,
                         int nlive)
{
    if (unclean)
        return p->leader < 0 ? WAITING : was_preferred ? ALREADY : ELECTED;
    if (p->nreplicas == 0)
        return NOT_POSSIBLE;
    int32_t preferred = p->replicas[0];
    if (p->leader == preferred)
        return was_preferred ? ALREADY : ELECTED;
    int in_isr = 0;
    for (int i = 0; i < p->nisr; i++)
        in_isr |= p->isr[i] == preferred;
    return in_isr && registered(live, nlive, preferred) ? WAITING : NOT_POSSIBLE;
}

/* One pass over the partitions: their outcomes, and whether any waits. */
static int check(zhandle_t *zh, const coord_tp_t *tps, int n, int unclean, const char *was, outcome_t *out)
{
    int32_t live[COORD_ADMIN_MAX_BROKERS > 4096 ? 4096 : COORD_ADMIN_MAX_BROKERS];
    int nlive = 0, waiting = 0;
    char err[256];
    coord_admin_live_brokers(zh, live, (int)(sizeof(live) / sizeof(live[0])), &nlive, err, sizeof(err));
    for (int i = 0; i < n; i++) {
        coord_topic_desc_t d;
        coord_admin_result_t res;
        out[i] = NOT_POSSIBLE;
        if (coord_admin_describe_topic(zh, tps[i].topic, &d, &res) < 0)
            continue;
        for (int k = 0; k < d.npartitions; k++)
            if (d.partitions[k].partition == tps[i].partition)
                out[i] = outcome(&d.partitions[k], unclean, was && was[i], live, nlive);
        coord_admin_topic_desc_free(&d);
        waiting += out[i] == WAITING;
    }
    return waiting;
}

static void report(const coord_tp_t *tps, int n, const outcome_t *out, outcome_t which, const char *what)
{
    int any = 0;
    for (int i = 0; i < n; i++)
        if (out[i] == which) {
            printf("%s%s-%d", any ? ", " : what, tps[i].topic, (int)tps[i].partition);
            any = 1;
        }
    if (any)
        printf("\n");
}

static int run(zhandle_t *zh, const elect_opts_t *o, const coord_tp_t *tps, int n)
{
    const char *path = o->unclean ? COORD_UNCLEAN_ELECTION : COORD_PREFERRED_ELECTION;
    outcome_t *out = xcalloc((size_t)n, sizeof(*out));
    char *was = xcalloc((size_t)n, 1), err[512];
    /* Which already have their preferred leader: nothing to elect there. */
    check(zh, tps, n, o->unclean, NULL, out);
    for (int i = 0; i < n; i++)
        was[i] = out[i] == ELECTED;   /* led as asked already: nothing to elect */
    int rc = coord_elect_request(zh, path, tps, n, err, sizeof(err));
    if (rc != 0) {
        fprintf(stderr, "kipper elect: %s\n", err);
        free(out);
        free(was);
        return EXIT_FAILED;
    }
    for (int waited = 0; check(zh, tps, n, o->unclean, was, out) > 0 && waited < WAIT_MS; waited += POLL_MS)
        nanosleep(&(struct timespec){0, POLL_MS * 1000000L}, NULL);
    if (coord_elect_done(zh, path, err, sizeof(err)) < 0)
        fprintf(stderr, "kipper elect: %s\n", err);
    const char *kind = o->unclean ? "UNCLEAN" : "PREFERRED";
    char done[96];
    snprintf(done, sizeof(done), "Successfully completed leader election (%s) for partitions ", kind);
    report(tps, n, out, ELECTED, done);
    report(tps, n, out, ALREADY, "Valid replica already elected for partitions ");
    report(tps, n, out, NOT_POSSIBLE, "Election not possible (the preferred replica is not live and in sync) for ");
    report(tps, n, out, WAITING, "Timed out waiting for the election of partitions ");
    int failed = 0;
    for (int i = 0; i < n; i++)
        failed |= out[i] == NOT_POSSIBLE || out[i] == WAITING;
    free(out);
    free(was);
    return failed ? EXIT_FAILED : EXIT_OK;
}

int elect_main(int argc, char **argv)
{
    elect_opts_t o = {.zookeeper = "127.0.0.1:2181", .partition = -1};
    int rc = parse_args(argc, argv, &o);
    if (rc != EXIT_OK)
        return rc;
    char err[512];
    zhandle_t *zh = coord_admin_connect(o.zookeeper, CONNECT_TIMEOUT_MS, err, sizeof(err));
    if (!zh) {
        fprintf(stderr, "kipper elect: %s\n", err);
        return EXIT_FAILED;
    }
    coord_tp_t *tps = NULL;
    int n = 0;
    rc = collect(zh, &o, &tps, &n) < 0 ? EXIT_FAILED : n == 0 ? EXIT_OK : run(zh, &o, tps, n);
    free(tps);
    zookeeper_close(zh);
    return rc;
}
