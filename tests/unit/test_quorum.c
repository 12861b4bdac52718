/* test_quorum.c -- quorum packets, the SNAP stream scanner, the history. */
#include "keeper/disk/history.h"
#include "keeper/zab/quorum.h"
#include "keeper/disk/snapshot.h"
#include "keeper/data/tree.h"
#include "suites.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_quorum_packet_round_trip_and_partial_input(void)
{
    buf_t b;
    buf_init(&b);
    auth_set_t auth;
    auth_set_init(&auth);
    auth_set_add(&auth, "digest", "u:hash");
    quorum_packet_write(&b, QP_REQUEST, -1, "abc", 3, &auth);
    quorum_packet_write(&b, QP_COMMIT, 0x100000007LL, NULL, -1, NULL);
    quorum_packet_t p;
    /* Every strict prefix of the first packet asks for more bytes. */
    size_t first_len = 4 + 8 + 4 + 3 + 4 + 4 + 6 + 4 + 6;
    for (size_t cut = 0; cut < first_len; cut++)
        CHECK_EQ(quorum_packet_parse(b.data, cut, &p), 0);
    long used = quorum_packet_parse(b.data, b.len, &p);
    CHECK_EQ(used, (long)first_len);
    CHECK_EQ(p.type, QP_REQUEST);
    CHECK_EQ(p.zxid, -1);
    CHECK(p.data_len == 3 && memcmp(p.data, "abc", 3) == 0);
    CHECK(p.auth.count == 1 && strcmp(p.auth.items[0].id, "u:hash") == 0);
    auth_set_free(&p.auth);
    CHECK(!p.auth_null);
    long used2 = quorum_packet_parse(b.data + used, b.len - (size_t)used, &p);
    CHECK(used2 > 0 && p.type == QP_COMMIT && p.zxid == 0x100000007LL && p.data == NULL);
    /* No auth is a null vector, count -1, as ZooKeeper writes a QuorumPacket
     * built without one; an empty set is count 0. */
    CHECK_EQ(used2, 4 + 8 + 4 + 4);
    CHECK(memcmp(b.data + used + 16, "\xff\xff\xff\xff", 4) == 0);
    CHECK(p.auth_null && p.auth.count == 0);
    auth_set_free(&p.auth);
    buf_t e;
    buf_init(&e);
    auth_set_t none;
    auth_set_init(&none);
    quorum_packet_write(&e, QP_PING, 5, "", 0, &none);
    CHECK_EQ(e.len, (size_t)(4 + 8 + 4 + 4));
    CHECK(memcmp(e.data + 12, "\0\0\0\0\0\0\0\0", 8) == 0);   /* empty data, empty auth: never null */
    CHECK_EQ(quorum_packet_parse(e.data, e.len, &p), (long)e.len);
    CHECK(!p.auth_null && p.data_len == 0 && p.data != NULL);
    auth_set_free(&p.auth);
    e.data[e.len - 1] = 0xfe;   /* an authinfo count of -2 */
    e.data[e.len - 2] = e.data[e.len - 3] = e.data[e.len - 4] = 0xff;
    CHECK_EQ(quorum_packet_parse(e.data, e.len, &p), -1);
    buf_free(&e);
    /* An impossible data length is malformed, not "wait for more". */
    uint8_t bad[16] = {0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf0};
    CHECK_EQ(quorum_packet_parse(bad, sizeof(bad), &p), -1);
    auth_set_free(&auth);
    buf_free(&b);
}

static int to_buf(void *arg, const void *data, size_t len)
{
    buf_append(arg, data, len);
    return 0;
}

static void add_node(tree_t *t, const char *path, int64_t zxid, int64_t owner)
{
    txn_header_t hdr = {owner, 1, zxid, 1000, OP_CREATE};
    txn_t txn;
    txn_init(&txn, OP_CREATE);
    txn.path = strdup(path);
    txn.data = malloc(3);
    memcpy(txn.data, "xyz", 3);
    txn.data_len = 3;
    txn.acl.items = calloc(1, sizeof(acl_t));
    txn.acl.items[0].perms = PERM_ALL;
    txn.acl.items[0].scheme = strdup("world");
    txn.acl.items[0].id = strdup("anyone");
    txn.acl.count = 1;
    txn.ephemeral = owner != 0;
    txn.parent_cversion = (int32_t)zxid;
    txn_result_t r;
    tree_apply(t, &hdr, &txn, &r);
    txn_result_free(&r);
    txn_free(&txn);
}

static void test_snap_scan_finds_the_end_of_a_snapshot_stream(void)
{
    tree_t *t = tree_create(NULL);
    add_node(t, "/a", 1, 0);
    add_node(t, "/a/b", 2, 0);
    add_node(t, "/e", 3, 0x42);
    snapshot_session_t sessions[] = {{0x42, 4000}, {0x43, 6000}};
    buf_t b;
    buf_init(&b);
    CHECK_EQ(snapshot_serialize(t, sessions, 2, to_buf, &b), 0);
    size_t body = b.len;
    jute_put_string(&b, "BenWasHere");
    jute_put_int(&b, 12345);   /* the next packet's first bytes */
    /* Fed one byte at a time, it ends exactly after the signature. */
    snap_scan_t s;
    memset(&s, 0, sizeof(s));
    int rc = 0;
    for (size_t have = 0; have <= b.len && rc == 0; have++)
        rc = snap_scan(&s, b.data, have);
    CHECK_EQ(rc, 1);
    CHECK_EQ(s.body_len, body);
    CHECK_EQ(s.pos, body + 14);
    /* The body loads as the same tree. */
    tree_t *copy;
    snapshot_session_t *got;
    size_t n;
    char err[256];
    CHECK_EQ(snapshot_load_buffer(b.data, s.body_len, NULL, &copy, &got, &n, err, sizeof(err)), 0);
    CHECK_EQ(n, 2u);
    CHECK_EQ(tree_node_count(copy), tree_node_count(t));
    CHECK(tree_lookup(copy, "/a/b") != NULL);
    free(got);
    tree_destroy(copy);
    /* A wrong signature is refused. */
    memcpy(b.data + body + 4, "BenWasHera", 10);
    memset(&s, 0, sizeof(s));
    CHECK_EQ(snap_scan(&s, b.data, b.len), -1);
    /* A hostile count is refused, not waited on forever. */
    uint8_t hostile[8] = {0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0};
    memset(&s, 0, sizeof(s));
    CHECK_EQ(snap_scan(&s, hostile, sizeof(hostile)), -1);
    buf_free(&b);
    tree_destroy(t);
}

static void test_history_finds_diff_and_trunc_points(void)
{
    history_t h;
    history_init(&h, 4, 1 << 20, 10);
    txn_header_t hdr = {1, 1, 0, 0, OP_ERROR};
    txn_t txn;
    txn_init(&txn, OP_ERROR);
    int64_t zxids[] = {11, 12, 0x100000001LL, 0x100000002LL, 0x100000003LL};
    for (int i = 0; i < 5; i++) {
        hdr.zxid = zxids[i];
        history_add(&h, &hdr, &txn);
    }
    CHECK_EQ(h.count, 4u);   /* the oldest fell off */
    CHECK_EQ(h.base_zxid, 11);
    CHECK_EQ(history_last_zxid(&h), 0x100000003LL);
    CHECK_EQ(history_find(&h, 12), 0);
    CHECK_EQ(history_find(&h, 13), -1);
    CHECK_EQ(history_find_before(&h, 13), 0);   /* a follower at 13 (never committed) truncates to 12 */
    CHECK_EQ(history_find_before(&h, 12), -1);
    history_truncate_after(&h, 0x100000001LL);
    CHECK_EQ(h.count, 2u);
    CHECK_EQ(history_last_zxid(&h), 0x100000001LL);
    history_free(&h);
}

/* A FOLLOWERINFO's accepted epoch is the high half of a zxid anyone on the
 * quorum port can forge: the leader takes it into the next epoch only while
 * one more epoch still makes zxids ZooKeeper reads as positive. */
static void test_quorum_epoch_bounds(void)
{
    CHECK(quorum_epoch_can_follow(0));
    CHECK(quorum_epoch_can_follow(QUORUM_EPOCH_MAX - 1));
    CHECK(zxid_make(QUORUM_EPOCH_MAX, 0) > 0);   /* the last epoch a leader may start */
    CHECK(!quorum_epoch_can_follow(QUORUM_EPOCH_MAX));
    CHECK(!quorum_epoch_can_follow(zxid_epoch(-1)));          /* 0xffffffff: next would be 2^32, zxid 0 */
    CHECK(!quorum_epoch_can_follow(zxid_epoch(INT64_MIN)));   /* 0x80000000: negative zxids */
    CHECK(!quorum_epoch_can_follow(-1));
    CHECK_EQ(zxid_epoch(INT64_MAX), QUORUM_EPOCH_MAX);
}

/* Which follower state is ahead of a leader's (ZooKeeper's isMoreRecentThan):
 * the current epoch first, then the last zxid. */
static void test_quorum_summary_order(void)
{
    CHECK(quorum_summary_more_recent(3, 0x200000005LL, 2, 0x200000009LL));    /* a later epoch */
    CHECK(quorum_summary_more_recent(2, 0x20000000aLL, 2, 0x200000009LL));    /* same epoch, later zxid */
    CHECK(!quorum_summary_more_recent(2, 0x200000009LL, 2, 0x200000009LL));   /* the same */
    CHECK(!quorum_summary_more_recent(2, 0x300000001LL, 3, 0x200000009LL));   /* an uncommitted tail of an older epoch */
    CHECK(!quorum_summary_more_recent(1, INT64_MAX, 2, 0));
}

/* Observers are left out of every count: 3 participants and 2 observers
 * need 2 voters, and observers' acknowledgements never reach a commit. */
static void test_quorum_counts_only_participants(void)
{
    keeper_peer_t peers[5] = {{.id = 1}, {.id = 2}, {.id = 3}, {.id = 4, .observer = 1}, {.id = 5, .observer = 1}};
    CHECK_EQ(quorum_voter_count(peers, 5), 3);
    CHECK_EQ(quorum_majority(quorum_voter_count(peers, 5)), 2);
    CHECK_EQ(quorum_voter_count(peers, 3), 3);
    CHECK_EQ(quorum_majority(1), 1);
    CHECK_EQ(quorum_majority(4), 3);
    CHECK_EQ(quorum_majority(5), 3);
    int64_t acks[3] = {7, 9, 8};
    CHECK_EQ(quorum_commit_point(acks, 3, 2), 8);   /* two of three hold 8 */
    int64_t one[1] = {9};
    CHECK_EQ(quorum_commit_point(one, 1, 2), -1);   /* the leader alone: nothing commits */
    int64_t two[2] = {5, 9};
    CHECK_EQ(quorum_commit_point(two, 2, 2), 5);
}

static void make_config(ensemble_config_t *c, const int *ids, int n, const int *observers, int nobs, int64_t version)
{
    memset(c, 0, sizeof(*c));
    for (int i = 0; i < n + nobs; i++) {
        ensemble_member_t m = {0};
        m.id = i < n ? ids[i] : observers[i - n];
        snprintf(m.host, sizeof(m.host), "127.0.0.1");
        m.quorum_port = 2000 + m.id;
        m.election_port = 3000 + m.id;
        m.observer = i >= n;
        ensemble_config_put(c, &m);
    }
    c->version = version;
}

/* ZooKeeper's qvAcksetPairs: while a reconfig is pending, it and every
 * proposal after it commit only once a majority of the current voters AND
 * a majority of the new voters hold them; earlier proposals need the
 * current majority alone. Acks of servers outside a config (a server being
 * added, an observer) count only for the config they vote in. */
static void test_quorum_reconfig_two_majorities(void)
{
    ensemble_config_t cur, next, removed;
    make_config(&cur, (int[]){1, 2, 3}, 3, (int[]){9}, 1, 0x100000000LL);
    make_config(&next, (int[]){1, 2, 3, 4}, 4, NULL, 0, 0x100000005LL);
    make_config(&removed, (int[]){2, 3}, 2, NULL, 0, 0x100000005LL);
    CHECK(quorum_config_is_voter(&cur, 1));
    CHECK(!quorum_config_is_voter(&cur, 9));   /* an observer */
    CHECK(!quorum_config_is_voter(&cur, 4));   /* not a member */
    CHECK(!quorum_config_is_voter(&cur, 0));
    CHECK(!quorum_config_is_voter(&cur, -1));

    /* No reconfig pending: the current config's majority (the observer's and
     * the newcomer's acks are not counted). */
    quorum_ack_t a1[] = {{1, 0x100000007LL}, {9, 0x100000009LL}, {4, 0x100000009LL}, {2, 0x100000004LL}};
    CHECK_EQ(quorum_config_commit_point(&cur, a1, 4), 0x100000004LL);
    CHECK_EQ(quorum_reconfig_commit_point(&cur, NULL, 0, a1, 4), 0x100000004LL);
    quorum_ack_t lone[] = {{1, 0x100000007LL}, {4, 0x100000007LL}, {9, 0x100000007LL}};
    CHECK_EQ(quorum_config_commit_point(&cur, lone, 3), -1);
    /* The same server twice is one vote. */
    quorum_ack_t twice[] = {{1, 0x100000007LL}, {1, 0x100000007LL}};
    CHECK_EQ(quorum_config_commit_point(&cur, twice, 2), -1);

    /* Adding 4 (reconfig at ...05): 1 and 2 are cur's majority, but next
     * (4 voters) needs 3: the reconfig and what follows wait; what precedes
     * it commits. */
    quorum_ack_t a2[] = {{1, 0x100000007LL}, {2, 0x100000007LL}, {3, 0x100000002LL}};
    CHECK_EQ(quorum_reconfig_commit_point(&cur, &next, 0x100000005LL, a2, 3), 0x100000004LL);
    /* 4, synced as a learner without a vote, acknowledges: both majorities. */
    quorum_ack_t a3[] = {{1, 0x100000007LL}, {2, 0x100000006LL}, {3, 0x100000002LL}, {4, 0x100000007LL}};
    CHECK_EQ(quorum_reconfig_commit_point(&cur, &next, 0x100000005LL, a3, 4), 0x100000006LL);
    /* Behind the reconfig, everything needs only cur's majority. */
    quorum_ack_t a4[] = {{1, 0x100000004LL}, {2, 0x100000003LL}};
    CHECK_EQ(quorum_reconfig_commit_point(&cur, &next, 0x100000005LL, a4, 2), 0x100000003LL);

    /* Removing the leader 1: cur's majority {1, 2} is not next's {2, 3}. */
    quorum_ack_t a5[] = {{1, 0x100000006LL}, {2, 0x100000006LL}, {3, 0x100000001LL}};
    CHECK_EQ(quorum_reconfig_commit_point(&cur, &removed, 0x100000005LL, a5, 3), 0x100000004LL);
    quorum_ack_t a6[] = {{1, 0x100000006LL}, {2, 0x100000006LL}, {3, 0x100000005LL}};
    CHECK_EQ(quorum_reconfig_commit_point(&cur, &removed, 0x100000005LL, a6, 3), 0x100000005LL);

    /* The designated leader: the leader while it votes in next; else the
     * smallest voter of next that acknowledged the reconfig. */
    CHECK_EQ(quorum_designated_leader(&next, 1, 0x100000005LL, a3, 4), 1);
    CHECK_EQ(quorum_designated_leader(&removed, 1, 0x100000005LL, a6, 3), 2);
    quorum_ack_t a7[] = {{1, 0x100000006LL}, {2, 0x100000004LL}, {3, 0x100000005LL}};
    CHECK_EQ(quorum_designated_leader(&removed, 1, 0x100000005LL, a7, 3), 3);
    CHECK_EQ(quorum_designated_leader(&removed, 1, 0x100000005LL, a7, 1), -1);

    /* leader_quorum_synced's rule: do these servers hold next's majority? */
    int64_t synced[] = {1, 2, 9};
    CHECK(quorum_config_has_majority(&cur, synced, 3));
    CHECK(!quorum_config_has_majority(&next, synced, 3));
    int64_t synced4[] = {1, 2, 4, 4};
    CHECK(quorum_config_has_majority(&next, synced4, 4));
    int64_t dup[] = {1, 1, 2};
    CHECK(!quorum_config_has_majority(&next, dup, 3));
    CHECK(!quorum_config_has_majority(&removed, (int64_t[]){1, 9}, 2));
}

/* What a member does once a reconfig is active (ZooKeeper's
 * processReconfig): the designated leader, when another than the current
 * one, is led or followed at once; a leader removed or made an observer, a
 * participant made an observer (or back), a follower whose leader lost its
 * vote: an election; a removed follower follows on without a vote. */
static void test_quorum_reconfig_action(void)
{
    ensemble_config_t three, no1, one_obs, four;
    make_config(&three, (int[]){1, 2, 3}, 3, NULL, 0, 0x100000000LL);
    make_config(&no1, (int[]){2, 3}, 2, NULL, 0, 0x100000005LL);
    make_config(&one_obs, (int[]){2, 3}, 2, (int[]){1}, 1, 0x100000005LL);
    make_config(&four, (int[]){1, 2, 3, 4}, 4, NULL, 0, 0x100000005LL);
    /* Adding 4: nothing changes for anyone, 4 included (it starts voting). */
    CHECK_EQ(quorum_reconfig_action('L', 1, 1, &three, &four, 1), QUORUM_STAY);
    CHECK_EQ(quorum_reconfig_action('F', 2, 1, &three, &four, 1), QUORUM_STAY);
    CHECK_EQ(quorum_reconfig_action('F', 4, 1, &three, &four, 1), QUORUM_STAY);
    /* Removing the leader 1, which designated 2: 1 and 3 hand off to 2, and 2 leads. */
    CHECK_EQ(quorum_reconfig_action('L', 1, 1, &three, &no1, 2), QUORUM_HAND_OFF);
    CHECK_EQ(quorum_reconfig_action('F', 3, 1, &three, &no1, 2), QUORUM_HAND_OFF);
    CHECK_EQ(quorum_reconfig_action('F', 2, 1, &three, &no1, 2), QUORUM_HAND_OFF);
    /* The same with no designated leader named (NEWLEADER's config): elect. */
    CHECK_EQ(quorum_reconfig_action('L', 1, 1, &three, &no1, -1), QUORUM_ELECT);
    CHECK_EQ(quorum_reconfig_action('F', 3, 1, &three, &no1, -1), QUORUM_ELECT);
    CHECK_EQ(quorum_reconfig_action('L', 1, 1, &three, &one_obs, -1), QUORUM_ELECT);
    /* Removing a follower: it stays, without a vote; the others too. */
    CHECK_EQ(quorum_reconfig_action('F', 1, 3, &three, &no1, 3), QUORUM_STAY);
    CHECK_EQ(quorum_reconfig_action('L', 3, 3, &three, &no1, 3), QUORUM_STAY);
    /* A follower made an observer, or back, starts again as that. */
    CHECK_EQ(quorum_reconfig_action('F', 1, 3, &three, &one_obs, 3), QUORUM_ELECT);
    CHECK_EQ(quorum_reconfig_action('F', 1, 3, &one_obs, &three, 3), QUORUM_ELECT);
    /* No designated leader: a follower whose leader's quorum address moved
     * elects (to reach it there), as ZooKeeper's processReconfig; a moved
     * election port alone changes nothing. */
    ensemble_config_t moved = three, moved_election = three;
    moved.members[0].quorum_port = 2999;
    moved_election.members[0].election_port = 3999;
    moved.version = moved_election.version = 0x100000005LL;
    CHECK_EQ(quorum_reconfig_action('F', 2, 1, &three, &moved, -1), QUORUM_ELECT);
    CHECK_EQ(quorum_reconfig_action('F', 2, 1, &three, &moved_election, -1), QUORUM_STAY);
    CHECK_EQ(quorum_reconfig_action('F', 2, 1, &three, &four, -1), QUORUM_STAY);
    snprintf(moved.members[0].host, sizeof(moved.members[0].host), "10.0.0.1");
    moved.members[0].quorum_port = 2001;
    CHECK_EQ(quorum_reconfig_action('F', 2, 1, &three, &moved, -1), QUORUM_ELECT);
    /* Looking: nothing to leave. */
    CHECK_EQ(quorum_reconfig_action('-', 1, 1, &three, &no1, 2), QUORUM_STAY);
}

void suite_quorum(void)
{
    RUN(test_quorum_packet_round_trip_and_partial_input);
    RUN(test_snap_scan_finds_the_end_of_a_snapshot_stream);
    RUN(test_history_finds_diff_and_trunc_points);
    RUN(test_quorum_epoch_bounds);
    RUN(test_quorum_summary_order);
    RUN(test_quorum_counts_only_participants);
    RUN(test_quorum_reconfig_two_majorities);
    RUN(test_quorum_reconfig_action);
}
