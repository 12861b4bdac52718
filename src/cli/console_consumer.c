/* console_consumer.c -- `kipper console-consumer` (console.h): every
 * partition of a topic (or the one --partition names) assigned, or with
 * --group those the group gives this member (console_group.h: joined again
 * at each rebalance, positions committed);
 * each partition's start found with ListOffsets (earliest with
 * --from-beginning, else latest; or --offset), then Fetch from each leader
 * in turn, each record printed as kafka-console-consumer.sh's
 * DefaultMessageFormatter prints it. It stops after --max-messages records,
 * or when --timeout-ms passes with no record, and says on stderr how many
 * it processed, as kafka-console-consumer.sh does. A partition whose leader
 * moved has the cluster's metadata read again. Exit codes: 0 done, 1 the
 * topic, the partition or the brokers failed, 2 the command line. */
#define _GNU_SOURCE
#include "cli_args.h"
#include "console.h"
#include "console_group.h"
#include "group_admin.h"
#include "base/clock.h"
#include "broker/wire/kafka_errors.h"

#include <stdlib.h>
#include <string.h>

#define CLIENT_ID "kipper-console-consumer"
#define FETCH_VERSION 4            /* v2 batches, IsolationLevel; every broker since 0.11 */
#define FETCH_MAX_BYTES (8 << 20)  /* well under kafka_client.h's answer bound */
#define PARTITION_MAX_BYTES (1 << 20)
#define FETCH_WAIT_MS 500

enum { EXIT_OK = 0, EXIT_FAILED = 1 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kipper console-consumer --bootstrap-server HOST:PORT[,...] --topic T [--from-beginning]\n"
            "           [--group G | --partition N [--offset earliest|latest|N]] [--max-messages N] [--timeout-ms N]\n"
            "           [--isolation-level read_uncommitted|read_committed] [--skip-message-on-error]\n"
            "           [--formatter kafka.tools.DefaultMessageFormatter] [--property NAME=VALUE ...]\n"
            "           [--consumer-property group.id=G (as --group; other client settings are ignored)]\n"
            "\n"
            "Prints the topic's records, one a line (kafka-console-consumer.sh); from the end unless\n"
            "--from-beginning. With --group G, as a member of consumer group G: the partitions it is given,\n"
            "from the group's committed offsets, its positions committed every 5 s and at the end.\n"
            "The --property names of DefaultMessageFormatter (default in brackets):\n"
            "  print.timestamp [false]  CreateTime:MS or LogAppendTime:MS first\n"
            "  print.partition [false]  Partition:N      print.offset [false]  Offset:N\n"
            "  print.headers [false]    K:V<headers.separator>K:V, or NO_HEADERS\n"
            "  print.key [false]        print.value [true]\n"
            "  key.separator [tab]      between the fields printed\n"
            "  line.separator [newline] after the last field\n"
            "  headers.separator [,]    null.literal [null]  printed for a null key, value or header value\n"
            "Exit status: 0 done, 1 failed, 2 a wrong command line.\n");
}

/* ---- consuming ---- */

typedef struct {
    const cc_opts_t *o;
    kafka_client_t boot;
    ga_cluster_t cluster;
    ga_partitions_t parts;   /* the partitions consumed; leader from the cluster */
    console_conns_t conns;
    int64_t *next;           /* next[i]: the offset to fetch of parts.v[i] */
    int64_t count;
    int printing;            /* the index in parts of the records being read */
    uint64_t last_record;    /* clock_mono_ms */
    console_group_t *group;  /* with --group, else NULL */
} consumer_t;

enum { REJOIN = 3 };   /* consume's: the group rebalances */

static int print_one(void *ctx, const cr_record_t *r)
{
    consumer_t *c = ctx;
    cc_print_record(stdout, c->o, c->parts.v[c->printing].partition, r);
    c->next[c->printing] = r->offset + 1;   /* a stop mid-batch commits only what was printed */
    c->count++;
    return c->o->max_messages >= 0 && c->count >= c->o->max_messages;
}

/* Where parts.v[which[0..n)] start: the earliest or the latest offset. */
static int find_starts(consumer_t *c, const int *which, int n, int earliest)
{
    int64_t ts = earliest ? GA_EARLIEST : GA_LATEST;
    if (ga_list_offsets_leaders(&c->cluster, &c->parts, which, n, ts, CONSOLE_TIMEOUT_MS, CLIENT_ID) < 0)
        return -1;
    for (int k = 0; k < n; k++) {
        const ga_partition_t *p = &c->parts.v[which[k]];
        int64_t at = earliest ? p->earliest : p->latest;
        if (at < 0) {
            fprintf(stderr, "Error: cannot find the %s offset of %s-%d: %s\n", earliest ? "earliest" : "latest",
                    p->topic, (int)p->partition, ga_error_text(p->error ? p->error : KERR_LEADER_NOT_AVAILABLE));
            return -1;
        }
        c->next[which[k]] = at;
    }
    return 0;
}

static int start_earliest(const cc_opts_t *o)
{
    return o->from == CC_FROM_EARLIEST || (o->from == CC_FROM_DEFAULT && o->from_beginning);
}

/* A Fetch of every partition parts.v[which[0..n)] at its next offset. */
static kafka_value_t *fetch_request(kafka_arena_t *a, const consumer_t *c, const int *which, int n, int wait_ms)
{
    kafka_value_t *body = KV_NEW(a, FetchRequest);
    kafka_value_t *topics = body ? KV_SET_ARRAY(a, body, FetchRequest, Topics, 1) : NULL;
    kafka_value_t *parts = topics ? KV_SET_ARRAY(a, kv_at(topics, 0), FetchTopic, Partitions, (uint32_t)n) : NULL;
    if (!parts)
        return NULL;
    KV_SET_INT(body, FetchRequest, ReplicaId, -1);
    KV_SET_INT(body, FetchRequest, MaxWaitMs, wait_ms);
    KV_SET_INT(body, FetchRequest, MinBytes, 1);
    KV_SET_INT(body, FetchRequest, MaxBytes, FETCH_MAX_BYTES);
    KV_SET_INT(body, FetchRequest, IsolationLevel, c->o->isolation_level);
    KV_SET_STR(a, kv_at(topics, 0), FetchTopic, Topic, c->o->topic);
    for (int k = 0; k < n; k++) {
        kafka_value_t *p = kv_at(parts, (uint32_t)k);
        KV_SET_INT(p, FetchPartition, Partition, c->parts.v[which[k]].partition);
        KV_SET_INT(p, FetchPartition, FetchOffset, c->next[which[k]]);
        KV_SET_INT(p, FetchPartition, PartitionMaxBytes, PARTITION_MAX_BYTES);
    }
    return body;
}

/* One partition's part of a Fetch answer: its records printed. 1 when
 * --max-messages is reached, 0, 2 when the metadata must be read again,
 * -1 on an error. */
static int take_partition(consumer_t *c, const kafka_value_t *pd)
{
    ga_partition_t *p = ga_partitions_find(&c->parts, c->o->topic, (int32_t)KV_INT(pd, FetchPartitionData,
                                                                                   PartitionIndex));
    if (!p)
        return 0;
    int i = (int)(p - c->parts.v);
    int16_t error = (int16_t)KV_INT(pd, FetchPartitionData, ErrorCode);
    if (error == KERR_OFFSET_OUT_OF_RANGE)
        return find_starts(c, &i, 1, c->o->from_beginning) < 0 ? -1 : 0;   /* auto.offset.reset, --offset too */
    if (error)
        return 2;
    const kafka_value_t *rec = KV_GET(pd, FetchPartitionData, Records);
    char err[300];
    c->printing = i;
    int64_t before = c->count;
    int rc = rec->is_null ? 0 : cr_batches_read(rec->u.b, rec->n, c->next[i], print_one, c, &c->next[i], err,
                                                sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "Error: %s-%d: %s\n", p->topic, (int)p->partition, err);
        return -1;
    }
    if (c->count > before)
        c->last_record = clock_mono_ms();
    return rc;
}

/* One Fetch from cluster broker bi of its partitions parts.v[which[0..n)].
 * As take_partition. */
static int fetch_once(consumer_t *c, int bi, const int *which, int n, int wait_ms)
{
    kafka_client_t *k = console_conn(&c->conns, &c->cluster, bi, CLIENT_ID);
    const kafka_value_t *ans;
    if (!k)
        return 2;
    if (kafka_client_call(k, KAFKA_API_FETCH, FETCH_VERSION, fetch_request(&k->request, c, which, n, wait_ms),
                          &ans) < 0) {
        fprintf(stderr, "Warning: cannot fetch from broker %d: %s\n", (int)c->cluster.brokers[bi].id, k->err);
        kafka_client_close(k);
        return 2;
    }
    int rc = 0;
    const kafka_value_t *topics = KV_GET(ans, FetchResponse, Responses);
    for (uint32_t t = 0; t < topics->n && (rc == 0 || rc == 2); t++) {
        const kafka_value_t *parts = KV_GET(kv_at(topics, t), FetchableTopicResponse, Partitions);
        for (uint32_t i = 0; i < parts->n && (rc == 0 || rc == 2); i++) {
            int one = take_partition(c, kv_at(parts, i));
            rc = one == 0 ? rc : one;
        }
    }
    return rc;
}

/* The leaders of the partitions consumed, from the metadata read again. */
static int refresh(consumer_t *c)
{
    console_conns_close(&c->conns);
    console_sleep_ms(100);
    if (console_metadata(&c->boot, c->o->topic, c->o->partition, &c->cluster) < 0)
        return -1;
    console_update_leaders(&c->parts, &c->cluster);
    return 0;
}

/* How long the next Fetch may wait: until --timeout-ms would pass, and
 * short when several leaders take turns. */
static int wait_ms(const consumer_t *c, int leaders)
{
    int64_t w = leaders > 1 ? FETCH_WAIT_MS / 5 : FETCH_WAIT_MS;
    if (c->o->timeout_ms >= 0) {
        int64_t left = (int64_t)(c->last_record + (uint64_t)c->o->timeout_ms) - (int64_t)clock_mono_ms();
        w = left < w ? (left > 0 ? left : 0) : w;
    }
    return (int)w;
}

/* One round: a Fetch from each leader. 1 done (--max-messages), 0, 2 the
 * metadata is stale, -1 failed. */
static int fetch_round(consumer_t *c, int *which)
{
    int leaders = 0, stale = 0;
    int *at = malloc(sizeof(int) * (size_t)c->parts.n);
    for (int i = 0; at && i < c->parts.n; i++) {
        at[i] = console_leader_index(&c->cluster, c->parts.v[i].leader);
        stale |= at[i] < 0;
    }
    for (int b = 0; at && b < c->cluster.nbrokers; b++)
        for (int i = 0; i < c->parts.n; i++)
            if (at[i] == b) {
                leaders++;
                break;
            }
    int rc = at ? 0 : -1;
    for (int b = 0; rc == 0 && b < c->cluster.nbrokers; b++) {
        int n = 0;
        for (int i = 0; i < c->parts.n; i++)
            if (at[i] == b)
                which[n++] = i;
        int one = n ? fetch_once(c, b, which, n, wait_ms(c, leaders)) : 0;
        rc = one == 2 ? 0 : one;
        stale |= one == 2;
    }
    free(at);
    return rc ? rc : stale ? 2 : 0;
}

/* With a group: the positions committed when due, a heartbeat when due.
 * 1 when the group rebalances. */
static int group_tick(consumer_t *c)
{
    cg_commit(c->group, c->next, 0);
    return cg_heartbeat(c->group) != 0;
}

/* Until --max-messages, --timeout-ms, or (REJOIN) the group rebalances. */
static int consume(consumer_t *c)
{
    int *which = malloc(sizeof(int) * (size_t)(c->parts.n ? c->parts.n : 1));
    int rc = which ? 0 : -1;
    while (rc >= 0) {
        if (c->parts.n)
            rc = fetch_round(c, which);
        else
            console_sleep_ms(FETCH_WAIT_MS);   /* a member with no partition: heartbeats only */
        fflush(stdout);
        if (rc == 1)
            break;
        if (c->o->timeout_ms >= 0 && clock_mono_ms() >= c->last_record + (uint64_t)c->o->timeout_ms)
            break;
        if (rc == 2)
            rc = refresh(c);
        if (rc >= 0 && c->group && group_tick(c)) {
            rc = REJOIN;
            break;
        }
    }
    free(which);
    return rc < 0 ? -1 : rc == REJOIN ? REJOIN : 0;
}

/* c->next of parts.v[which[0..n)] at their start (--offset, or earliest or
 * latest). */
static int start_at(consumer_t *c, int *which, int n, int earliest)
{
    for (int k = 0; c->o->from == CC_FROM_OFFSET && k < n; k++)
        c->next[which[k]] = c->o->offset;
    return c->o->from == CC_FROM_OFFSET || n == 0 ? 0 : find_starts(c, which, n, earliest);
}

static int run(consumer_t *c)
{
    if (console_metadata(&c->boot, c->o->topic, c->o->partition, &c->cluster) < 0 ||
        console_partitions(&c->cluster, c->o->topic, c->o->partition, &c->parts) < 0)
        return -1;
    c->next = calloc((size_t)c->parts.n, sizeof(*c->next));
    int *all = malloc(sizeof(int) * (size_t)c->parts.n);
    for (int i = 0; all && i < c->parts.n; i++)
        all[i] = i;
    int rc = !all || !c->next ? -1 : start_at(c, all, c->parts.n, start_earliest(c->o));
    free(all);
    c->last_record = clock_mono_ms();
    return rc < 0 ? -1 : consume(c);
}

/* The group's assignment as c->parts (g->assigned sorted alike), each at
 * the group's committed offset, else where auto.offset.reset says. */
static int take_assignment(consumer_t *c, console_group_t *g)
{
    ga_partitions_free(&c->parts);
    for (int i = 0; i < g->nassigned; i++) {
        ga_partition_t *p = ga_partitions_get(&c->parts, c->o->topic, g->assigned[i]);
        if (!p)
            return -1;
    }
    console_update_leaders(&c->parts, &c->cluster);
    for (int i = 0; i < c->parts.n; i++)
        g->assigned[i] = c->parts.v[i].partition;
    free(c->next);
    c->next = calloc((size_t)(c->parts.n ? c->parts.n : 1), sizeof(*c->next));
    int *unset = malloc(sizeof(int) * (size_t)(c->parts.n ? c->parts.n : 1)), n = 0;
    int rc = c->next && unset ? cg_committed(g, c->next) : -1;
    for (int i = 0; rc == 0 && i < c->parts.n; i++)
        if (c->next[i] < 0)
            unset[n++] = i;
    rc = rc < 0 ? -1 : start_at(c, unset, n, c->o->from_beginning);
    free(unset);
    return rc;
}

/* --group: members of the group, joining again at each rebalance. */
static int run_group(consumer_t *c)
{
    console_group_t g = {.group = c->o->group, .topic = c->o->topic, .client_id = CLIENT_ID, .coord.fd = -1};
    int rc = console_metadata(&c->boot, c->o->topic, -1, &c->cluster);
    int32_t partitions = 0;
    for (int i = 0; rc == 0 && i < c->cluster.parts.n; i++)
        partitions += strcmp(c->cluster.parts.v[i].topic, c->o->topic) == 0;
    c->group = &g;
    c->last_record = clock_mono_ms();
    while (rc >= 0) {
        rc = cg_join(&g, &c->boot, partitions) < 0 || take_assignment(c, &g) < 0 ? -1 : consume(c);
        if (rc != REJOIN)
            break;
        cg_commit(&g, c->next, 1);   /* what was read stays read, as before a Java consumer's rebalance */
    }
    if (rc >= 0)
        cg_commit(&g, c->next, 1);
    cg_leave(&g);
    c->group = NULL;
    return rc < 0 ? -1 : 0;
}

int console_consumer_main(int argc, char **argv)
{
    cc_opts_t o;
    char err[700];
    int rc = cli_usage_exit(cc_parse_args(argc, argv, &o, err, sizeof(err)), "console-consumer", err, usage);
    if (rc >= 0)
        return rc;
    consumer_t c = {.o = &o};
    if (kafka_client_open_any(&c.boot, o.bootstrap, CONSOLE_TIMEOUT_MS, CLIENT_ID, err, sizeof(err)) < 0) {
        fprintf(stderr, "Error: %s\n", err);
        return EXIT_FAILED;
    }
    rc = o.group ? run_group(&c) : run(&c);
    fflush(stdout);
    if (rc == 0)
        fprintf(stderr, "Processed a total of %lld messages\n", (long long)c.count);
    console_conns_close(&c.conns);
    kafka_client_close(&c.boot);
    ga_cluster_free(&c.cluster);
    ga_partitions_free(&c.parts);
    free(c.next);
    return rc < 0 ? EXIT_FAILED : EXIT_OK;
}
