/* fetcher.c -- see fetcher.h. */
#define _GNU_SOURCE
#include "fetcher.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/endian.h"
#include "base/alloc.h"
#include "base/logging.h"
#include "base/net.h"
#include "broker/core/cluster.h"
#include "broker/core/cluster_sync.h"
#include "broker/repl/repl.h"
#include "broker/wire/kafka_messages.h"
#include "broker/repl/truncation.h"

#define FETCH_VERSION 11              /* ReplicaId, CurrentLeaderEpoch, RackId; not flexible */
#define EPOCH_VERSION 3               /* ReplicaId and CurrentLeaderEpoch */
#define RECONNECT_MS 500
#define UNKNOWN_EPOCH_RETRY_MS 100    /* the leader has not taken over yet */
#define LEADERSHIP_RETRY_MS 100       /* who leads is being settled: see part_error */
#define READ_CHUNK 65536

typedef enum {
    PHASE_TRUNCATE,   /* ask the leader where our epoch ends */
    PHASE_ASKING,     /* asked, no answer yet */
    PHASE_FETCHING,
    PHASE_WAITING,    /* backing off after an error, until wait_until */
} fetch_phase_t;

typedef struct fetch_link fetch_link_t;

struct fetch_part {
    replica_t *r;
    fetch_link_t *link;
    int32_t epoch;            /* the leader epoch we follow */
    fetch_phase_t phase;
    fetch_phase_t resume;     /* PHASE_WAITING: the phase to go back to */
    uint64_t wait_until;
    int32_t ask_epoch;        /* PHASE_TRUNCATE/ASKING: the epoch asked about */
    int in_request;           /* part of the request in flight */
    int healthy;              /* the last answer for it had no error */
    fetch_part_t *next;
};

struct fetch_link {
    fetcher_t *f;
    int32_t leader;
    int fd;
    int connected;
    buf_t in, out;
    int in_flight;            /* a request is out (one at a time) */
    int16_t in_flight_api;
    int32_t correlation;
    uint64_t retry_at;        /* reconnect not before this */
    uint64_t stall_at;        /* connecting or awaiting an answer: give up on the
                               * connection if nothing moves by then (0: idle) */
    fetch_part_t *parts;
    int nparts;
    fetch_link_t *next;
};

struct fetcher {
    broker_t *b;
    fetch_link_t *links;
    loop_timer_t *timer;
    uint64_t timer_at;
};

static void link_kick(fetch_link_t *l);
static int link_stalled(fetch_link_t *l, uint64_t now);
static void on_link_io(loop_t *loop, int fd, unsigned events, void *arg);

static const char *part_name(const fetch_part_t *fp, char *buf, size_t n)
{
    snprintf(buf, n, "%s-%d", fp->r->part->topic->name, (int)fp->r->part->id);
    return buf;
}

/* ---- timers: one for the whole fetcher, at the earliest thing due ---- */

static void on_timer(loop_t *loop, void *arg);

static void arm_timer(fetcher_t *f, uint64_t at)
{
    broker_t *b = f->b;
    if (f->timer && f->timer_at <= at)
        return;
    if (f->timer)
        loop_timer_cancel(b->loop, f->timer);
    uint64_t now = loop_now_ms(b->loop);
    f->timer_at = at;
    f->timer = loop_timer_add(b->loop, at > now ? at - now : 0, on_timer, f);
}

/* Parts whose wait is over resume; the timer is armed again for the next
 * one still waiting (each part's wait is its own). */
static void on_timer(loop_t *loop, void *arg)
{
    fetcher_t *f = arg;
    uint64_t now = loop_now_ms(loop), next = UINT64_MAX;
    f->timer = NULL;
    for (fetch_link_t *l = f->links; l; l = l->next) {
        if (link_stalled(l, now))
            continue;   /* link_stalled kicked it */
        if (l->stall_at && l->stall_at < next)
            next = l->stall_at;
        for (fetch_part_t *fp = l->parts; fp; fp = fp->next) {
            if (fp->phase != PHASE_WAITING)
                continue;
            if (fp->wait_until <= now)
                fp->phase = fp->resume;
            else if (fp->wait_until < next)
                next = fp->wait_until;
        }
        link_kick(l);
    }
    if (next != UINT64_MAX)
        arm_timer(f, next);
}

static void part_wait(fetch_part_t *fp, uint64_t ms, fetch_phase_t resume)
{
    fetcher_t *f = fp->link->f;
    fp->phase = PHASE_WAITING;
    fp->resume = resume;
    fp->wait_until = loop_now_ms(f->b->loop) + ms;
    arm_timer(f, fp->wait_until);
}

/* ---- links ---- */

static fetch_link_t *link_for(fetcher_t *f, int32_t leader)
{
    for (fetch_link_t *l = f->links; l; l = l->next)
        if (l->leader == leader)
            return l;
    fetch_link_t *l = xcalloc(1, sizeof(*l));
    l->f = f;
    l->leader = leader;
    l->fd = -1;
    buf_init(&l->in);
    buf_init(&l->out);
    l->next = f->links;
    f->links = l;
    return l;
}

/* Drops the connection; what was asked is asked again on the next one. */
static void link_disconnect(fetch_link_t *l, const char *why)
{
    broker_t *b = l->f->b;
    if (l->fd >= 0) {
        if (why)
            log_info("replica fetcher: connection to leader %d closed: %s", (int)l->leader, why);
        loop_unwatch(b->loop, l->fd);
        close(l->fd);
    }
    l->fd = -1;
    l->connected = 0;
    l->in_flight = 0;
    l->stall_at = 0;
    buf_clear(&l->in);
    buf_clear(&l->out);
    for (fetch_part_t *fp = l->parts; fp; fp = fp->next) {
        fp->in_request = 0;
        if (fp->phase == PHASE_ASKING)
            fp->phase = PHASE_TRUNCATE;
    }
}

/* The link is waiting on the network (a connect, or an answer): nothing
 * may be expected before stall_at, replica.socket.timeout.ms on. */
static void link_expect(fetch_link_t *l)
{
    fetcher_t *f = l->f;
    l->stall_at = loop_now_ms(f->b->loop) + (uint64_t)f->b->cfg.replica_socket_timeout_ms;
    arm_timer(f, l->stall_at);
}

/* A connection whose peer went silent -- a partition that blackholes its
 * packets, a leader host that froze -- never fails by itself: TCP retries
 * with a back-off that reaches minutes, and keeps retrying after the path
 * heals. Kafka's follower gives up on a request after
 * replica.socket.timeout.ms; kipper gives up when nothing moved for that
 * long (bytes in or out, or the connect), so a large answer on a slow or
 * throttled link is not cut, and reconnects at once. 1 if it gave up. */
static int link_stalled(fetch_link_t *l, uint64_t now)
{
    if (l->fd < 0 || !l->stall_at || now < l->stall_at)
        return 0;
    link_disconnect(l, l->connected ? "no answer within replica.socket.timeout.ms"
                                    : "not connected within replica.socket.timeout.ms");
    l->retry_at = now;
    link_kick(l);
    return 1;
}

static void link_free(fetch_link_t *l)
{
    fetcher_t *f = l->f;
    link_disconnect(l, NULL);
    for (fetch_link_t **pp = &f->links; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    buf_free(&l->in);
    buf_free(&l->out);
    free(l);
}

/* Non-blocking connect to the leader's advertised address: 0 under way,
 * -1 failed, LINK_RESOLVING while its host name is looked up off the loop
 * (base/resolver.h). */
#define LINK_RESOLVING 1
static int link_connect(fetch_link_t *l)
{
    broker_t *b = l->f->b;
    const broker_node_t *node = cluster_broker(b, l->leader);
    if (!node)
        return -1;   /* not registered: its registration brings us back (fetcher_broker_changed) */
    char err[512];
    int connected = 0;
    int fd = resolver_connect(b->resolver, node->ep.host, node->ep.port, &connected, err, sizeof(err));
    if (fd == RESOLVER_CONNECT_PENDING)
        return LINK_RESOLVING;
    if (fd < 0) {
        log_warn("replica fetcher: cannot connect to leader %d: %s", (int)l->leader, err);
        return -1;
    }
    l->fd = fd;
    if (loop_watch(b->loop, fd, LOOP_WRITABLE, on_link_io, l) < 0) {
        close(fd);
        l->fd = -1;
        return -1;
    }
    link_expect(l);
    return 0;
}

/* ---- requests ---- */

static int send_request(fetch_link_t *l, int16_t api_key, int16_t version, const kafka_value_t *body)
{
    broker_t *b = l->f->b;
    const kafka_api_t *api = kafka_api_find(api_key);
    char client_id[32];
    snprintf(client_id, sizeof(client_id), "broker-%d-fetcher", (int)b->cfg.broker_id);
    if (kafka_request_encode(&l->out, api, version, ++l->correlation, client_id, body) != KAFKA_OK) {
        log_error("replica fetcher: cannot encode a %s request", api->name);
        return -1;
    }
    l->in_flight = 1;
    l->in_flight_api = api_key;
    link_expect(l);
    return 0;
}

/* Parts of the link in a phase, sorted by topic so a request names each
 * topic once. */
static int phase_parts(fetch_link_t *l, fetch_phase_t phase, fetch_part_t **out)
{
    int n = 0;
    for (fetch_part_t *fp = l->parts; fp; fp = fp->next)
        if (fp->phase == phase)
            out[n++] = fp;
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && strcmp(out[k - 1]->r->part->topic->name, out[k]->r->part->topic->name) > 0; k--) {
            fetch_part_t *t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

/* The topics/partitions shape of a request or an answer. */
typedef struct {
    kv_ref_t topics, topic_name, partitions;
} tree_t;

static const tree_t epoch_request = {KV_REF(OffsetForLeaderEpochRequest, Topics), KV_REF(OffsetForLeaderTopic, Topic),
                                     KV_REF(OffsetForLeaderTopic, Partitions)};
static const tree_t fetch_request = {KV_REF(FetchRequest, Topics), KV_REF(FetchTopic, Topic),
                                     KV_REF(FetchTopic, Partitions)};
static const tree_t epoch_answer = {KV_REF(OffsetForLeaderEpochResponse, Topics),
                                    KV_REF(OffsetForLeaderTopicResult, Topic),
                                    KV_REF(OffsetForLeaderTopicResult, Partitions)};
static const tree_t fetch_answer = {KV_REF(FetchResponse, Responses), KV_REF(FetchableTopicResponse, Topic),
                                    KV_REF(FetchableTopicResponse, Partitions)};

/* Fills the request's topic array from parts (sorted by topic); fill sets
 * one partition entry. -1 out of arena. */
static int fill_topics(kafka_arena_t *a, kafka_value_t *body, const tree_t *tree, fetch_part_t **parts, int n,
                       void (*fill)(fetch_link_t *, fetch_part_t *, kafka_value_t *), fetch_link_t *l)
{
    int ntopics = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || parts[i]->r->part->topic != parts[i - 1]->r->part->topic)
            ntopics++;
    kafka_value_t *topics = KV_REF_SET_ARRAY(a, body, tree->topics, (uint32_t)ntopics);
    if (!topics)
        return -1;
    for (int i = 0, t = -1; i < n;) {
        int k = i;
        while (k < n && parts[k]->r->part->topic == parts[i]->r->part->topic)
            k++;
        kafka_value_t *tv = kv_at(topics, (uint32_t)++t);
        KV_REF_SET_STR(a, tv, tree->topic_name, parts[i]->r->part->topic->name);
        kafka_value_t *pv = KV_REF_SET_ARRAY(a, tv, tree->partitions, (uint32_t)(k - i));
        if (!pv)
            return -1;
        for (int j = i; j < k; j++) {
            parts[j]->in_request = 1;
            fill(l, parts[j], kv_at(pv, (uint32_t)(j - i)));
        }
        i = k;
    }
    return 0;
}

static void fill_epoch_part(fetch_link_t *l, fetch_part_t *fp, kafka_value_t *v)
{
    (void)l;
    KV_SET_INT(v, OffsetForLeaderPartition, Partition, fp->r->part->id);
    KV_SET_INT(v, OffsetForLeaderPartition, CurrentLeaderEpoch, fp->epoch);
    KV_SET_INT(v, OffsetForLeaderPartition, LeaderEpoch, fp->ask_epoch);
    fp->phase = PHASE_ASKING;
}

static void fill_fetch_part(fetch_link_t *l, fetch_part_t *fp, kafka_value_t *v)
{
    const broker_config_t *cfg = &l->f->b->cfg;
    KV_SET_INT(v, FetchPartition, Partition, fp->r->part->id);
    KV_SET_INT(v, FetchPartition, CurrentLeaderEpoch, fp->epoch);
    KV_SET_INT(v, FetchPartition, FetchOffset, partition_log_end_offset(fp->r->log));
    KV_SET_INT(v, FetchPartition, LogStartOffset, partition_log_start_offset(fp->r->log));
    KV_SET_INT(v, FetchPartition, PartitionMaxBytes, cfg->replica_fetch_max_bytes);
}

/* A move's catch-up traffic is not asked for while the follower's throttle
 * is spent (repl/throttle.c): those partitions are left out of this fetch,
 * and the timer brings the link back when the throttle opens, should the
 * fetch be left empty. The parts kept, in order. */
static int without_throttled(fetch_link_t *l, fetch_part_t **parts, int n)
{
    broker_t *b = l->f->b;
    if (repl_throttle_open(b, REPL_FOLLOWER_SIDE))
        return n;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (!repl_move_traffic(b, parts[i]->r->part, b->cfg.broker_id, REPL_FOLLOWER_SIDE))
            parts[kept++] = parts[i];
    if (kept < n)
        arm_timer(l->f, repl_throttle_open_at(b, REPL_FOLLOWER_SIDE));
    return kept;
}

/* Truncation first: a partition must know where its log agrees with the
 * leader's before it fetches. */
static int send_next(fetch_link_t *l)
{
    broker_t *b = l->f->b;
    fetch_part_t **parts = xmalloc(sizeof(*parts) * (size_t)(l->nparts ? l->nparts : 1));
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    int rc = 0, n = phase_parts(l, PHASE_TRUNCATE, parts);
    if (n > 0) {
        kafka_value_t *body = KV_NEW(&a, OffsetForLeaderEpochRequest);
        KV_SET_INT(body, OffsetForLeaderEpochRequest, ReplicaId, b->cfg.broker_id);
        rc = fill_topics(&a, body, &epoch_request, parts, n, fill_epoch_part, l);
        if (rc == 0)
            rc = send_request(l, KAFKA_API_OFFSET_FOR_LEADER_EPOCH, EPOCH_VERSION, body);
    } else if ((n = without_throttled(l, parts, phase_parts(l, PHASE_FETCHING, parts))) > 0) {
        kafka_value_t *body = KV_NEW(&a, FetchRequest);
        KV_SET_INT(body, FetchRequest, ReplicaId, b->cfg.broker_id);
        KV_SET_INT(body, FetchRequest, MaxWaitMs, b->cfg.replica_fetch_wait_max_ms);
        KV_SET_INT(body, FetchRequest, MinBytes, b->cfg.replica_fetch_min_bytes);
        KV_SET_INT(body, FetchRequest, MaxBytes, b->cfg.replica_fetch_response_max_bytes);
        KV_SET_INT(body, FetchRequest, SessionId, 0);
        KV_SET_INT(body, FetchRequest, SessionEpoch, -1);   /* a full fetch, no session (KIP-227) */
        rc = fill_topics(&a, body, &fetch_request, parts, n, fill_fetch_part, l);
        if (rc == 0)
            rc = send_request(l, KAFKA_API_FETCH, FETCH_VERSION, body);
    }
    kafka_arena_free(&a);
    free(parts);
    return rc;
}

static void link_rewatch(fetch_link_t *l)
{
    unsigned ev = LOOP_READABLE | (buf_unread(&l->out) ? LOOP_WRITABLE : 0);
    if (loop_watch(l->f->b->loop, l->fd, ev, on_link_io, l) < 0)
        link_disconnect(l, "cannot watch the socket");
}

static void link_kick(fetch_link_t *l)
{
    fetcher_t *f = l->f;
    uint64_t now = loop_now_ms(f->b->loop);
    if (!l->parts) {
        link_disconnect(l, NULL);   /* freed by whoever took its last part */
        return;
    }
    if (l->fd < 0) {
        if (now < l->retry_at) {
            arm_timer(f, l->retry_at);
            return;
        }
        int rc = link_connect(l);
        if (rc != 0) {
            l->retry_at = now + (rc == LINK_RESOLVING ? RESOLVER_POLL_MS : RECONNECT_MS);
            arm_timer(f, l->retry_at);
        }
        return;
    }
    if (!l->connected || l->in_flight)
        return;
    if (send_next(l) < 0) {
        link_disconnect(l, "cannot build a request");
        l->retry_at = now + RECONNECT_MS;
        arm_timer(f, l->retry_at);
        return;
    }
    if (l->in_flight && net_write_buffer(l->fd, &l->out) < 0) {
        link_disconnect(l, strerror(errno));
        l->retry_at = now + RECONNECT_MS;
        arm_timer(f, l->retry_at);
        return;
    }
    link_rewatch(l);
}

/* ---- answers ---- */

/* The part of this link the answer's (topic, partition) is for, if it was
 * in the request (a part that left or restarted meanwhile is not). */
static fetch_part_t *answered_part(fetch_link_t *l, const char *topic, int32_t partition)
{
    partition_t *p = topic ? cluster_partition(l->f->b, topic, partition) : NULL;
    fetch_part_t *fp = p && p->replica ? p->replica->fetch : NULL;
    return fp && fp->link == l && fp->in_request ? fp : NULL;
}

/* Errors that say our view of the partition may be stale: read the
 * coordinator again and retry after the backoff. */
/* Errors about who leads are mostly a moment's disagreement: the leader
 * has not taken over yet (UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER right
 * after an election) or we have not heard of a newer one (FENCED_LEADER_EPOCH):
 * read the coordinator again and retry soon, since the new leader's HW waits
 * for us. Anything else backs off for replica.fetch.backoff.ms. */
static void part_error(fetch_part_t *fp, int16_t error, fetch_phase_t resume)
{
    broker_t *b = fp->link->f->b;
    char name[300];
    uint64_t backoff = (uint64_t)b->cfg.replica_fetch_backoff_ms;
    fp->healthy = 0;
    switch (error) {
    case KERR_FENCED_LEADER_EPOCH:
    case KERR_NOT_LEADER_OR_FOLLOWER:
    case KERR_UNKNOWN_TOPIC_OR_PARTITION:
        cluster_reread_partition(b, fp->r->part);
        /* fall through */
    case KERR_UNKNOWN_LEADER_EPOCH:
        part_wait(fp, backoff < LEADERSHIP_RETRY_MS ? backoff : LEADERSHIP_RETRY_MS, resume);
        return;
    default:
        break;
    }
    log_info("replica fetcher: %s from leader %d: error %d; retrying in %d ms", part_name(fp, name, sizeof(name)),
             (int)fp->link->leader, error, (int)backoff);
    part_wait(fp, backoff, resume);
}

/* becomeFollower's first step for fp's log: ask about its latest epoch, or
 * (an empty log) fetch at once. */
static void part_restart_truncation(fetch_part_t *fp)
{
    const epoch_entry_t *epochs;
    size_t n = partition_log_epochs(fp->r->log, &epochs);
    trunc_step_t st = truncation_start(epochs, n);
    fp->ask_epoch = st.epoch;
    fp->phase = st.action == TRUNC_ASK ? PHASE_TRUNCATE : PHASE_FETCHING;
}

static void epoch_answered(fetch_link_t *l, const char *topic, const kafka_value_t *pv)
{
    fetch_part_t *fp = answered_part(l, topic, (int32_t)KV_INT(pv, OffsetForLeaderEpochEndOffset, Partition));
    if (!fp || fp->phase != PHASE_ASKING)
        return;
    int16_t error = (int16_t)KV_INT(pv, OffsetForLeaderEpochEndOffset, ErrorCode);
    if (error) {
        part_error(fp, error, PHASE_TRUNCATE);
        return;
    }
    partition_log_t *log = fp->r->log;
    const epoch_entry_t *epochs;
    size_t n = partition_log_epochs(log, &epochs);
    trunc_step_t st = truncation_next(epochs, n, partition_log_end_offset(log), fp->ask_epoch,
                                      (int32_t)KV_INT(pv, OffsetForLeaderEpochEndOffset, LeaderEpoch),
                                      KV_INT(pv, OffsetForLeaderEpochEndOffset, EndOffset));
    if (st.action == TRUNC_ASK) {
        fp->ask_epoch = st.epoch;
        fp->phase = PHASE_TRUNCATE;
    } else if (st.action == TRUNC_RETRY) {
        part_restart_truncation(fp);
        part_wait(fp, UNKNOWN_EPOCH_RETRY_MS, fp->phase);
    } else {
        if (st.action == TRUNC_CUT && replica_truncate(l->f->b, fp->r, st.offset) < 0) {
            part_wait(fp, (uint64_t)l->f->b->cfg.replica_fetch_backoff_ms, PHASE_TRUNCATE);
            return;
        }
        fp->phase = PHASE_FETCHING;
    }
}

static void fetch_answered(fetch_link_t *l, const char *topic, const kafka_value_t *pv)
{
    broker_t *b = l->f->b;
    fetch_part_t *fp = answered_part(l, topic, (int32_t)KV_INT(pv, FetchPartitionData, PartitionIndex));
    if (!fp || fp->phase != PHASE_FETCHING)
        return;
    replica_t *r = fp->r;
    int16_t error = (int16_t)KV_INT(pv, FetchPartitionData, ErrorCode);
    char name[300];
    if (error == KERR_OFFSET_OUT_OF_RANGE) {
        int64_t start = KV_INT(pv, FetchPartitionData, LogStartOffset), leo = partition_log_end_offset(r->log);
        if (start > leo) {
            log_warn("%s: the leader's log starts at %" PRId64 ", past ours (%" PRId64 "): starting over there",
                     part_name(fp, name, sizeof(name)), start, leo);
            if (replica_restart_at(b, r, start) == 0)
                return;
        }
        /* Or we are past the leader's end: where do our logs agree? */
        part_restart_truncation(fp);
        part_error(fp, error, fp->phase);
        return;
    }
    if (error) {
        part_error(fp, error, PHASE_FETCHING);
        return;
    }
    fp->healthy = 1;
    const kafka_value_t *rec = KV_GET(pv, FetchPartitionData, Records);
    /* A fetch may end in the middle of a batch: it comes again next time. */
    size_t len = rec->is_null ? 0 : record_batches_prefix(rec->u.b, rec->n, NULL);
    if (len > 0 && repl_move_traffic(b, r->part, b->cfg.broker_id, REPL_FOLLOWER_SIDE))
        repl_throttle_charge(b, REPL_FOLLOWER_SIDE, (int64_t)len);
    if (len > 0 && replica_append_fetched(b, r, rec->u.b, len) < 0) {
        /* Not contiguous with our log (or corrupt): find out again where
         * our log and the leader's agree. */
        part_restart_truncation(fp);
        part_wait(fp, (uint64_t)b->cfg.replica_fetch_backoff_ms, fp->phase);
        return;
    }
    replica_follower_high_watermark(b, r, KV_INT(pv, FetchPartitionData, HighWatermark));
    replica_follower_log_start(b, r, KV_INT(pv, FetchPartitionData, LogStartOffset));
}

static void answer_each(fetch_link_t *l, const kafka_value_t *body, const tree_t *tree,
                        void (*fn)(fetch_link_t *, const char *, const kafka_value_t *))
{
    const kafka_value_t *topics = KV_REF_GET(body, tree->topics);
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        const kafka_value_t *parts = KV_REF_GET(t, tree->partitions);
        for (uint32_t k = 0; k < parts->n; k++)
            fn(l, KV_REF_STR(t, tree->topic_name), kv_at(parts, k));
    }
}

/* One whole answer frame (without its size). -1 when it does not parse. */
static int link_answer(fetch_link_t *l, const uint8_t *p, size_t n)
{
    kafka_arena_t a;
    kafka_arena_init(&a, kafka_answer_decode_budget(n));
    const kafka_api_t *api = kafka_api_find(l->in_flight_api);
    int16_t version = l->in_flight_api == KAFKA_API_FETCH ? FETCH_VERSION : EPOCH_VERSION;
    int32_t corr;
    kafka_value_t *body;
    int rc = kafka_response_decode(p, n, api, version, &a, &corr, &body);
    if (rc != KAFKA_OK || corr != l->correlation) {
        kafka_arena_free(&a);
        return -1;
    }
    if (l->in_flight_api == KAFKA_API_FETCH) {
        int16_t top = (int16_t)KV_INT(body, FetchResponse, ErrorCode);
        if (top)
            log_warn("replica fetcher: leader %d refused the fetch: error %d", (int)l->leader, top);
        answer_each(l, body, &fetch_answer, fetch_answered);
    } else {
        answer_each(l, body, &epoch_answer, epoch_answered);
    }
    kafka_arena_free(&a);
    l->in_flight = 0;
    l->stall_at = 0;
    for (fetch_part_t *fp = l->parts; fp; fp = fp->next) {
        if (fp->in_request && fp->phase == PHASE_ASKING)
            fp->phase = PHASE_TRUNCATE;   /* the leader left it out: ask again */
        fp->in_request = 0;
    }
    return 0;
}

static int link_read(fetch_link_t *l)
{
    const broker_config_t *cfg = &l->f->b->cfg;
    size_t max_frame = (size_t)cfg->replica_fetch_response_max_bytes + (size_t)cfg->replica_fetch_max_bytes +
                       (1u << 20);
    for (int rounds = 0; rounds < 64; rounds++) {
        size_t want = l->in.cap - l->in.len > READ_CHUNK ? l->in.cap - l->in.len : READ_CHUNK;
        ssize_t got = net_read_into(&l->in, l->fd, want);
        if (got == 0)
            return -1;
        if (got < 0)
            return errno == EAGAIN ? 0 : -1;
        while (buf_unread(&l->in) >= 4) {
            const uint8_t *p = buf_read_ptr(&l->in);
            uint32_t size = be32_get(p);
            if (size > max_frame || !l->in_flight) {
                errno = EPROTO;
                return -1;
            }
            if (buf_unread(&l->in) < 4 + (size_t)size) {
                buf_reserve(&l->in, 4 + (size_t)size - buf_unread(&l->in));
                break;
            }
            if (link_answer(l, p + 4, size) < 0) {
                errno = EPROTO;
                return -1;
            }
            buf_consume(&l->in, 4 + (size_t)size);
            link_kick(l);
            if (l->fd < 0)
                return 0;
        }
    }
    return 0;
}

static void on_link_io(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    fetch_link_t *l = arg;
    fetcher_t *f = l->f;
    if (!l->connected && (events & LOOP_WRITABLE)) {
        int rc = net_connect_result(fd);
        if (rc > 0)
            return;   /* a stale wake-up */
        if (rc < 0) {
            link_disconnect(l, NULL);
            l->retry_at = loop_now_ms(f->b->loop) + RECONNECT_MS;
            arm_timer(f, l->retry_at);
            return;
        }
        l->connected = 1;
        l->stall_at = 0;
        log_info("replica fetcher: connected to leader %d for %d partition(s)", (int)l->leader, l->nparts);
        link_kick(l);
        return;
    }
    if (l->in_flight)
        link_expect(l);   /* it moved */
    int broken = 0;
    if (events & LOOP_WRITABLE)
        broken = net_write_buffer(fd, &l->out) < 0;
    if (!broken && (events & LOOP_READABLE))
        broken = link_read(l) < 0;
    if (broken) {
        link_disconnect(l, errno == EPROTO ? "malformed answer" : strerror(errno));
        l->retry_at = loop_now_ms(f->b->loop) + RECONNECT_MS;
        arm_timer(f, l->retry_at);
        return;
    }
    if (l->fd >= 0)
        link_rewatch(l);
}

/* ---- following ---- */

static void part_detach(fetch_part_t *fp)
{
    fetch_link_t *l = fp->link;
    for (fetch_part_t **pp = &l->parts; *pp; pp = &(*pp)->next)
        if (*pp == fp) {
            *pp = fp->next;
            l->nparts--;
            break;
        }
    fp->link = NULL;
}

/* A link that lost a part: freed when it has none left. Never called from
 * the link's own I/O callbacks. */
static void link_release(fetch_link_t *l)
{
    if (l->parts)
        link_kick(l);
    else
        link_free(l);
}

void fetcher_follow(fetcher_t *f, replica_t *r, int32_t leader, int32_t epoch)
{
    if (!f)
        return;   /* stopping */
    fetch_part_t *fp = r->fetch;
    if (fp && fp->link && fp->link->leader == leader && fp->epoch == epoch)
        return;
    if (fp) {
        fetch_link_t *old = fp->link;
        part_detach(fp);
        link_release(old);
    } else {
        fp = xcalloc(1, sizeof(*fp));
    }
    fetch_link_t *l = link_for(f, leader);
    const epoch_entry_t *epochs;
    size_t n = partition_log_epochs(r->log, &epochs);
    trunc_step_t st = truncation_start(epochs, n);
    *fp = (fetch_part_t){.r = r, .link = l, .epoch = epoch, .ask_epoch = st.epoch,
                         .phase = st.action == TRUNC_ASK ? PHASE_TRUNCATE : PHASE_FETCHING};
    fp->next = l->parts;
    l->parts = fp;
    l->nparts++;
    r->fetch = fp;
    link_kick(l);
}

void fetcher_unfollow(fetcher_t *f, replica_t *r)
{
    (void)f;   /* a part knows its link */
    fetch_part_t *fp = r->fetch;
    if (!fp)
        return;
    fetch_link_t *l = fp->link;
    part_detach(fp);
    r->fetch = NULL;
    free(fp);
    link_release(l);
}

void fetcher_broker_changed(fetcher_t *f, int32_t id)
{
    if (!f)
        return;
    for (fetch_link_t *l = f->links; l; l = l->next) {
        if (l->leader != id || l->connected)
            continue;
        link_disconnect(l, NULL);   /* a connect in progress to the old address */
        l->retry_at = 0;
        link_kick(l);
    }
}

int fetcher_following(const replica_t *r)
{
    return r->fetch && r->fetch->healthy;
}

fetcher_t *fetcher_create(broker_t *b)
{
    fetcher_t *f = xcalloc(1, sizeof(*f));
    f->b = b;
    return f;
}

void fetcher_destroy(fetcher_t *f)
{
    if (!f)
        return;
    while (f->links) {
        fetch_link_t *l = f->links;
        while (l->parts) {
            fetch_part_t *fp = l->parts;
            l->parts = fp->next;
            fp->r->fetch = NULL;
            free(fp);
        }
        l->nparts = 0;
        link_free(l);
    }
    if (f->timer)
        loop_timer_cancel(f->b->loop, f->timer);
    free(f);
}
