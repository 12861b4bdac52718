/* test_election.c -- fast leader election: the vote order, the notification
 * and InitialMessage codecs (old formats, truncated and garbage input), and
 * whole elections of 3 and 5 instances on one loop over loopback TCP:
 * agreement on the best (epoch, zxid, id), a late joiner learning the
 * established leader, a new leader after the old one is gone, and a peer
 * that sends garbage being cut off. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/loop.h"
#include "base/net.h"
#include "base/resolver.h"
#include "keeper/zab/election.h"
#include "keeper/zab/handshake.h"
#include "keeper/data/jute.h"
#include "suites.h"
#include "unit.h"

/* ---- vote order ---- */

static void test_election_vote_order(void)
{
    /* epoch first, then zxid, then server id */
    CHECK(election_vote_beats(1, 0x100000001LL, 2, 3, 0x1000000ffLL, 1));
    CHECK(!election_vote_beats(3, 0x1000000ffLL, 1, 1, 0x100000001LL, 2));
    CHECK(election_vote_beats(1, 0x100000002LL, 1, 3, 0x100000001LL, 1));
    CHECK(!election_vote_beats(3, 0x100000001LL, 1, 1, 0x100000002LL, 1));
    CHECK(election_vote_beats(3, 5, 1, 2, 5, 1));
    CHECK(!election_vote_beats(2, 5, 1, 3, 5, 1));
    CHECK(!election_vote_beats(2, 5, 1, 2, 5, 1));   /* the same vote does not beat itself */
    CHECK(election_vote_beats(1, 0, 0, -1, -1, -1)); /* anything beats ZooKeeper's initial (-1, -1) */
}

/* ---- notification codec ---- */

static const char config_text[] = "server.1=127.0.0.1:2888:3888:participant\nversion=0";

static void test_election_notification_roundtrip(void)
{
    election_notification_t n = {PEER_FOLLOWING, {3, 0x500000007LL, 9, 5}, 2, NULL, 0}, d;
    buf_t b;
    buf_init(&b);
    election_encode_notification(&b, &n, config_text, strlen(config_text));
    CHECK_EQ(buf_unread(&b), 44 + strlen(config_text));
    const uint8_t *p = buf_read_ptr(&b);
    CHECK(p[3] == 1);                        /* int state */
    CHECK(p[11] == 3);                       /* long leader */
    CHECK(p[39] == 2);                       /* int version */
    CHECK(p[43] == strlen(config_text));     /* int config length */
    CHECK(memcmp(p + 44, config_text, strlen(config_text)) == 0);
    const char *why = NULL;
    CHECK_EQ(election_decode_notification(p, buf_unread(&b), &d, &why), 0);
    CHECK_EQ(d.state, PEER_FOLLOWING);
    CHECK_EQ(d.vote.leader, 3);
    CHECK_EQ(d.vote.zxid, 0x500000007LL);
    CHECK_EQ(d.vote.election_epoch, 9);
    CHECK_EQ(d.vote.peer_epoch, 5);
    CHECK_EQ(d.version, 2);
    /* the sender's config, which a LOOKING server takes when newer */
    CHECK_EQ(d.config_len, (int32_t)strlen(config_text));
    CHECK(d.config == p + 44);
    /* an empty config is fine too */
    buf_clear(&b);
    election_encode_notification(&b, &n, "", 0);
    CHECK_EQ(buf_unread(&b), 44);
    CHECK_EQ(election_decode_notification(buf_read_ptr(&b), 44, &d, &why), 0);
    buf_free(&b);
}

static void put_old_notification(buf_t *b, int32_t state, int64_t leader, int64_t zxid, int64_t round)
{
    jute_put_int(b, state);
    jute_put_long(b, leader);
    jute_put_long(b, zxid);
    jute_put_long(b, round);
}

static void test_election_notification_old_formats(void)
{
    election_notification_t d;
    const char *why = NULL;
    buf_t b;
    buf_init(&b);
    /* 28 bytes (before 3.4.6's peer epoch): the epoch is the zxid's high half */
    put_old_notification(&b, 0, 2, 0x700000003LL, 4);
    CHECK_EQ(buf_unread(&b), 28);
    CHECK_EQ(election_decode_notification(buf_read_ptr(&b), 28, &d, &why), 0);
    CHECK_EQ(d.state, PEER_LOOKING);
    CHECK_EQ(d.vote.peer_epoch, 7);
    CHECK_EQ(d.version, 0);
    /* 40 bytes: a peer epoch but no version */
    jute_put_long(&b, 6);
    jute_put_int(&b, 1);   /* looks like a version, but a 40-byte message has none */
    CHECK_EQ(buf_unread(&b), 40);
    CHECK_EQ(election_decode_notification(buf_read_ptr(&b), 40, &d, &why), 0);
    CHECK_EQ(d.vote.peer_epoch, 6);
    CHECK_EQ(d.version, 0);
    /* version 1 at 41+ bytes: no config follows; extra bytes are ignored */
    jute_put_int(&b, 0x12345678);
    CHECK_EQ(election_decode_notification(buf_read_ptr(&b), 44, &d, &why), 0);
    CHECK_EQ(d.version, 1);
    buf_free(&b);
}

static void test_election_notification_garbage(void)
{
    election_notification_t n = {PEER_LOOKING, {1, 2, 3, 4}, 2, NULL, 0}, d;
    const char *why = NULL;
    buf_t b;
    buf_init(&b);
    election_encode_notification(&b, &n, config_text, strlen(config_text));
    const uint8_t *p = buf_read_ptr(&b);
    size_t full = buf_unread(&b);
    /* every truncation of a current-format message is refused (28 and 40
     * bytes read as the old formats, as in ZooKeeper) */
    for (size_t len = 0; len < full; len++) {
        why = NULL;
        int rc = election_decode_notification(p, len, &d, &why);
        if (len == 28 || len == 40)
            CHECK_EQ(rc, 0);
        else
            CHECK(rc == -1 && why != NULL);
    }
    uint8_t bad[128];
    memcpy(bad, p, full < sizeof(bad) ? full : sizeof(bad));
    /* config length larger than the message, and negative */
    bad[40] = 0x00, bad[41] = 0x01, bad[42] = 0x00, bad[43] = 0x00;
    CHECK_EQ(election_decode_notification(bad, full, &d, &why), -1);
    bad[40] = 0xff, bad[41] = 0xff, bad[42] = 0xff, bad[43] = 0xfe;
    CHECK_EQ(election_decode_notification(bad, full, &d, &why), -1);
    /* an unknown server state */
    memcpy(bad, p, full);
    bad[3] = 7;
    CHECK_EQ(election_decode_notification(bad, full, &d, &why), -1);
    bad[0] = 0x80;
    bad[3] = 0;
    CHECK_EQ(election_decode_notification(bad, full, &d, &why), -1);
    /* random bytes never crash the decoder */
    srand(42);
    for (int round = 0; round < 2000; round++) {
        size_t len = (size_t)(rand() % (int)sizeof(bad));
        for (size_t i = 0; i < len; i++)
            bad[i] = (uint8_t)rand();
        if (round & 1)   /* plausible headers with random config lengths */
            bad[36] = bad[37] = bad[38] = 0, bad[39] = 2;
        (void)election_decode_notification(bad, len, &d, &why);
    }
    buf_free(&b);
}

/* ---- InitialMessage ---- */

static void put_initial(buf_t *b, int64_t version, int64_t sid, const char *addr)
{
    jute_put_long(b, version);
    jute_put_long(b, sid);
    jute_put_buffer(b, addr, (int32_t)strlen(addr));
}

static int parse_initial(buf_t *b, size_t len, int64_t *sid, size_t *used)
{
    const char *why = NULL;
    int rc = election_parse_initial_message(buf_read_ptr(b), len, sid, used, &why);
    if (rc < 0)
        CHECK(why != NULL);
    return rc;
}

static void test_election_initial_message(void)
{
    int64_t sid = 0;
    size_t used = 0;
    buf_t b;
    buf_init(&b);
    put_initial(&b, -65536, 3, "127.0.0.1:3888");   /* V1, as 3.8 sends by default */
    size_t full = buf_unread(&b);
    for (size_t len = 0; len < full; len++)
        CHECK_EQ(parse_initial(&b, len, &sid, &used), 0);
    CHECK_EQ(parse_initial(&b, full, &sid, &used), 1);
    CHECK_EQ(sid, 3);
    CHECK_EQ(used, full);

    buf_clear(&b);   /* V2 with several addresses, IPv6 among them */
    put_initial(&b, -65535, 7, "10.0.0.1:3888|[::1]:3888|zk7.example:3999");
    CHECK_EQ(parse_initial(&b, buf_unread(&b), &sid, &used), 1);
    CHECK_EQ(sid, 7);

    buf_clear(&b);   /* before 3.5: just the server id */
    jute_put_long(&b, 5);
    CHECK_EQ(parse_initial(&b, 8, &sid, &used), 1);
    CHECK_EQ(sid, 5);
    CHECK_EQ(used, 8);

    static const char *bad_addresses[] = {"", "nohost", "host:", ":3888", "host:38x8", "host:99999", "a:1:2",
                                          "[::1]3888", "[::1:3888", "|||"};
    for (size_t i = 0; i < sizeof(bad_addresses) / sizeof(bad_addresses[0]); i++) {
        buf_clear(&b);
        put_initial(&b, -65536, 3, bad_addresses[i]);
        CHECK_EQ(parse_initial(&b, buf_unread(&b), &sid, &used), -1);
    }
    buf_clear(&b);   /* an unknown protocol version */
    put_initial(&b, -65534, 3, "127.0.0.1:3888");
    CHECK_EQ(parse_initial(&b, buf_unread(&b), &sid, &used), -1);
    buf_clear(&b);   /* an address length beyond ZooKeeper's 2048 */
    jute_put_long(&b, -65536);
    jute_put_long(&b, 3);
    jute_put_int(&b, 2049);
    CHECK_EQ(parse_initial(&b, buf_unread(&b), &sid, &used), -1);
    buf_free(&b);
}

/* ---- whole elections on one loop ---- */

#define MAX_NODES 5

typedef struct cluster cluster_t;

typedef struct {
    cluster_t *cl;
    int index;
} node_ref_t;

struct cluster {
    loop_t *loop;
    resolver_t *resolver;               /* the elections' host name lookups (cluster_lookup) */
    int n;
    keeper_config_t cfg[MAX_NODES];
    ensemble_config_t ens[MAX_NODES];   /* set by cluster_start from cfg, unless ens_set */
    int ens_set[MAX_NODES];
    int adopted[MAX_NODES];             /* newer configs taken from notifications */
    election_t *el[MAX_NODES];
    node_ref_t ref[MAX_NODES];
    int decided[MAX_NODES];
    peer_state_t state[MAX_NODES];
    vote_t vote[MAX_NODES];
    int ndecided, want;
    int timed_out;
};

/* Free loopback ports: bind port 0 and keep every socket open until all are
 * chosen, so no two are the same; the configured ports are bound later. */
static int pick_free_ports(int *ports, int count)
{
    int fds[2 * MAX_NODES + 2];
    int ok = 1;
    for (int i = 0; i < count; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {0};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t sl = sizeof(sa);
        if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            getsockname(fds[i], (struct sockaddr *)&sa, &sl) < 0)
            ok = 0;
        ports[i] = ntohs(sa.sin_port);
    }
    for (int i = 0; i < count; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return ok ? 0 : -1;
}

/* The resolver's lookup (it runs on the resolver's thread): getaddrinfo,
 * as the keeper's, after waiting while a test holds lookups. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int held;
    int calls;
} lookups = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static int cluster_lookup(const char *host, struct sockaddr_storage *addr, socklen_t *addrlen, char *err,
                          size_t errlen)
{
    pthread_mutex_lock(&lookups.mu);
    lookups.calls++;
    while (lookups.held)
        pthread_cond_wait(&lookups.cv, &lookups.mu);
    pthread_mutex_unlock(&lookups.mu);
    return net_resolve(host, 0, addr, addrlen, err, errlen);
}

static void hold_lookups(int held)
{
    pthread_mutex_lock(&lookups.mu);
    lookups.held = held;
    pthread_cond_broadcast(&lookups.cv);
    pthread_mutex_unlock(&lookups.mu);
}

static int lookup_calls(void)
{
    pthread_mutex_lock(&lookups.mu);
    int calls = lookups.calls;
    pthread_mutex_unlock(&lookups.mu);
    return calls;
}

static int cluster_init(cluster_t *cl, int n)
{
    memset(cl, 0, sizeof(*cl));
    cl->loop = loop_create();
    cl->resolver = cl->loop ? resolver_create(cl->loop, cluster_lookup) : NULL;
    cl->n = n;
    int ports[2 * MAX_NODES];
    if (!cl->resolver || pick_free_ports(ports, 2 * n) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        keeper_config_t *kc = &cl->cfg[i];
        kc->tick_time = 100;
        kc->reconfig_enabled = 1;   /* servers outside the config are answered (test_election_newer_config) */
        kc->sync_limit = 5;   /* half a second for a peer to name itself */
        kc->server_id = i + 1;
        kc->npeers = n;
        for (int j = 0; j < n; j++) {
            kc->peers[j].id = j + 1;
            snprintf(kc->peers[j].host, sizeof(kc->peers[j].host), "127.0.0.1");
            kc->peers[j].quorum_port = ports[n + j];
            kc->peers[j].election_port = ports[j];
        }
        cl->ref[i].cl = cl;
        cl->ref[i].index = i;
    }
    return 0;
}

static void on_config_adopted(void *arg, const ensemble_config_t *c)
{
    node_ref_t *ref = arg;
    ref->cl->adopted[ref->index]++;
    ref->cl->ens[ref->index] = *c;
}

/* The active config of node i: its cfg's server lines, version 0. */
static void cluster_static_config(cluster_t *cl, int i, ensemble_config_t *c)
{
    memset(c, 0, sizeof(*c));
    for (int j = 0; j < cl->cfg[i].npeers; j++) {
        ensemble_member_t m = {0};
        m.id = cl->cfg[i].peers[j].id;
        snprintf(m.host, sizeof(m.host), "%s", cl->cfg[i].peers[j].host);
        m.quorum_port = cl->cfg[i].peers[j].quorum_port;
        m.election_port = cl->cfg[i].peers[j].election_port;
        m.observer = cl->cfg[i].peers[j].observer;
        ensemble_config_put(c, &m);
    }
}

/* The static config without members a and b (0: none), at version. */
static void config_without(cluster_t *cl, ensemble_config_t *c, int a, int b, int64_t version)
{
    cluster_static_config(cl, 0, c);
    if (a)
        ensemble_config_remove(c, a);
    if (b)
        ensemble_config_remove(c, b);
    c->version = version;
}

/* Nodes from..to-1 start on config c (cluster_start). */
static void cluster_use_config(cluster_t *cl, int from, int to, const ensemble_config_t *c)
{
    for (int i = from; i < to; i++) {
        cl->ens[i] = *c;
        cl->ens_set[i] = 1;
    }
}

static int cluster_start(cluster_t *cl, int i)
{
    char err[256] = "";
    if (!cl->ens_set[i])
        cluster_static_config(cl, i, &cl->ens[i]);
    cl->el[i] = election_create(cl->loop, cl->resolver, &cl->cfg[i], &cl->ens[i], on_config_adopted, &cl->ref[i],
                                err, sizeof(err));
    if (!cl->el[i])
        fprintf(stderr, "  election_create(%d): %s\n", i + 1, err);
    return cl->el[i] ? 0 : -1;
}

/* Start nodes from..to-1 (checked); -1 when one did not start. */
static int cluster_start_range(cluster_t *cl, int from, int to)
{
    int rc = 0;
    for (int i = from; i < to; i++) {
        CHECK_EQ(cluster_start(cl, i), 0);
        if (!cl->el[i])
            rc = -1;
    }
    return rc;
}

static void cluster_stop(cluster_t *cl, int i)
{
    election_destroy(cl->el[i]);
    cl->el[i] = NULL;
    cl->decided[i] = 0;
}

static void cluster_free(cluster_t *cl)
{
    for (int i = 0; i < cl->n; i++)
        election_destroy(cl->el[i]);
    resolver_destroy(cl->resolver);
    if (cl->loop)
        loop_destroy(cl->loop);
}

/* A cluster of n set up (cluster_init), or NULL after a failed check. */
static cluster_t *cluster_new(int n)
{
    cluster_t *cl = calloc(1, sizeof(*cl));
    if (cl && cluster_init(cl, n) == 0)
        return cl;
    CHECK(!"cluster set-up");
    if (cl)
        cluster_free(cl);
    free(cl);
    return NULL;
}

static void on_decided(void *arg, peer_state_t state, const vote_t *vote)
{
    node_ref_t *ref = arg;
    cluster_t *cl = ref->cl;
    CHECK(!cl->decided[ref->index]);   /* once per election_look */
    cl->decided[ref->index] = 1;
    cl->state[ref->index] = state;
    cl->vote[ref->index] = *vote;
    if (++cl->ndecided >= cl->want)
        loop_stop(cl->loop);
}

static void on_test_timeout(loop_t *loop, void *arg)
{
    cluster_t *cl = arg;
    cl->timed_out = 1;
    loop_stop(loop);
}

static void on_pause_over(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* Run the loop until want more decisions arrive; 0, or -1 after timeout_ms. */
static int cluster_wait(cluster_t *cl, int want, uint64_t timeout_ms)
{
    cl->ndecided = 0;
    cl->want = want;
    cl->timed_out = 0;
    loop_timer_t *t = loop_timer_add(cl->loop, timeout_ms, on_test_timeout, cl);
    loop_run(cl->loop);
    if (!cl->timed_out)
        loop_timer_cancel(cl->loop, t);
    return cl->timed_out ? -1 : 0;
}

static void cluster_pause(cluster_t *cl, uint64_t ms)
{
    loop_timer_add(cl->loop, ms, on_pause_over, cl);
    loop_run(cl->loop);
}

static void cluster_look(cluster_t *cl, int i, int64_t zxid, int64_t epoch)
{
    cl->decided[i] = 0;
    election_look(cl->el[i], zxid, epoch, on_decided, &cl->ref[i]);
}

/* Every running node decided for leader_id (a node index + 1), the leader
 * LEADING and the rest FOLLOWING, all with the same vote. */
static void check_agreement(cluster_t *cl, int leader_id, int64_t zxid, int64_t epoch)
{
    int first = -1;
    for (int i = 0; i < cl->n; i++) {
        if (!cl->el[i])
            continue;
        CHECK(cl->decided[i]);
        CHECK_EQ(cl->vote[i].leader, leader_id);
        CHECK_EQ(cl->vote[i].zxid, zxid);
        CHECK_EQ(cl->vote[i].peer_epoch, epoch);
        CHECK_EQ(cl->state[i], i + 1 == leader_id ? PEER_LEADING : PEER_FOLLOWING);
        CHECK_EQ(election_state(cl->el[i]), cl->state[i]);
        if (first < 0)
            first = i;
        else
            CHECK_EQ(cl->vote[i].election_epoch, cl->vote[first].election_epoch);
    }
}

/* After the quorum protocol settles the new epoch, each server says so
 * (ZooKeeper's updateElectionVote); a late joiner then sees it. */
static void cluster_settle(cluster_t *cl, int64_t new_epoch)
{
    for (int i = 0; i < cl->n; i++) {
        if (!cl->el[i])
            continue;
        vote_t v = cl->vote[i];
        v.peer_epoch = new_epoch;
        election_set_state(cl->el[i], cl->state[i], &v);
    }
}

static void test_election_three(void)
{
    cluster_t *cl = cluster_new(3);
    if (!cl)
        return;
    for (int i = 0; i < 3; i++)
        CHECK_EQ(cluster_start(cl, i), 0);
    if (!cl->el[0] || !cl->el[1] || !cl->el[2])
        goto out;
    /* server 2 has the highest epoch though not the highest zxid */
    cluster_look(cl, 0, 0x100000005LL, 1);
    cluster_look(cl, 1, 0x200000001LL, 2);
    cluster_look(cl, 2, 0x100000009LL, 1);
    CHECK_EQ(cluster_wait(cl, 3, 10000), 0);
    check_agreement(cl, 2, 0x200000001LL, 2);
    int64_t first_round = cl->vote[0].election_epoch;

    /* Server 3 restarts after the decision, with a better zxid than the
     * leader's; the others answer with FOLLOWING/LEADING and it joins them. */
    cluster_settle(cl, 3);
    cluster_stop(cl, 2);
    CHECK_EQ(cluster_start(cl, 2), 0);
    if (!cl->el[2])
        goto out;
    cluster_look(cl, 2, 0x300000001LL, 3);
    CHECK_EQ(cluster_wait(cl, 1, 10000), 0);
    CHECK_EQ(cl->state[2], PEER_FOLLOWING);
    CHECK_EQ(cl->vote[2].leader, 2);
    CHECK_EQ(election_state(cl->el[0]), PEER_FOLLOWING);   /* nobody else moved */
    CHECK_EQ(election_state(cl->el[1]), PEER_LEADING);

    /* The leader goes away: the two left elect server 3 in a new round. */
    cluster_stop(cl, 1);
    cluster_look(cl, 0, 0x300000002LL, 3);
    cluster_look(cl, 2, 0x300000004LL, 3);
    CHECK_EQ(cluster_wait(cl, 2, 10000), 0);
    check_agreement(cl, 3, 0x300000004LL, 3);
    CHECK(cl->vote[0].election_epoch > first_round);
out:
    cluster_free(cl);
    free(cl);
}

/* Members named by a host name: the name is looked up off the loop when a
 * member is dialled, never by election_create or on the loop. While the
 * lookups are held nobody can be dialled and nothing is decided, yet the
 * loop runs on (the wait's timer fires); once they are let go, the
 * election completes as with addresses. */
static void test_election_members_named_by_host_name(void)
{
    cluster_t *cl = cluster_new(3);
    if (!cl)
        return;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            snprintf(cl->cfg[i].peers[j].host, sizeof(cl->cfg[i].peers[j].host), "localhost");
    int calls_before = lookup_calls();
    hold_lookups(1);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(cluster_start(cl, i), 0);
    if (!cl->el[0] || !cl->el[1] || !cl->el[2]) {
        hold_lookups(0);
        goto out;
    }
    CHECK_EQ(lookup_calls(), calls_before);   /* creating the elections looked nothing up */
    for (int i = 0; i < 3; i++)
        cluster_look(cl, i, 0x100000001LL + i, 1);
    CHECK_EQ(cluster_wait(cl, 1, 300), -1);   /* nothing decided, and the loop ran */
    CHECK_EQ(lookup_calls(), calls_before + 1);   /* one lookup of the name, still held */
    hold_lookups(0);
    CHECK_EQ(cluster_wait(cl, 3, 10000), 0);
    check_agreement(cl, 3, 0x100000003LL, 1);
out:
    cluster_free(cl);
    free(cl);
}

static void test_election_five(void)
{
    cluster_t *cl = cluster_new(5);
    if (!cl)
        return;
    /* four of five start; equal epochs and zxids, so the largest id wins */
    if (cluster_start_range(cl, 0, 4) < 0)
        goto out;
    for (int i = 0; i < 4; i++)
        cluster_look(cl, i, 0x100000010LL, 1);
    CHECK_EQ(cluster_wait(cl, 4, 10000), 0);
    check_agreement(cl, 4, 0x100000010LL, 1);

    /* the fifth comes late: its id beats 4 but it follows the established leader */
    cluster_settle(cl, 2);
    CHECK_EQ(cluster_start(cl, 4), 0);
    if (!cl->el[4])
        goto out;
    cluster_look(cl, 4, 0x100000010LL, 1);
    CHECK_EQ(cluster_wait(cl, 1, 10000), 0);
    CHECK_EQ(cl->state[4], PEER_FOLLOWING);
    CHECK_EQ(cl->vote[4].leader, 4);
    CHECK_EQ(cl->vote[4].peer_epoch, 2);

    /* leader 4 goes away; 1, 2, 3, 5 elect 5, then 2 after 5 goes too */
    cluster_stop(cl, 3);
    for (int i = 0; i < 5; i++)
        if (cl->el[i])
            cluster_look(cl, i, 0x200000003LL, 2);
    CHECK_EQ(cluster_wait(cl, 4, 10000), 0);
    check_agreement(cl, 5, 0x200000003LL, 2);

    cluster_stop(cl, 4);
    cluster_look(cl, 0, 0x300000001LL, 3);
    cluster_look(cl, 1, 0x300000007LL, 3);
    cluster_look(cl, 2, 0x300000005LL, 3);
    CHECK_EQ(cluster_wait(cl, 3, 10000), 0);
    check_agreement(cl, 2, 0x300000007LL, 3);
out:
    cluster_free(cl);
    free(cl);
}

/* Server 1 observes (a smaller id than the participants', so the
 * participants dial its connections back). It takes no part in the vote:
 * the participants elect 4, it then observes 4; with two participants gone
 * the third and the observer elect nobody; one back, the two participants
 * elect it and the observer follows. */
static void test_election_observer(void)
{
    cluster_t *cl = cluster_new(4);
    if (!cl)
        return;
    for (int i = 0; i < 4; i++)
        cl->cfg[i].peers[0].observer = 1;
    if (cluster_start_range(cl, 0, 4) < 0)
        goto out;
    /* The observer has the best zxid: it must not matter. */
    cluster_look(cl, 0, 0x100000050LL, 1);
    for (int i = 1; i < 4; i++)
        cluster_look(cl, i, 0x100000010LL, 1);
    CHECK_EQ(cluster_wait(cl, 4, 10000), 0);
    CHECK_EQ(cl->state[0], PEER_OBSERVING);
    CHECK_EQ(election_state(cl->el[0]), PEER_OBSERVING);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(cl->vote[i].leader, 4);
    CHECK_EQ(cl->state[3], PEER_LEADING);
    CHECK_EQ(cl->state[1], PEER_FOLLOWING);
    CHECK_EQ(cl->state[2], PEER_FOLLOWING);

    /* Participants 3 and 4 go: 2 and the observer are no quorum. */
    cluster_stop(cl, 2);
    cluster_stop(cl, 3);
    cluster_look(cl, 0, 0x100000050LL, 1);
    cluster_look(cl, 1, 0x100000020LL, 1);
    CHECK_EQ(cluster_wait(cl, 1, 1500), -1);
    CHECK(!cl->decided[0] && !cl->decided[1]);

    /* 3 comes back: 2 and 3 elect 3, the observer observes it. */
    CHECK_EQ(cluster_start(cl, 2), 0);
    if (!cl->el[2])
        goto out;
    cluster_look(cl, 2, 0x100000020LL, 1);
    CHECK_EQ(cluster_wait(cl, 3, 10000), 0);
    CHECK_EQ(cl->state[2], PEER_LEADING);
    CHECK_EQ(cl->state[1], PEER_FOLLOWING);
    CHECK_EQ(cl->state[0], PEER_OBSERVING);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(cl->vote[i].leader, 3);
out:
    cluster_free(cl);
    free(cl);
}

/* Dynamic reconfiguration: servers 1-3 run config version 0x100000007
 * {1, 2, 3}; server 4 starts on the static {1, 2, 3, 4} (version 0), as a
 * server about to be added does. Its notifications reach 1-3, which answer
 * it although it is in none of their configs; it takes their newer config
 * (FastLeaderElection's processReconfig), restarts its round and, with no
 * vote in it, joins the leader the voters report, as a follower. Server 1,
 * on an older config of the same voters, takes the newer one too. */
static void test_election_newer_config(void)
{
    cluster_t *cl = cluster_new(4);
    if (!cl)
        return;
    ensemble_config_t newer;
    config_without(cl, &newer, 4, 0, 0x100000007LL);
    cluster_use_config(cl, 1, 3, &newer);
    ensemble_config_t older;
    config_without(cl, &older, 4, 0, 0x100000003LL);
    cluster_use_config(cl, 0, 1, &older);
    if (cluster_start_range(cl, 0, 4) < 0)
        goto out;
    CHECK_EQ(election_config_version(cl->el[3]), 0);
    /* Server 4 has the best zxid and the largest id: without a vote it must not matter. */
    cluster_look(cl, 3, 0x100000050LL, 1);
    for (int i = 0; i < 3; i++)
        cluster_look(cl, i, 0x100000010LL, 1);
    CHECK_EQ(cluster_wait(cl, 4, 10000), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(cl->vote[i].leader, 3);
    CHECK_EQ(cl->state[2], PEER_LEADING);
    CHECK_EQ(cl->state[0], PEER_FOLLOWING);
    CHECK_EQ(cl->state[1], PEER_FOLLOWING);
    CHECK_EQ(cl->state[3], PEER_FOLLOWING);
    CHECK_EQ(election_config_version(cl->el[3]), 0x100000007LL);
    CHECK_EQ(election_config_version(cl->el[0]), 0x100000007LL);
    CHECK(cl->adopted[3] >= 1);
    CHECK_EQ(cl->ens[3].n, 3);   /* the keeper was handed the config taken */
    CHECK_EQ(cl->adopted[1], 0);
    CHECK_EQ(cl->adopted[2], 0);

    /* The reconfig that adds server 4 commits: with the new config set on
     * every server, 4 votes, and 1-3 and 4 elect again (3 is gone: 4 leads). */
    ensemble_config_t added;
    config_without(cl, &added, 0, 0, 0x100000009LL);
    cluster_stop(cl, 2);
    for (int i = 0; i < 4; i++)
        if (cl->el[i])
            election_set_config(cl->el[i], &added);
    cluster_look(cl, 0, 0x100000060LL, 1);
    cluster_look(cl, 1, 0x100000060LL, 1);
    cluster_look(cl, 3, 0x100000060LL, 1);
    CHECK_EQ(cluster_wait(cl, 3, 10000), 0);
    CHECK_EQ(cl->state[3], PEER_LEADING);
    CHECK_EQ(cl->vote[0].leader, 4);
    CHECK_EQ(cl->vote[1].leader, 4);
out:
    cluster_free(cl);
    free(cl);
}

/* A reconfig logged and not seen committed counts in the vote (ZooKeeper's
 * last seen verifier). Five voters; the pending config keeps 1, 2 and 3.
 * It may have been committed by 1, 2 and 3 and a proposal after it by 1
 * and 2 alone (the new majority), the client told so; then 1 crashed.
 * 3, 4 and 5 (a majority of the five) must not elect one of themselves
 * without 2, which holds that proposal; nor may 2 join a leader that a
 * majority of the pending voters does not name, whose sync would truncate
 * it. */
static void test_election_pending_reconfig_needs_both_quorums(void)
{
    cluster_t *cl = cluster_new(5);
    if (!cl)
        return;
    ensemble_config_t pending;
    config_without(cl, &pending, 4, 5, 0x100000005LL);
    if (cluster_start_range(cl, 2, 5) < 0)
        goto out;
    for (int i = 2; i < 5; i++) {
        election_set_next_config(cl->el[i], &pending);
        cluster_look(cl, i, 0x100000010LL, 1);
    }
    /* Three of five agree on 5, one of the pending three: nobody decides. */
    CHECK_EQ(cluster_wait(cl, 1, 600), -1);
    CHECK_EQ(cl->ndecided, 0);
    /* 2 comes back with the proposal 1 and 2 acknowledged: it leads. */
    CHECK_EQ(cluster_start(cl, 1), 0);
    if (!cl->el[1])
        goto out;
    election_set_next_config(cl->el[1], &pending);
    cluster_look(cl, 1, 0x100000011LL, 1);
    CHECK_EQ(cluster_wait(cl, 4, 10000), 0);
    for (int i = 1; i < 5; i++) {
        CHECK_EQ(cl->vote[i].leader, 2);
        CHECK_EQ(cl->vote[i].zxid, 0x100000011LL);
        CHECK_EQ(cl->state[i], i == 1 ? PEER_LEADING : PEER_FOLLOWING);
    }

    /* Now 3, 4 and 5 never saw the reconfig and elected 5 without 2. 2,
     * with it pending, does not join them: of the pending voters only 3
     * follows 5. */
    for (int i = 1; i < 5; i++)
        cluster_stop(cl, i);
    if (cluster_start_range(cl, 2, 5) < 0)
        goto out;
    for (int i = 2; i < 5; i++)
        cluster_look(cl, i, 0x100000010LL, 1);
    CHECK_EQ(cluster_wait(cl, 3, 10000), 0);
    check_agreement(cl, 5, 0x100000010LL, 1);
    cluster_settle(cl, 2);
    CHECK_EQ(cluster_start(cl, 1), 0);
    if (!cl->el[1])
        goto out;
    election_set_next_config(cl->el[1], &pending);
    cluster_look(cl, 1, 0x100000011LL, 1);
    CHECK_EQ(cluster_wait(cl, 1, 600), -1);
    CHECK(!cl->decided[1]);
    /* Without it pending (the same server, a new round), it follows 5. */
    election_set_next_config(cl->el[1], NULL);
    cluster_look(cl, 1, 0x100000011LL, 1);
    CHECK_EQ(cluster_wait(cl, 1, 10000), 0);
    CHECK_EQ(cl->state[1], PEER_FOLLOWING);
    CHECK_EQ(cl->vote[1].leader, 5);
out:
    cluster_free(cl);
    free(cl);
}

/* A pending config that adds voters: their votes are needed and counted,
 * though they are outside the active config. Active: 1, 2, 3, which elect
 * 3; 4, started on a config of its own, takes theirs and follows without a
 * vote. Then a reconfig to 1, 4 and 5 is pending everywhere and 3 is gone:
 * 1 and 2 are a quorum of the active voters but not of the pending ones,
 * and decide nothing until 4 takes part; 4 proposes nobody itself (it has
 * no vote in the active config) and votes with them for 2. */
static void test_election_pending_reconfig_adds_voters(void)
{
    cluster_t *cl = cluster_new(5);
    if (!cl)
        return;
    ensemble_config_t active, pending;
    config_without(cl, &active, 4, 5, 0x100000001LL);
    config_without(cl, &pending, 2, 3, 0x100000007LL);
    cluster_use_config(cl, 0, 3, &active);
    if (cluster_start_range(cl, 0, 4) < 0)
        goto out;
    for (int i = 0; i < 4; i++)
        cluster_look(cl, i, 0x100000010LL, 1);
    CHECK_EQ(cluster_wait(cl, 4, 10000), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(cl->vote[i].leader, 3);
    CHECK_EQ(election_config_version(cl->el[3]), 0x100000001LL);
    cluster_settle(cl, 2);

    cluster_stop(cl, 2);
    election_set_state(cl->el[3], PEER_LOOKING, NULL);   /* it waits for its own round */
    for (int i = 0; i < 2; i++) {
        election_set_next_config(cl->el[i], &pending);
        cluster_look(cl, i, 0x200000004LL, 2);
    }
    CHECK_EQ(cluster_wait(cl, 1, 600), -1);
    CHECK_EQ(cl->ndecided, 0);
    election_set_next_config(cl->el[3], &pending);
    cluster_look(cl, 3, 0x200000004LL, 2);
    CHECK_EQ(cluster_wait(cl, 3, 10000), 0);
    for (int i = 0; i < 4; i++) {
        if (i == 2)
            continue;
        CHECK_EQ(cl->vote[i].leader, 2);
        CHECK_EQ(cl->state[i], i == 1 ? PEER_LEADING : PEER_FOLLOWING);
    }
out:
    cluster_free(cl);
    free(cl);
}

/* A member removed by a reconfig runs on without a vote; when its leader
 * goes it looks again, and must find the new leader though the members,
 * started afresh on the new config, have no address for it and its id is
 * the smallest (so by ZooKeeper's rule it would hang up and wait to be
 * dialled back, which nobody can do). Its connections are kept instead. */
static void test_election_removed_member_rejoins(void)
{
    cluster_t *cl = cluster_new(3);
    if (!cl)
        return;
    ensemble_config_t without_1;
    config_without(cl, &without_1, 1, 0, 0x100000009LL);
    cluster_use_config(cl, 1, 3, &without_1);
    if (cluster_start_range(cl, 0, 3) < 0)
        goto out;
    election_set_config(cl->el[0], &without_1);   /* as peer_activate does on the removed member */
    cluster_look(cl, 1, 0x100000020LL, 1);
    cluster_look(cl, 2, 0x100000020LL, 1);
    CHECK_EQ(cluster_wait(cl, 2, 10000), 0);
    CHECK_EQ(cl->vote[1].leader, 3);
    CHECK_EQ(cl->state[2], PEER_LEADING);
    cluster_settle(cl, 2);
    cluster_look(cl, 0, 0x100000020LL, 1);
    CHECK_EQ(cluster_wait(cl, 1, 10000), 0);
    CHECK_EQ(cl->state[0], PEER_FOLLOWING);
    CHECK_EQ(cl->vote[0].leader, 3);
out:
    cluster_free(cl);
    free(cl);
}

/* ---- hostile peers ---- */

static int dial_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)port);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Has the election closed our end? (EOF or reset, not just "nothing yet") */
static int was_closed(int fd)
{
    char tmp[4096];
    for (;;) {
        ssize_t n = recv(fd, tmp, sizeof(tmp), 0);
        if (n == 0)
            return 1;
        if (n < 0)
            return errno == ECONNRESET;
    }
}

static void test_election_hostile_peers(void)
{
    cluster_t *cl = cluster_new(3);
    if (!cl)
        return;
    CHECK_EQ(cluster_start(cl, 0), 0);
    if (!cl->el[0])
        goto out;
    int port = cl->cfg[0].peers[0].election_port;
    enum { NPROBES = 7 };
    int fds[NPROBES];
    buf_t msg[NPROBES];
    for (int i = 0; i < NPROBES; i++)
        buf_init(&msg[i]);
    jute_put_long(&msg[0], -12345);                       /* unknown protocol version */
    jute_put_long(&msg[1], 0);                            /* old-style id, smaller, not in the config */
    put_initial(&msg[2], -65536, 1, "127.0.0.1:1");       /* our own id */
    put_initial(&msg[3], -65536, 3, "127.0.0.1:1");       /* then an absurd message length */
    jute_put_int(&msg[3], 0x7fffffff);
    put_initial(&msg[4], -65536, 3, "127.0.0.1:1");       /* then a 20-byte notification */
    jute_put_int(&msg[4], 20);
    for (int i = 0; i < 20; i++)
        buf_append(&msg[4], "\0", 1);
    put_initial(&msg[5], -65536, 2, "127.0.0.1:1");       /* then a negative length */
    jute_put_int(&msg[5], -4);
    /* msg[6]: connects and says nothing: cut off after tickTime x syncLimit */
    for (int i = 0; i < NPROBES; i++) {
        fds[i] = dial_loopback(port);
        CHECK(fds[i] >= 0);
    }
    cluster_pause(cl, 50);   /* let the connections be accepted */
    for (int i = 0; i < NPROBES; i++)
        if (fds[i] >= 0 && buf_unread(&msg[i]) > 0)
            CHECK_EQ(send(fds[i], buf_read_ptr(&msg[i]), buf_unread(&msg[i]), MSG_NOSIGNAL),
                     (ssize_t)buf_unread(&msg[i]));
    /* A larger id outside the config (a server about to be added) keeps
     * its connection, as in ZooKeeper, and is answered. */
    int stranger = dial_loopback(port);
    CHECK(stranger >= 0);
    buf_t hello;
    buf_init(&hello);
    put_initial(&hello, -65536, 99, "127.0.0.1:1");
    election_notification_t looking = {PEER_LOOKING, {99, 5, 1, 1}, 2, NULL, 0};
    buf_t body;
    buf_init(&body);
    /* with a newer config naming only itself: a stranger does not get to rewrite the membership */
    static const char forged[] = "server.99=127.0.0.1:1:2:participant\nversion=7fffffffffffffff";
    election_encode_notification(&body, &looking, forged, strlen(forged));
    jute_put_int(&hello, (int32_t)buf_unread(&body));
    buf_append(&hello, buf_read_ptr(&body), buf_unread(&body));
    cluster_pause(cl, 50);
    if (stranger >= 0)
        CHECK_EQ(send(stranger, buf_read_ptr(&hello), buf_unread(&hello), MSG_NOSIGNAL), (ssize_t)buf_unread(&hello));
    buf_free(&hello);
    buf_free(&body);
    cluster_pause(cl, 1000);
    if (stranger >= 0) {
        uint8_t answer[64];
        ssize_t got = recv(stranger, answer, sizeof(answer), MSG_DONTWAIT);
        CHECK(got >= 48);   /* a notification: length, then state, leader, ... */
        close(stranger);
    }
    CHECK_EQ(election_config_version(cl->el[0]), 0);
    CHECK_EQ(cl->adopted[0], 0);
    for (int i = 0; i < NPROBES; i++) {
        if (fds[i] >= 0) {
            if (!was_closed(fds[i]))
                fprintf(stderr, "  probe %d was not cut off\n", i);
            CHECK(was_closed(fds[i]));
            close(fds[i]);
        }
        buf_free(&msg[i]);
    }
    /* and the election still works afterwards */
    CHECK_EQ(cluster_start(cl, 1), 0);
    if (!cl->el[1])
        goto out;
    cluster_look(cl, 0, 0x100000001LL, 1);
    cluster_look(cl, 1, 0x100000001LL, 1);
    CHECK_EQ(cluster_wait(cl, 2, 10000), 0);
    CHECK_EQ(cl->vote[0].leader, 2);
    CHECK_EQ(cl->vote[1].leader, 2);
out:
    cluster_free(cl);
    free(cl);
}

/* A stranger names itself server 3 (a larger id, so its connection is
 * kept) and sends a LOOKING notification whose round, zxid and epoch are
 * INT64_MAX. Servers 1 and 2 follow it, as ZooKeeper's would: nothing in
 * FastLeaderElection bounds a round. Their next election must still work:
 * ZooKeeper's AtomicLong round wraps to Long.MIN_VALUE, and so must ours,
 * without signed overflow (UBSan aborts the unit tests on one). */
static void test_election_forged_max_values(void)
{
    cluster_t *cl = cluster_new(3);
    if (!cl)
        return;
    CHECK_EQ(cluster_start(cl, 0), 0);
    CHECK_EQ(cluster_start(cl, 1), 0);
    if (!cl->el[0] || !cl->el[1])
        goto out;
    int fds[2];
    for (int i = 0; i < 2; i++) {
        fds[i] = dial_loopback(cl->cfg[i].peers[i].election_port);
        CHECK(fds[i] >= 0);
    }
    cluster_pause(cl, 50);
    election_notification_t forged = {PEER_LOOKING, {2, INT64_MAX, INT64_MAX, INT64_MAX}, 2, NULL, 0};
    buf_t msg;
    buf_init(&msg);
    put_initial(&msg, -65536, 3, "127.0.0.1:1");
    jute_put_int(&msg, (int32_t)(44 + strlen(config_text)));
    election_encode_notification(&msg, &forged, config_text, strlen(config_text));
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            CHECK_EQ(send(fds[i], buf_read_ptr(&msg), buf_unread(&msg), MSG_NOSIGNAL), (ssize_t)buf_unread(&msg));
    buf_free(&msg);
    cluster_pause(cl, 50);
    cluster_look(cl, 0, 0x100000001LL, 1);
    cluster_look(cl, 1, 0x100000001LL, 1);
    CHECK_EQ(cluster_wait(cl, 2, 10000), 0);
    CHECK_EQ(cl->vote[0].election_epoch, INT64_MAX);
    CHECK_EQ(cl->vote[1].election_epoch, INT64_MAX);
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);

    /* The leader goes away and comes back: a new round for both. */
    cluster_settle(cl, 2);
    cluster_look(cl, 0, 0x200000001LL, 2);
    cluster_look(cl, 1, 0x200000001LL, 2);
    CHECK_EQ(cluster_wait(cl, 2, 10000), 0);
    check_agreement(cl, 2, 0x200000001LL, 2);
    CHECK_EQ(cl->vote[0].election_epoch, INT64_MIN);   /* Long.MAX_VALUE + 1 in Java */
    CHECK_EQ(election_logical_clock(cl->el[1]), INT64_MIN);
out:
    cluster_free(cl);
    free(cl);
}

/* ---- the waiting room of the peer ports ---- */

static void test_handshake_room(void)
{
    handshake_room_t r;
    handshake_room_init(&r);
    int conns[HANDSHAKE_SLOTS + 8];
    /* One address fills its share; the next connection from it takes the
     * place of its oldest, not of anyone else's. */
    CHECK_EQ(handshake_enter(&r, "10.0.0.9", &conns[0]), 0);   /* another address, first of all */
    for (int i = 1; i <= HANDSHAKE_SLOTS_PER_IP; i++) {
        CHECK(handshake_victim(&r, "10.0.0.1") == NULL);
        CHECK_EQ(handshake_enter(&r, "10.0.0.1", &conns[i]), 0);
    }
    CHECK_EQ(handshake_count_ip(&r, "10.0.0.1"), HANDSHAKE_SLOTS_PER_IP);
    CHECK(handshake_victim(&r, "10.0.0.1") == &conns[1]);
    CHECK(handshake_victim(&r, "10.0.0.2") == NULL);   /* others are not held back by it */
    handshake_leave(&r, &conns[1]);
    CHECK(handshake_victim(&r, "10.0.0.1") == NULL);
    CHECK_EQ(handshake_enter(&r, "10.0.0.1", &conns[1]), 0);
    CHECK(handshake_victim(&r, "10.0.0.1") == &conns[2]);   /* re-entered: now the newest */
    handshake_leave(&r, &conns[1]);
    handshake_leave(&r, &conns[1]);   /* twice, or never entered: harmless */
    CHECK_EQ(handshake_count(&r), HANDSHAKE_SLOTS_PER_IP);

    /* The whole room full, from many addresses: the oldest of all gives way. */
    handshake_room_init(&r);
    char ip[32];
    for (int i = 0; i < HANDSHAKE_SLOTS; i++) {
        snprintf(ip, sizeof(ip), "10.1.%d.%d", i / HANDSHAKE_SLOTS_PER_IP, i % HANDSHAKE_SLOTS_PER_IP);
        CHECK(handshake_victim(&r, ip) == NULL);
        CHECK_EQ(handshake_enter(&r, ip, &conns[i]), 0);
    }
    CHECK_EQ(handshake_count(&r), HANDSHAKE_SLOTS);
    CHECK_EQ(handshake_enter(&r, "10.2.0.1", &conns[HANDSHAKE_SLOTS]), -1);
    CHECK(handshake_victim(&r, "10.2.0.1") == &conns[0]);
    handshake_leave(&r, &conns[0]);
    CHECK_EQ(handshake_enter(&r, "10.2.0.1", &conns[HANDSHAKE_SLOTS]), 0);
    CHECK(handshake_victim(&r, "10.2.0.2") == &conns[1]);

    /* Deadlines: never longer than two seconds. */
    CHECK_EQ(handshake_timeout_ms(10000), HANDSHAKE_TIMEOUT_MAX_MS);
    CHECK_EQ(handshake_timeout_ms(500), 500);
    CHECK_EQ(handshake_timeout_ms(0), HANDSHAKE_TIMEOUT_MAX_MS);
}

/* Strangers that connect to the election port and say nothing, reconnecting
 * whenever they are let go, as someone holding the port would. */
#define HOLDERS 100

typedef struct {
    loop_t *loop;
    int port;
    int fds[HOLDERS];
    int reopened;
    loop_timer_t *timer;
} holders_t;

static void on_holders_tick(loop_t *loop, void *arg)
{
    holders_t *h = arg;
    for (int i = 0; i < HOLDERS; i++)
        if (h->fds[i] < 0 || was_closed(h->fds[i])) {
            if (h->fds[i] >= 0)
                close(h->fds[i]);
            h->fds[i] = dial_loopback(h->port);
            h->reopened++;
        }
    h->timer = loop_timer_add(loop, 50, on_holders_tick, h);
}

/* Servers 1 and 2 elect a leader while a hundred silent connections from
 * their own address hold server 1's election port, and keep holding it.
 * Its waiting room lets the oldest stranger go for each newcomer and a peer
 * names itself at once, so the election goes on. Before, the 64 places
 * stayed taken for tickTime x syncLimit (10 s here) and server 2 was turned
 * away all that time. */
static void test_election_held_handshakes(void)
{
    cluster_t *cl = calloc(1, sizeof(*cl));
    holders_t *h = calloc(1, sizeof(*h));
    if (!cl || !h || cluster_init(cl, 3) < 0) {
        CHECK(!"cluster set-up");
        free(cl);
        free(h);
        return;
    }
    for (int i = 0; i < 3; i++)
        cl->cfg[i].sync_limit = 100;
    CHECK_EQ(cluster_start(cl, 0), 0);
    if (!cl->el[0])
        goto out;
    h->loop = cl->loop;
    h->port = cl->cfg[0].peers[0].election_port;
    for (int i = 0; i < HOLDERS; i++)
        h->fds[i] = -1;
    on_holders_tick(cl->loop, h);
    cluster_pause(cl, 300);   /* the strangers are in */
    CHECK_EQ(cluster_start(cl, 1), 0);
    if (!cl->el[1])
        goto out;
    cluster_look(cl, 0, 0x100000001LL, 1);
    cluster_look(cl, 1, 0x100000001LL, 1);
    CHECK_EQ(cluster_wait(cl, 2, 5000), 0);
    CHECK_EQ(cl->vote[0].leader, 2);
    CHECK_EQ(cl->vote[1].leader, 2);
out:
    if (h->timer)
        loop_timer_cancel(cl->loop, h->timer);
    for (int i = 0; i < HOLDERS; i++)
        if (h->fds[i] >= 0)
            close(h->fds[i]);
    cluster_free(cl);
    free(cl);
    free(h);
}

/* Without reconfigEnabled no server can be added: a stranger naming an id
 * outside the config is cut off, whatever its id. */
static void test_election_strangers_without_reconfig(void)
{
    cluster_t *cl = cluster_new(3);
    if (!cl)
        return;
    cl->cfg[0].reconfig_enabled = 0;
    CHECK_EQ(cluster_start(cl, 0), 0);
    if (!cl->el[0])
        goto out;
    int fd = dial_loopback(cl->cfg[0].peers[0].election_port);
    CHECK(fd >= 0);
    buf_t hello;
    buf_init(&hello);
    put_initial(&hello, -65536, 99, "127.0.0.1:1");
    cluster_pause(cl, 50);
    if (fd >= 0) {
        CHECK_EQ(send(fd, buf_read_ptr(&hello), buf_unread(&hello), MSG_NOSIGNAL), (ssize_t)buf_unread(&hello));
        cluster_pause(cl, 300);
        CHECK(was_closed(fd));
        close(fd);
    }
    buf_free(&hello);
out:
    cluster_free(cl);
    free(cl);
}

void suite_election(void)
{
    RUN(test_election_vote_order);
    RUN(test_election_notification_roundtrip);
    RUN(test_election_notification_old_formats);
    RUN(test_election_notification_garbage);
    RUN(test_election_initial_message);
    RUN(test_election_three);
    RUN(test_election_members_named_by_host_name);
    RUN(test_election_five);
    RUN(test_election_observer);
    RUN(test_election_newer_config);
    RUN(test_election_pending_reconfig_needs_both_quorums);
    RUN(test_election_pending_reconfig_adds_voters);
    RUN(test_election_removed_member_rejoins);
    RUN(test_election_hostile_peers);
    RUN(test_election_strangers_without_reconfig);
    RUN(test_election_forged_max_values);
    RUN(test_handshake_room);
    RUN(test_election_held_handshakes);
}
