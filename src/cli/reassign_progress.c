/* reassign_progress.c -- see reassign_progress.h.
 *
 * Why the CLI asks the brokers itself, when everything else `kipper
 * reassign` does goes through the coordinator alone: a move's progress is how
 * much of the leader's log an added replica holds, and only the brokers know
 * that; the coordinator holds where replicas are (docs/replication.md), never
 * their sizes. The ways to learn it:
 *   1. brokers publishing their replicas' sizes in the coordinator: writes
 *      every few seconds from every broker, for a tool run now and then, on
 *      the ensemble every broker depends on;
 *   2. one broker gathering the others' sizes: no Kafka request does that,
 *      so it would be a protocol of kipper's own;
 *   3. asking each broker concerned with DescribeLogDirs, the request Kafka's
 *      own tools read replica sizes with, which every kipper broker answers
 *      (src/broker/api/api_records.c). The CLI has all it needs: a broker's
 *      address is in its registration, /brokers/ids/[id] (coord_data.h).
 * The third adds no state and no protocol, so it is the one. The connections
 * are plain blocking ones, one request each, under a short deadline
 * (log_dirs_client.h): the tool runs once and asks a few brokers, a broker
 * that does not answer costs at most its timeout, and since progress is
 * informational such a broker is named on its partitions' lines and the rest
 * goes on (the exit code is --verify's, from the coordinator alone). */
#define _GNU_SOURCE
#include "reassign_progress.h"
#include "log_dirs_client.h"
#include "base/alloc.h"
#include "base/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t reassign_bytes_left(int64_t leader_size, int64_t replica_size)
{
    int64_t left = leader_size - (replica_size < 0 ? 0 : replica_size);
    return left < 0 ? 0 : left;
}

int64_t reassign_catch_up_rate(int64_t before, int64_t after, uint64_t elapsed_ms)
{
    if (elapsed_ms == 0)
        return -1;
    int64_t gained = (after < 0 ? 0 : after) - (before < 0 ? 0 : before);
    return gained <= 0 ? 0 : (int64_t)((double)gained * 1000.0 / (double)elapsed_ms);
}

/* ---- what is read ---- */

typedef struct {
    const coord_move_t *m;
    int32_t leader;                        /* -1: no leader now */
    int32_t adding[COORD_MAX_REPLICAS];
    int nadding;
    int over;                              /* the move ended meanwhile */
    char why[300];                         /* set: its state could not be read */
} moving_t;

typedef struct {
    int32_t broker;
    const char *topic;
    int32_t partition;
    int64_t size[2];                       /* each reading's; -1 no replica there */
} ask_t;

typedef struct {
    int32_t id;
    int first, n;                          /* its asks, asks[first..first+n) */
    int readings;                          /* taken: 0, 1 or 2 */
    uint64_t at_ms[2];                     /* when each answer came */
    char host[COORD_HOST_MAX];
    int port;
    char why[300];                         /* set: why a reading could not be taken */
} peer_t;

typedef struct {
    moving_t *moves;
    int nmoves;
    ask_t *asks;
    int nasks;
    peer_t *peers;
    int npeers;
} progress_t;

/* ---- the moves: leader and replicas being added, from the coordinator ---- */

/* The partition as the coordinator has it; d caches the last topic read. */
static const coord_partition_desc_t *describe(zhandle_t *zh, const coord_move_t *m, coord_topic_desc_t *d,
                                              char *why, size_t whylen)
{
    coord_admin_result_t res;
    if (strcmp(d->name, m->topic) != 0) {
        coord_admin_topic_desc_free(d);
        if (coord_admin_describe_topic(zh, m->topic, d, &res) < 0) {
            d->name[0] = 0;
            snprintf(why, whylen, "%s", res.message);
            return NULL;
        }
    }
    for (int i = 0; i < d->npartitions; i++)
        if (d->partitions[i].partition == m->partition)
            return &d->partitions[i];
    snprintf(why, whylen, "topic %s has no partition %d", m->topic, (int)m->partition);
    return NULL;
}

static void look_up(zhandle_t *zh, moving_t *mv, coord_topic_desc_t *d)
{
    int32_t target[COORD_MAX_REPLICAS];
    int ntarget = 0;
    const coord_partition_desc_t *p = describe(zh, mv->m, d, mv->why, sizeof(mv->why));
    if (!p)
        return;
    int rc = coord_move_read(zh, mv->m->topic, mv->m->partition, target, &ntarget, mv->why, sizeof(mv->why));
    mv->over = rc == 0;
    if (rc <= 0)
        return;
    coord_move_sets_t sets;
    coord_move_sets(p->replicas, p->nreplicas, target, ntarget, &sets);
    mv->leader = p->leader;
    mv->nadding = sets.nadding;
    memcpy(mv->adding, sets.adding, sizeof(*sets.adding) * (size_t)sets.nadding);
}

static void look_up_moves(zhandle_t *zh, const coord_plan_t *plan, const unsigned char *moving, progress_t *p)
{
    coord_topic_desc_t d = {.name = ""};
    p->moves = xcalloc((size_t)plan->n + 1, sizeof(*p->moves));
    for (int i = 0; i < plan->n; i++) {
        if (!moving[i])
            continue;
        moving_t *mv = &p->moves[p->nmoves++];
        mv->m = &plan->moves[i];
        mv->leader = -1;
        look_up(zh, mv, &d);
    }
    coord_admin_topic_desc_free(&d);
}

/* ---- the asks: (broker, partition) pairs, sorted, each once ---- */

static int ask_cmp(const void *a, const void *b)
{
    const ask_t *x = a, *y = b;
    if (x->broker != y->broker)
        return (x->broker > y->broker) - (x->broker < y->broker);
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

static void add_ask(progress_t *p, int32_t broker, const coord_move_t *m)
{
    p->asks[p->nasks++] = (ask_t){.broker = broker, .topic = m->topic, .partition = m->partition, .size = {-1, -1}};
}

/* How many (broker, partition) pairs the move asks about: its leader and
 * the replicas being added; none without a leader to compare with. */
static int asks_of(const moving_t *mv)
{
    return mv->over || mv->why[0] || mv->leader < 0 ? 0 : 1 + mv->nadding;
}

static void build_asks(progress_t *p)
{
    size_t n = 1;
    for (int i = 0; i < p->nmoves; i++)
        n += (size_t)asks_of(&p->moves[i]);
    p->asks = xcalloc(n, sizeof(*p->asks));
    for (int i = 0; i < p->nmoves; i++) {
        const moving_t *mv = &p->moves[i];
        if (!asks_of(mv))
            continue;
        add_ask(p, mv->leader, mv->m);
        for (int k = 0; k < mv->nadding; k++)
            add_ask(p, mv->adding[k], mv->m);
    }
    if (p->nasks == 0)
        return;
    qsort(p->asks, (size_t)p->nasks, sizeof(*p->asks), ask_cmp);
    int kept = 1;
    for (int i = 1; i < p->nasks; i++)
        if (ask_cmp(&p->asks[i], &p->asks[kept - 1]) != 0)
            p->asks[kept++] = p->asks[i];
    p->nasks = kept;
}

static const ask_t *find_ask(const progress_t *p, int32_t broker, const coord_move_t *m)
{
    ask_t key = {.broker = broker, .topic = m->topic, .partition = m->partition};
    return bsearch(&key, p->asks, (size_t)p->nasks, sizeof(*p->asks), ask_cmp);
}

/* ---- the brokers: where they are, and their readings ---- */

/* host and port from /brokers/ids/[id], or why. */
static void locate(zhandle_t *zh, peer_t *peer)
{
    char path[64], why[200], *data = xmalloc(COORD_DOC_MAX);
    int len = COORD_DOC_MAX;
    coord_broker_t reg;
    coord_path_broker(path, sizeof(path), peer->id);
    int rc = zoo_get(zh, path, 0, data, &len, NULL);
    if (rc == ZNONODE)
        snprintf(peer->why, sizeof(peer->why), "broker %d is not registered", (int)peer->id);
    else if (rc != ZOK)
        snprintf(peer->why, sizeof(peer->why), "cannot read %s: %s", path, zerror(rc));
    else if (coord_broker_parse(data, len < 0 ? 0 : (size_t)len, &reg, why, sizeof(why)) < 0)
        snprintf(peer->why, sizeof(peer->why), "%s: %s", path, why);
    else {
        snprintf(peer->host, sizeof(peer->host), "%s", reg.host);
        peer->port = reg.port;
    }
    free(data);
}

static void group_peers(zhandle_t *zh, progress_t *p)
{
    p->peers = xcalloc((size_t)p->nasks + 1, sizeof(*p->peers));
    for (int i = 0; i < p->nasks; i++) {
        if (i == 0 || p->asks[i].broker != p->asks[i - 1].broker) {
            peer_t *peer = &p->peers[p->npeers++];
            peer->id = p->asks[i].broker;
            peer->first = i;
            locate(zh, peer);
        }
        p->peers[p->npeers - 1].n++;
    }
}

static const peer_t *find_peer(const progress_t *p, int32_t id)
{
    for (int i = 0; i < p->npeers; i++)
        if (p->peers[i].id == id)
            return &p->peers[i];
    return NULL;
}

static void sleep_until(uint64_t at_ms)
{
    uint64_t now = clock_mono_ms();
    if (now >= at_ms)
        return;
    struct timespec ts = {.tv_sec = (time_t)((at_ms - now) / 1000), .tv_nsec = (long)((at_ms - now) % 1000) * 1000000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Reading k (0 or 1) of one broker. */
static void read_peer(progress_t *p, peer_t *peer, int k)
{
    log_dirs_replica_t *r = xcalloc((size_t)peer->n, sizeof(*r));
    for (int i = 0; i < peer->n; i++)
        r[i] = (log_dirs_replica_t){.topic = p->asks[peer->first + i].topic,
                                    .partition = p->asks[peer->first + i].partition};
    if (log_dirs_query(peer->host, peer->port, REASSIGN_PROGRESS_TIMEOUT_MS, r, peer->n, peer->why,
                       sizeof(peer->why)) == 0) {
        peer->at_ms[k] = clock_mono_ms();
        peer->readings = k + 1;
        for (int i = 0; i < peer->n; i++)
            p->asks[peer->first + i].size[k] = r[i].size;
    }
    free(r);
}

/* Two readings of every broker that can be found, each broker's second
 * REASSIGN_PROGRESS_GAP_MS after its first; a broker whose first failed is
 * not asked again. */
static void read_peers(progress_t *p)
{
    int answered = 0;
    for (int i = 0; i < p->npeers; i++)
        if (!p->peers[i].why[0]) {
            read_peer(p, &p->peers[i], 0);
            answered += p->peers[i].readings == 1;
        }
    for (int i = 0; answered && i < p->npeers; i++)
        if (p->peers[i].readings == 1) {
            sleep_until(p->peers[i].at_ms[0] + REASSIGN_PROGRESS_GAP_MS);
            read_peer(p, &p->peers[i], 1);
        }
}

/* ---- the lines ---- */

static int64_t latest(const ask_t *a, const peer_t *peer)
{
    return a->size[peer->readings - 1];
}

static void print_adding(const progress_t *p, const moving_t *mv, int k, int64_t leader_size)
{
    int32_t id = mv->adding[k];
    const peer_t *peer = find_peer(p, id);
    const ask_t *a = find_ask(p, id, mv->m);
    printf("%sreplica %d ", k ? "; " : "", (int)id);
    if (!peer || !a || peer->readings == 0) {
        printf("cannot be reached (%s)", peer ? peer->why : "not asked");
        return;
    }
    printf("has %lld bytes left", (long long)reassign_bytes_left(leader_size, latest(a, peer)));
    if (peer->readings == 2)
        printf(", catching up at %lld B/s",
               (long long)reassign_catch_up_rate(a->size[0], a->size[1], peer->at_ms[1] - peer->at_ms[0]));
    else
        printf(" (no second reading: %s)", peer->why);
}

/* The leader's latest size; -1 having printed why it is not known. */
static int64_t leader_size(const progress_t *p, const moving_t *mv)
{
    const peer_t *leader = mv->leader >= 0 ? find_peer(p, mv->leader) : NULL;
    const ask_t *own = leader ? find_ask(p, mv->leader, mv->m) : NULL;
    if (mv->why[0])
        printf("cannot tell how far (%s)", mv->why);
    else if (mv->leader < 0)
        printf("it has no leader now");
    else if (!own || leader->readings == 0)
        printf("its leader, broker %d, cannot be reached (%s)", (int)mv->leader, leader ? leader->why : "not asked");
    else if (latest(own, leader) < 0)
        printf("its leader, broker %d, reports no replica of it", (int)mv->leader);
    else
        return latest(own, leader);
    return -1;
}

static void print_move(const progress_t *p, const moving_t *mv)
{
    printf("Reassignment of partition %s-%d is still in progress: ", mv->m->topic, (int)mv->m->partition);
    int64_t size = leader_size(p, mv);
    if (size >= 0 && mv->nadding == 0)
        printf("no replica is being added; it completes once every replica is in sync");
    for (int k = 0; size >= 0 && k < mv->nadding; k++)
        print_adding(p, mv, k, size);
    printf("\n");
}

void reassign_progress_print(zhandle_t *zh, const coord_plan_t *plan, const unsigned char *moving)
{
    progress_t p = {0};
    fflush(stdout);   /* the status lines first, while the brokers are read */
    look_up_moves(zh, plan, moving, &p);
    build_asks(&p);
    group_peers(zh, &p);
    read_peers(&p);
    for (int i = 0; i < p.nmoves; i++)
        if (!p.moves[i].over)
            print_move(&p, &p.moves[i]);
    free(p.moves);
    free(p.asks);
    free(p.peers);
}
