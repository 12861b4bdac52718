/* reassign.c -- `kipper reassign`, in the manner of the ZooKeeper-based
 * kafka-reassign-partitions.sh: it writes and reads the moves in the
 * coordinator directly (coord_reassign.h); each partition's leader carries
 * its move out (docs/replication.md, Reassignment).
 *
 *   --generate --topics-to-move-json-file F --broker-list 1,2,3
 *   --execute  --reassignment-json-file F [--throttle RATE]
 *   --verify   --reassignment-json-file F
 *   --cancel   --reassignment-json-file F
 *   --drain BROKER [--execute [--throttle RATE]]
 *
 * Plans are Kafka's JSON. A plan naming a missing topic or partition, a
 * broker that is not registered, the same broker twice or an empty replica
 * list, or that is not valid JSON, is refused before anything is written.
 * Exit codes: 0 done, 1 the operation failed (or --verify found moves not
 * done), 2 the command line is wrong.
 *
 * --throttle sets the move throttle's rates on the brokers concerned before
 * the moves start, and --verify removes them once no move of the plan is in
 * progress (reassign_throttle.h); --verify also shows how far each move in
 * progress has got, read from the brokers (reassign_progress.h). */
#define _GNU_SOURCE
#include "reassign.h"
#include "reassign_progress.h"
#include "reassign_throttle.h"
#include "broker/coord/coord_reassign.h"
#include "base/alloc.h"
#include "base/fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_MS 15000
#define PLAN_FILE_MAX (64u << 20)

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef enum { NONE, GENERATE, EXECUTE, VERIFY, CANCEL, DRAIN } action_t;

typedef struct {
    action_t action;
    int execute;                   /* --drain with --execute */
    int preserve_throttles;        /* --cancel --preserve-throttles */
    const char *zookeeper;
    const char *plan_file;         /* --reassignment-json-file */
    const char *topics_file;       /* --topics-to-move-json-file */
    const char *broker_list;
    const char *throttle_arg;      /* --throttle, as given */
    int64_t throttle;              /* bytes/s; 0: none */
    int32_t drain;
} reassign_opts_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kipper reassign [--zookeeper host:port[,host:port...][/chroot]]\n"
            "         --generate --topics-to-move-json-file FILE --broker-list 1,2,3\n"
            "       | --execute --reassignment-json-file FILE [--throttle RATE]\n"
            "       | --verify --reassignment-json-file FILE\n"
            "       | --cancel --reassignment-json-file FILE [--preserve-throttles]\n"
            "       | --drain BROKER [--execute [--throttle RATE]]\n"
            "\n"
            "  --generate   print the current assignment of the topics in FILE ({\"version\":1,\"topics\":\n"
            "               [{\"topic\":\"t\"}]}) and a proposed one over the brokers listed (rack-aware\n"
            "               when every broker has broker.rack)\n"
            "  --execute    start the moves in FILE (kafka-reassign-partitions.sh's format); prints the\n"
            "               current assignment first, to keep for a rollback\n"
            "  --throttle   with --execute: first set leader.replication.throttled.rate and\n"
            "               follower.replication.throttled.rate to RATE (bytes/second, a positive integer) on\n"
            "               every broker holding a replica of a moved partition now or in its target, so the\n"
            "               moves' catch-up traffic stays under RATE; --verify removes them when done\n"
            "  --verify     whether each move in FILE is done (exit 1 while any is not); for a move in\n"
            "               progress, the bytes each added replica still lacks and its rate (read from the\n"
            "               brokers, about a second apart); once no move in FILE is in progress, removes\n"
            "               the throttle rates from every registered broker and every broker FILE names\n"
            "  --cancel     stop the moves in FILE still in progress (their replicas stay as they were),\n"
            "               then remove the throttle rates as --verify does (--preserve-throttles: keep them)\n"
            "  --drain N    a plan moving every replica off broker N (before removing it); with --execute\n"
            "               it is started at once\n"
            "  --zookeeper  the coordinator, as zookeeper.connect in server.properties (default 127.0.0.1:2181)\n");
}

static int usage_error(const char *what)
{
    fprintf(stderr, "kipper reassign: %s\n\n", what);
    usage(stderr);
    return EXIT_USAGE;
}

static int set_action(reassign_opts_t *o, action_t a)
{
    if (o->action != NONE && !(o->action == DRAIN && a == EXECUTE))
        return -1;
    if (o->action == DRAIN && a == EXECUTE)
        o->execute = 1;
    else
        o->action = a;
    return 0;
}

static int parse_args(int argc, char **argv, reassign_opts_t *o)
{
    static const struct {
        const char *flag;
        action_t action;
    } actions[] = {{"--generate", GENERATE}, {"--execute", EXECUTE}, {"--verify", VERIFY}, {"--cancel", CANCEL}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int taken = 0;
        for (size_t k = 0; k < sizeof(actions) / sizeof(actions[0]); k++)
            if (strcmp(a, actions[k].flag) == 0) {
                if (set_action(o, actions[k].action) < 0)
                    return usage_error("give one of --generate, --execute, --verify, --cancel, --drain");
                taken = 1;
            }
        if (taken)
            continue;
        if (strcmp(a, "--preserve-throttles") == 0) {
            o->preserve_throttles = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(EXIT_OK);
        }
        if (!v)
            return usage_error("an option needs a value");
        if (strcmp(a, "--zookeeper") == 0)
            o->zookeeper = v;
        else if (strcmp(a, "--reassignment-json-file") == 0)
            o->plan_file = v;
        else if (strcmp(a, "--topics-to-move-json-file") == 0)
            o->topics_file = v;
        else if (strcmp(a, "--broker-list") == 0)
            o->broker_list = v;
        else if (strcmp(a, "--throttle") == 0)
            o->throttle_arg = v;
        else if (strcmp(a, "--drain") == 0) {
            char *end;
            long id = strtol(v, &end, 10);
            if (*end || end == v || id < 0 || id > INT32_MAX || set_action(o, DRAIN) < 0)
                return usage_error("--drain takes one broker id (and no other action but --execute)");
            o->drain = (int32_t)id;
        } else
            return usage_error("unknown option");
        i++;
    }
    return EXIT_OK;
}

static int check_args(reassign_opts_t *o)
{
    if (o->action == NONE)
        return usage_error("give one of --generate, --execute, --verify, --cancel, --drain");
    if (o->action == GENERATE && (!o->topics_file || !o->broker_list || o->plan_file))
        return usage_error("--generate needs --topics-to-move-json-file and --broker-list");
    if ((o->action == EXECUTE || o->action == VERIFY || o->action == CANCEL) &&
        (!o->plan_file || o->topics_file || o->broker_list))
        return usage_error("--execute, --verify and --cancel need --reassignment-json-file (only)");
    if (o->action == DRAIN && (o->plan_file || o->topics_file || o->broker_list))
        return usage_error("--drain takes no files and no broker list");
    if (o->preserve_throttles && o->action != CANCEL)
        return usage_error("--preserve-throttles goes only with --cancel");
    if (o->throttle_arg && !(o->action == EXECUTE || (o->action == DRAIN && o->execute)))
        return usage_error("--throttle goes only with --execute (or --drain BROKER --execute)");
    if (o->throttle_arg && reassign_parse_rate(o->throttle_arg, &o->throttle) < 0)
        return usage_error("--throttle takes a rate in bytes/second: a positive integer");
    return EXIT_OK;
}

/* The whole file, NUL-terminated, bounded. NULL with a message printed. */
static char *read_file(const char *path, size_t *len)
{
    char *buf;
    if (fs_read_file(path, PLAN_FILE_MAX, &buf, len) == 0)
        return buf;
    if (errno == EFBIG)
        fprintf(stderr, "kipper reassign: %s is larger than %u bytes\n", path, PLAN_FILE_MAX);
    else
        fprintf(stderr, "kipper reassign: cannot read %s: %s\n", path, strerror(errno));
    return NULL;
}

static int load_plan(const char *path, coord_plan_t *plan)
{
    size_t len;
    char err[512], *text = read_file(path, &len);
    if (!text)
        return -1;
    int rc = coord_plan_parse(text, len, plan, err, sizeof(err));
    free(text);
    if (rc < 0)
        fprintf(stderr, "kipper reassign: %s: %s\n", path, err);
    return rc;
}

static void print_plan(const char *title, const coord_plan_t *plan)
{
    char *json = coord_plan_format(plan);
    printf("%s\n%s\n", title, json ? json : "(out of memory)");
    free(json);
}

static void print_moved(const char *what, const coord_plan_t *plan)
{
    printf("%s", what);
    for (int i = 0; i < plan->n; i++)
        printf("%s%s-%d", i ? "," : "", plan->moves[i].topic, (int)plan->moves[i].partition);
    printf("\n");
}

/* kafka-reassign-partitions.sh's lines around a throttle; the rates go on
 * the brokers of the plan and of the current assignment. */
static int set_throttle(zhandle_t *zh, const coord_plan_t *plan, const coord_plan_t *current, int64_t rate)
{
    char err[512];
    printf("Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
           "is removed.\n");
    if (reassign_throttle_set(zh, plan, current, rate, err, sizeof(err)) < 0) {
        fprintf(stderr, "kipper reassign: %s; no move was started\n", err);
        return EXIT_FAILED;
    }
    printf("The inter-broker throttle limit was set to %lld B/s\n", (long long)rate);
    return EXIT_OK;
}

/* Checks, prints the current assignment (for a rollback), sets the
 * throttle (rate 0: none), starts. */
static int execute(zhandle_t *zh, const coord_plan_t *plan, int64_t rate)
{
    char err[512];
    coord_plan_t current;
    if (coord_plan_check(zh, plan, err, sizeof(err)) < 0 || coord_plan_current(zh, plan, &current, err, sizeof(err)) < 0) {
        fprintf(stderr, "kipper reassign: %s; nothing was changed\n", err);
        return EXIT_FAILED;
    }
    print_plan("Current partition replica assignment\n", &current);
    printf("\nSave this to use as the --reassignment-json-file option during rollback\n");
    int rc = rate > 0 ? set_throttle(zh, plan, &current, rate) : EXIT_OK;
    coord_plan_free(&current);
    if (rc != EXIT_OK)
        return rc;
    if (coord_plan_execute(zh, plan, err, sizeof(err)) < 0) {
        fprintf(stderr, "kipper reassign: %s\n", err);
        return EXIT_FAILED;
    }
    print_moved("Successfully started partition reassignments for ", plan);
    return EXIT_OK;
}

/* Kafka's status line per move; moving[i] set for each in progress. The
 * count not done, or -1 (printed) when one cannot be read. */
static int print_status(zhandle_t *zh, const coord_plan_t *plan, unsigned char *moving, int *in_progress)
{
    char err[512];
    int not_done = 0;
    printf("Status of partition reassignment:\n");
    for (int i = 0; i < plan->n; i++) {
        const coord_move_t *m = &plan->moves[i];
        int st = coord_move_status(zh, m, err, sizeof(err));
        if (st < 0) {
            fprintf(stderr, "kipper reassign: %s\n", err);
            return -1;
        }
        printf("Reassignment of partition %s-%d is %s.\n", m->topic, (int)m->partition,
               st == COORD_MOVE_DONE ? "completed" : st == COORD_MOVE_IN_PROGRESS ? "still in progress"
                                                                                  : "not done (cancelled, or not started)");
        not_done += st != COORD_MOVE_DONE;
        moving[i] = st == COORD_MOVE_IN_PROGRESS;
        *in_progress += moving[i];
    }
    return not_done;
}

/* With no move of the plan in progress, the throttle has nothing left to
 * hold: it goes (as kafka-reassign-partitions.sh removes it then, a
 * cancelled move included), and is said to have gone when there was one. */
static int remove_throttle(zhandle_t *zh, const coord_plan_t *plan)
{
    char err[512];
    int rc = reassign_throttle_remove(zh, plan, err, sizeof(err));
    if (rc < 0)
        fprintf(stderr, "kipper reassign: %s\n", err);
    else if (rc > 0)
        printf("Throttle was removed.\n");
    return rc < 0 ? EXIT_FAILED : EXIT_OK;
}

static int verify(zhandle_t *zh, const coord_plan_t *plan)
{
    unsigned char *moving = xcalloc((size_t)plan->n + 1, 1);
    int in_progress = 0, not_done = print_status(zh, plan, moving, &in_progress), rc = EXIT_OK;
    if (not_done >= 0 && in_progress > 0)
        reassign_progress_print(zh, plan, moving);
    else if (not_done >= 0)
        rc = remove_throttle(zh, plan);
    free(moving);
    return not_done != 0 ? EXIT_FAILED : rc;
}

/* As kafka-reassign-partitions.sh --cancel: the throttle goes with the
 * moves unless asked to stay. */
static int cancel(zhandle_t *zh, const coord_plan_t *plan, int preserve_throttles)
{
    char err[512];
    if (coord_plan_cancel(zh, plan, err, sizeof(err)) < 0) {
        fprintf(stderr, "kipper reassign: %s\n", err);
        return EXIT_FAILED;
    }
    print_moved("Successfully cancelled partition reassignments for: ", plan);
    return preserve_throttles ? EXIT_OK : remove_throttle(zh, plan);
}

/* --broker-list "1,2,3": sorted, distinct. -1 on a bad list. */
static int parse_broker_list(const char *s, int32_t *ids, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        long id = strtol(s, &end, 10);
        if (end == s || id < 0 || id > INT32_MAX || n == max || (*end && *end != ','))
            return -1;
        for (int i = 0; i < n; i++)
            if (ids[i] == id)
                return -1;
        ids[n++] = (int32_t)id;
        s = *end ? end + 1 : end;
    }
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && ids[k - 1] > ids[k]; k--) {
            int32_t t = ids[k];
            ids[k] = ids[k - 1];
            ids[k - 1] = t;
        }
    return n;
}

/* The topics file's names (free with coord_admin_names_free). NULL with a
 * message printed. */
static char **load_topics(const char *path, int *n)
{
    size_t len;
    char err[512], **names = NULL, *text = read_file(path, &len);
    if (!text)
        return NULL;
    if (coord_topics_to_move_parse(text, len, &names, n, err, sizeof(err)) < 0)
        fprintf(stderr, "kipper reassign: %s: %s\n", path, err);
    free(text);
    return names;
}

static int generate(zhandle_t *zh, const reassign_opts_t *o)
{
    int32_t brokers[COORD_MAX_REPLICAS * 16];
    int nbrokers = parse_broker_list(o->broker_list, brokers, (int)(sizeof(brokers) / sizeof(brokers[0])));
    int ntopics = 0;
    if (nbrokers <= 0)
        return usage_error("--broker-list takes distinct broker ids separated by commas");
    char **topics = load_topics(o->topics_file, &ntopics), err[512];
    if (!topics)
        return EXIT_FAILED;
    coord_plan_t proposed = {0}, current = {0};
    int rc = coord_plan_generate(zh, topics, ntopics, brokers, nbrokers, &proposed, err, sizeof(err)) < 0 ||
                     coord_plan_check(zh, &proposed, err, sizeof(err)) < 0 ||
                     coord_plan_current(zh, &proposed, &current, err, sizeof(err)) < 0
                 ? EXIT_FAILED
                 : EXIT_OK;
    if (rc == EXIT_OK) {
        print_plan("Current partition replica assignment", &current);
        print_plan("\nProposed partition reassignment configuration", &proposed);
    } else {
        fprintf(stderr, "kipper reassign: %s\n", err);
    }
    coord_plan_free(&current);
    coord_plan_free(&proposed);
    coord_admin_names_free(topics, ntopics);
    return rc;
}

static int drain(zhandle_t *zh, const reassign_opts_t *o)
{
    char err[512];
    coord_plan_t proposed, current;
    if (coord_plan_drain(zh, o->drain, &proposed, err, sizeof(err)) < 0) {
        fprintf(stderr, "kipper reassign: %s\n", err);
        return EXIT_FAILED;
    }
    if (proposed.n == 0) {
        printf("Broker %d holds no replica: nothing to move\n", (int)o->drain);
        return EXIT_OK;
    }
    int rc = EXIT_OK;
    if (o->execute) {
        /* Printed first, so that it can be saved for --verify (and --cancel). */
        print_plan("Proposed partition reassignment configuration", &proposed);
        printf("\n");
        rc = execute(zh, &proposed, o->throttle);
    } else if (coord_plan_current(zh, &proposed, &current, err, sizeof(err)) == 0) {
        print_plan("Current partition replica assignment", &current);
        print_plan("\nProposed partition reassignment configuration", &proposed);
        coord_plan_free(&current);
    } else {
        fprintf(stderr, "kipper reassign: %s\n", err);
        rc = EXIT_FAILED;
    }
    coord_plan_free(&proposed);
    return rc;
}

int reassign_main(int argc, char **argv)
{
    reassign_opts_t o = {.zookeeper = "127.0.0.1:2181", .drain = -1};
    int rc = parse_args(argc, argv, &o);
    if (rc == EXIT_OK)
        rc = check_args(&o);
    if (rc != EXIT_OK)
        return rc;
    coord_plan_t plan = {0};
    if (o.plan_file && load_plan(o.plan_file, &plan) < 0)
        return EXIT_FAILED;
    char err[512];
    zhandle_t *zh = coord_admin_connect(o.zookeeper, CONNECT_TIMEOUT_MS, err, sizeof(err));
    if (!zh) {
        fprintf(stderr, "kipper reassign: %s\n", err);
        coord_plan_free(&plan);
        return EXIT_FAILED;
    }
    switch (o.action) {
    case GENERATE: rc = generate(zh, &o); break;
    case EXECUTE: rc = execute(zh, &plan, o.throttle); break;
    case VERIFY: rc = verify(zh, &plan); break;
    case CANCEL: rc = cancel(zh, &plan, o.preserve_throttles); break;
    case DRAIN: rc = drain(zh, &o); break;
    case NONE: break;
    }
    zookeeper_close(zh);
    coord_plan_free(&plan);
    return rc;
}
