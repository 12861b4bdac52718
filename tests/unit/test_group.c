/* test_group.c -- the group membership state machine (broker/group.c):
 * join and sync flows, rebalances on join, leave, session expiry and the
 * rebalance timeout, the initial rebalance delay, generations, errors,
 * protocol selection, KIP-394 member ids, static membership, the commit
 * check, and the placement hash. Time is passed in; nothing here waits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/group/group.h"
#include "suites.h"
#include "unit.h"

/* ---- fixture ---- */

static int nwakes;
static uint64_t woken[64];

static void on_wake(void *arg, uint64_t conn_id, uint64_t request_id)
{
    (void)arg;
    (void)conn_id;
    if (nwakes < 64)
        woken[nwakes] = request_id;
    nwakes++;
}

static int was_woken(uint64_t request_id)
{
    for (int i = 0; i < nwakes && i < 64; i++)
        if (woken[i] == request_id)
            return 1;
    return 0;
}

static groups_t *new_groups(int32_t initial_delay)
{
    group_config_t cfg = {.min_session_timeout_ms = 6000, .max_session_timeout_ms = 1800000,
                          .initial_rebalance_delay_ms = initial_delay, .max_size = 3, .max_groups = 4};
    nwakes = 0;
    return groups_new(&cfg, on_wake, NULL);
}

static const group_protocol_t RANGE[] = {{"range", (uint8_t *)"r1", 2}};
static const group_protocol_t RANGE_RR[] = {{"range", (uint8_t *)"r1", 2}, {"roundrobin", (uint8_t *)"rr", 2}};
static const group_protocol_t RR_RANGE[] = {{"roundrobin", (uint8_t *)"rr", 2}, {"range", (uint8_t *)"r1", 2}};
static const group_protocol_t RR[] = {{"roundrobin", (uint8_t *)"rr", 2}};

static uint64_t next_request = 100;

static group_join_t join_params(const char *member_id, const group_protocol_t *ps, int n)
{
    group_join_t p = {.group_id = "g", .group_id_len = 1, .member_id = member_id, .client_id = "cli",
                      .client_host = "/127.0.0.1", .session_timeout_ms = 10000, .rebalance_timeout_ms = 20000,
                      .protocol_type = "consumer", .protocols = ps, .nprotocols = n};
    return p;
}

static group_waiter_t *join(groups_t *gs, const group_join_t *p, uint64_t now)
{
    group_waiter_t *w = group_waiter_new(GROUP_WAIT_JOIN, 1, ++next_request);
    group_join(gs, p, now, w);
    return w;
}

/* A new dynamic member through KIP-394: its id, then the join (parked or
 * answered). *id gets the member id. */
static group_waiter_t *join_new(groups_t *gs, const group_protocol_t *ps, int n, uint64_t now, char *id)
{
    group_join_t p = join_params("", ps, n);
    p.require_known_member_id = 1;
    group_waiter_t *w = join(gs, &p, now);
    CHECK(w->done && w->error == KERR_MEMBER_ID_REQUIRED);
    CHECK(w->member_id && strncmp(w->member_id, "cli-", 4) == 0 && strlen(w->member_id) == 40);
    snprintf(id, 64, "%s", w->member_id);
    group_waiter_release(w);
    p.member_id = id;
    return join(gs, &p, now);
}

static group_waiter_t *sync_req(groups_t *gs, const char *member_id, int32_t gen, const group_assignment_t *as,
                                int n, uint64_t now)
{
    group_sync_t p = {.group_id = "g", .group_id_len = 1, .generation = gen, .member_id = member_id,
                      .assignments = as, .nassignments = n};
    group_waiter_t *w = group_waiter_new(GROUP_WAIT_SYNC, 1, ++next_request);
    group_sync(gs, &p, now, w);
    return w;
}

static group_t *the_group(groups_t *gs)
{
    return groups_find(gs, "g", 1);
}

/* Two members, stable at generation 1, m1 leading with assignments "a1"/"a2". */
static groups_t *stable_pair(char *m1, char *m2)
{
    groups_t *gs = new_groups(0);
    group_waiter_t *j1 = join_new(gs, RANGE, 1, 0, m1);
    CHECK(j1->done && j1->error == 0 && j1->generation == 1);   /* delay 0: a group of one at once */
    group_waiter_release(j1);
    group_waiter_t *j2 = join_new(gs, RANGE, 1, 10, m2);
    CHECK(!j2->done && the_group(gs)->state == GROUP_PREPARING_REBALANCE);
    group_join_t p = join_params(m1, RANGE, 1);
    j1 = join(gs, &p, 20);   /* the leader rejoins: everyone is in */
    CHECK(j1->done && j2->done && j1->generation == 2 && j2->generation == 2);
    CHECK(j1->nmembers == 2 && j2->nmembers == 0);
    CHECK_STR(j1->leader, m1);
    CHECK_STR(j2->leader, m1);
    group_assignment_t as[] = {{m1, (uint8_t *)"a1", 2}, {m2, (uint8_t *)"a2", 2}};
    group_waiter_t *s2 = sync_req(gs, m2, 2, NULL, 0, 30);
    CHECK(!s2->done);
    group_waiter_t *s1 = sync_req(gs, m1, 2, as, 2, 40);
    CHECK(s1->done && s2->done && s1->error == 0 && s2->error == 0);
    CHECK(s2->assignment_len == 2 && memcmp(s2->assignment, "a2", 2) == 0);
    CHECK(s1->assignment_len == 2 && memcmp(s1->assignment, "a1", 2) == 0);
    CHECK_EQ(the_group(gs)->state, GROUP_STABLE);
    group_waiter_release(j1);
    group_waiter_release(j2);
    group_waiter_release(s1);
    group_waiter_release(s2);
    return gs;
}

/* ---- tests ---- */

/* The coordinator among live broker ids, as group_service.c picks it. */
static int32_t pick(const char *group, const int32_t *ids, int n)
{
    uint32_t h = group_placement_hash(group, strlen(group));
    int32_t best = ids[0];
    for (int i = 1; i < n; i++)
        if (group_placement_score(h, ids[i]) > group_placement_score(h, best))
            best = ids[i];
    return best;
}

/* Rendezvous placement: the same answer whatever the order of the view; a
 * broker leaving moves only its own groups, a broker joining takes only
 * groups and takes them from everyone; the groups spread evenly. */
static void test_group_placement_moves_only_what_it_must(void)
{
    const int32_t three[] = {1, 2, 3}, reversed[] = {3, 2, 1}, without2[] = {1, 3}, four[] = {1, 2, 3, 4};
    int per_broker[5] = {0}, moved_on_leave = 0, moved_on_join = 0, stayed_wrongly = 0;
    const int groups = 3000;
    for (int g = 0; g < groups; g++) {
        char id[32];
        snprintf(id, sizeof(id), "group-%d", g);
        int32_t c = pick(id, three, 3);
        CHECK_EQ(pick(id, reversed, 3), c);
        per_broker[c]++;
        int32_t after_leave = pick(id, without2, 2);
        if (c != 2)
            CHECK_EQ(after_leave, c);
        moved_on_leave += after_leave != c;
        int32_t after_join = pick(id, four, 4);
        if (after_join != c) {
            moved_on_join++;
            stayed_wrongly += after_join != 4;
        }
    }
    CHECK_EQ(moved_on_leave, per_broker[2]);
    CHECK_EQ(stayed_wrongly, 0);
    for (int b = 1; b <= 3; b++)
        CHECK(per_broker[b] > groups / 3 - groups / 10 && per_broker[b] < groups / 3 + groups / 10);
    CHECK(moved_on_join > groups / 4 - groups / 10 && moved_on_join < groups / 4 + groups / 10);
    /* the id is hashed as Java hashes it: equal ids, equal hashes */
    CHECK_EQ(group_placement_hash("my-group", 8), (uint32_t)2388469534u);   /* -1906497762 as a Java int */
}

static void test_group_single_member_flow(void)
{
    groups_t *gs = new_groups(0);
    char id[64];
    group_waiter_t *j = join_new(gs, RANGE, 1, 1000, id);
    group_t *g = the_group(gs);
    CHECK(j->done && j->error == 0);
    CHECK_EQ(j->generation, 1);
    CHECK_STR(j->member_id, id);
    CHECK_STR(j->leader, id);
    CHECK_STR(j->protocol_name, "range");
    CHECK_STR(j->protocol_type, "consumer");
    CHECK(j->nmembers == 1 && j->members[0].len == 2 && memcmp(j->members[0].metadata, "r1", 2) == 0);
    CHECK_EQ(g->state, GROUP_COMPLETING_REBALANCE);
    CHECK_EQ(group_heartbeat(gs, "g", 1, id, NULL, 1, 1100), KERR_NONE);   /* allowed while syncing */
    group_assignment_t as[] = {{id, (uint8_t *)"A", 1}};
    group_waiter_t *s = sync_req(gs, id, 1, as, 1, 1200);
    CHECK(s->done && s->error == 0 && s->assignment_len == 1 && s->assignment[0] == 'A');
    CHECK_STR(s->protocol_name, "range");
    CHECK_EQ(g->state, GROUP_STABLE);
    /* SyncGroup again in Stable: the same assignment at once */
    group_waiter_t *s2 = sync_req(gs, id, 1, NULL, 0, 1300);
    CHECK(s2->done && s2->error == 0 && s2->assignment_len == 1);
    group_waiter_release(j);
    group_waiter_release(s);
    group_waiter_release(s2);
    groups_free(gs);
}

static void test_group_initial_delay(void)
{
    groups_t *gs = new_groups(3000);
    char m1[64], m2[64];
    group_waiter_t *j1 = join_new(gs, RANGE, 1, 1000, m1);
    CHECK(!j1->done);
    group_waiter_t *j2 = join_new(gs, RANGE, 1, 2000, m2);
    CHECK(!j2->done);
    groups_tick(gs, 3999);
    CHECK(!j1->done);
    /* a member arrived during the delay: another delay (up to the
     * rebalance timeout) */
    groups_tick(gs, 4000);
    CHECK(!j1->done && !j2->done);
    CHECK_EQ(groups_next_deadline(gs), 7000u);
    groups_tick(gs, 7000);
    CHECK(j1->done && j2->done && j1->generation == 1 && j2->generation == 1);
    CHECK(was_woken(j1->request_id) && was_woken(j2->request_id));
    CHECK(j1->nmembers + j2->nmembers == 2);   /* only the leader gets the list */
    group_waiter_release(j1);
    group_waiter_release(j2);
    groups_free(gs);
}

static void test_group_rebalance_on_join(void)
{
    char m1[64], m2[64], m3[64];
    groups_t *gs = stable_pair(m1, m2);
    group_t *g = the_group(gs);
    group_waiter_t *j3 = join_new(gs, RANGE, 1, 100, m3);
    CHECK(!j3->done && g->state == GROUP_PREPARING_REBALANCE);
    CHECK(was_woken(j3->request_id) == 0);
    /* the others learn it from their heartbeat, and rejoin */
    CHECK_EQ(group_heartbeat(gs, "g", 1, m1, NULL, 2, 110), KERR_REBALANCE_IN_PROGRESS);
    group_join_t p1 = join_params(m1, RANGE, 1), p2 = join_params(m2, RANGE, 1);
    group_waiter_t *j1 = join(gs, &p1, 120);
    CHECK(!j1->done);
    group_waiter_t *j2 = join(gs, &p2, 130);
    CHECK(j1->done && j2->done && j3->done);
    CHECK(was_woken(j3->request_id) && was_woken(j1->request_id));
    CHECK_EQ(j3->generation, 3);
    CHECK_EQ(g->nmembers, 3);
    CHECK_EQ(g->state, GROUP_COMPLETING_REBALANCE);
    /* a follower's SyncGroup before the leader's waits; a stale generation does not */
    group_waiter_t *old = sync_req(gs, m2, 2, NULL, 0, 140);
    CHECK(old->done && old->error == KERR_ILLEGAL_GENERATION);
    group_waiter_t *s2 = sync_req(gs, m2, 3, NULL, 0, 150);
    CHECK(!s2->done);
    /* a fourth member is one too many (group.max.size 3) */
    group_join_t p4 = join_params("", RANGE, 1);
    group_waiter_t *j4 = join(gs, &p4, 160);
    CHECK(j4->done && j4->error == KERR_GROUP_MAX_SIZE_REACHED);
    group_waiter_release(j1);
    group_waiter_release(j2);
    group_waiter_release(j3);
    group_waiter_release(j4);
    group_waiter_release(old);
    /* the parked SyncGroup's request goes away: nothing breaks */
    group_waiter_release(s2);
    group_assignment_t as[] = {{m1, (uint8_t *)"x", 1}};
    group_waiter_t *s1 = sync_req(gs, m1, 3, as, 1, 170);
    CHECK(s1->done && s1->error == 0);
    CHECK_EQ(g->state, GROUP_STABLE);
    group_waiter_release(s1);
    groups_free(gs);
}

static void test_group_rebalance_on_leave(void)
{
    char m1[64], m2[64];
    groups_t *gs = stable_pair(m1, m2);
    group_t *g = the_group(gs);
    group_leaver_t who[] = {{m2, NULL}, {"nobody", NULL}};
    int16_t errs[2];
    CHECK_EQ(group_leave(gs, "g", 1, who, 2, errs, 100), KERR_NONE);
    CHECK(errs[0] == KERR_NONE && errs[1] == KERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ(g->state, GROUP_PREPARING_REBALANCE);
    CHECK_EQ(group_heartbeat(gs, "g", 1, m2, NULL, 2, 110), KERR_UNKNOWN_MEMBER_ID);
    group_join_t p1 = join_params(m1, RANGE, 1);
    group_waiter_t *j1 = join(gs, &p1, 120);
    CHECK(j1->done && j1->generation == 3 && j1->nmembers == 1);
    /* the last member leaves: Empty, a generation later */
    group_leaver_t last[] = {{m1, NULL}};
    CHECK_EQ(group_leave(gs, "g", 1, last, 1, errs, 130), KERR_NONE);
    CHECK_EQ(g->state, GROUP_EMPTY);   /* nobody to wait for */
    CHECK_EQ(g->generation, 4);
    /* leaving a group the coordinator does not hold */
    CHECK_EQ(group_leave(gs, "other", 5, last, 1, errs, 140), KERR_NONE);
    CHECK_EQ(errs[0], KERR_UNKNOWN_MEMBER_ID);
    group_waiter_release(j1);
    groups_free(gs);
}

static void test_group_session_expiry(void)
{
    char m1[64], m2[64];
    groups_t *gs = stable_pair(m1, m2);
    group_t *g = the_group(gs);
    /* m1 heartbeats, m2 goes silent (session 10 s, last sign of life at 40) */
    for (uint64_t t = 3000; t <= 9000; t += 3000)
        CHECK_EQ(group_heartbeat(gs, "g", 1, m1, NULL, 2, t), KERR_NONE);
    groups_tick(gs, 10039);
    CHECK_EQ(g->nmembers, 2);
    groups_tick(gs, 10040);
    CHECK_EQ(g->nmembers, 1);
    CHECK_EQ(g->state, GROUP_PREPARING_REBALANCE);
    CHECK_EQ(group_heartbeat(gs, "g", 1, m1, NULL, 2, 10050), KERR_REBALANCE_IN_PROGRESS);
    group_join_t p1 = join_params(m1, RANGE, 1);
    group_waiter_t *j1 = join(gs, &p1, 10060);
    CHECK(j1->done && j1->generation == 3);
    group_waiter_release(j1);
    groups_free(gs);
}

static void test_group_rebalance_timeout(void)
{
    char m1[64], m2[64];
    groups_t *gs = stable_pair(m1, m2);
    group_t *g = the_group(gs);
    /* m1 rejoins (a leader's join forces a rebalance); m2 keeps heartbeating
     * but never rejoins: after the rebalance timeout it is dropped */
    group_join_t p1 = join_params(m1, RANGE, 1);
    group_waiter_t *j1 = join(gs, &p1, 1000);
    CHECK(!j1->done);
    for (uint64_t t = 4000; t < 21000; t += 3000)
        CHECK_EQ(group_heartbeat(gs, "g", 1, m2, NULL, 2, t), KERR_REBALANCE_IN_PROGRESS);
    groups_tick(gs, 20999);
    CHECK(!j1->done);
    groups_tick(gs, 21000);
    CHECK(j1->done && j1->generation == 3 && j1->nmembers == 1);
    CHECK(group_member_find(g, m2) == NULL);
    /* and a member that never sends SyncGroup is dropped after the timeout */
    groups_tick(gs, 41001);
    CHECK_EQ(g->nmembers, 0);
    group_waiter_release(j1);
    groups_free(gs);
}

static void test_group_errors(void)
{
    char m1[64], m2[64];
    groups_t *gs = stable_pair(m1, m2);
    group_join_t p = join_params("", RANGE, 1);
    p.session_timeout_ms = 5999;
    group_waiter_t *w = join(gs, &p, 100);
    CHECK(w->done && w->error == KERR_INVALID_SESSION_TIMEOUT);
    group_waiter_release(w);
    p = join_params("", RANGE, 1);
    p.protocol_type = "connect";
    w = join(gs, &p, 100);
    CHECK(w->done && w->error == KERR_INCONSISTENT_GROUP_PROTOCOL);
    group_waiter_release(w);
    p = join_params("", RR, 1);   /* nothing in common with the members' range */
    w = join(gs, &p, 100);
    CHECK(w->done && w->error == KERR_INCONSISTENT_GROUP_PROTOCOL);
    group_waiter_release(w);
    p = join_params("ghost", RANGE, 1);
    p.group_id = "nosuch";
    p.group_id_len = 6;
    w = join(gs, &p, 100);
    CHECK(w->done && w->error == KERR_UNKNOWN_MEMBER_ID);
    group_waiter_release(w);
    CHECK_EQ(group_heartbeat(gs, "g", 1, m1, NULL, 1, 100), KERR_ILLEGAL_GENERATION);
    CHECK_EQ(group_heartbeat(gs, "g", 1, "ghost", NULL, 2, 100), KERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ(group_heartbeat(gs, "nosuch", 6, m1, NULL, 2, 100), KERR_UNKNOWN_MEMBER_ID);
    /* SyncGroup v5's protocol type and name must match the group's */
    group_sync_t sp = {.group_id = "g", .group_id_len = 1, .generation = 2, .member_id = m2,
                       .protocol_type = "consumer", .protocol_name = "roundrobin"};
    w = group_waiter_new(GROUP_WAIT_SYNC, 1, 1);
    group_sync(gs, &sp, 100, w);
    CHECK(w->done && w->error == KERR_INCONSISTENT_GROUP_PROTOCOL);
    group_waiter_release(w);
    sp.protocol_name = "range";
    w = group_waiter_new(GROUP_WAIT_SYNC, 1, 1);
    group_sync(gs, &sp, 100, w);
    CHECK(w->done && w->error == 0 && w->assignment_len == 2);
    group_waiter_release(w);
    /* SyncGroup while preparing a rebalance */
    group_join_t p1 = join_params(m1, RANGE, 1);
    group_waiter_t *j1 = join(gs, &p1, 200);
    w = sync_req(gs, m2, 2, NULL, 0, 210);
    CHECK(w->done && w->error == KERR_REBALANCE_IN_PROGRESS);
    group_waiter_release(w);
    group_waiter_release(j1);
    groups_free(gs);
}

static void test_group_protocol_selection(void)
{
    groups_t *gs = new_groups(3000);
    group_join_t p;
    p = join_params("", RANGE_RR, 2);
    group_waiter_t *a = join(gs, &p, 1000);
    p = join_params("", RANGE_RR, 2);
    group_waiter_t *b = join(gs, &p, 1000);
    p = join_params("", RR_RANGE, 2);
    group_waiter_t *c = join(gs, &p, 1000);
    groups_tick(gs, 4000);   /* members kept arriving: one more delay */
    CHECK(!a->done);
    groups_tick(gs, 7000);
    CHECK(a->done && b->done && c->done);
    CHECK_STR(a->protocol_name, "range");   /* two votes to one */
    group_t *g = the_group(gs);
    CHECK(g->leader != NULL);
    /* every member's metadata goes to the leader for the chosen protocol */
    group_waiter_t *lead = group_is_leader(g, a->member_id) ? a : group_is_leader(g, b->member_id) ? b : c;
    CHECK_EQ(lead->nmembers, 3);
    for (int i = 0; i < lead->nmembers; i++)
        CHECK(lead->members[i].len == 2 && memcmp(lead->members[i].metadata, "r1", 2) == 0);
    group_waiter_release(a);
    group_waiter_release(b);
    group_waiter_release(c);
    groups_free(gs);

    /* only what every member supports is a candidate */
    gs = new_groups(3000);
    p = join_params("", RANGE_RR, 2);
    a = join(gs, &p, 1000);
    p = join_params("", RR, 1);
    b = join(gs, &p, 1000);
    groups_tick(gs, 4000);
    groups_tick(gs, 7000);
    CHECK_STR(a->protocol_name, "roundrobin");
    group_waiter_release(a);
    group_waiter_release(b);
    groups_free(gs);
}

static void test_group_member_id_required(void)
{
    groups_t *gs = new_groups(0);
    group_join_t p = join_params("", RANGE, 1);
    p.require_known_member_id = 1;
    group_waiter_t *w = join(gs, &p, 1000);
    CHECK(w->done && w->error == KERR_MEMBER_ID_REQUIRED);
    group_t *g = the_group(gs);
    CHECK(g->npending == 1 && g->nmembers == 0);
    char id[64];
    snprintf(id, sizeof(id), "%s", w->member_id);
    group_waiter_release(w);
    /* a pending member that never comes back expires with its session */
    groups_tick(gs, 11000);
    CHECK_EQ(g->npending, 0);
    p.member_id = id;
    w = join(gs, &p, 11001);
    CHECK(w->done && w->error == KERR_UNKNOWN_MEMBER_ID);
    group_waiter_release(w);
    /* before v4 the member is added at once */
    p = join_params("", RANGE, 1);
    w = join(gs, &p, 11002);
    CHECK(w->done && w->error == 0 && w->generation == 1);
    group_waiter_release(w);
    groups_free(gs);
}

static void test_group_static_members(void)
{
    groups_t *gs = new_groups(0);
    group_join_t p = join_params("", RANGE, 1);
    p.instance_id = "inst-1";
    p.require_known_member_id = 0;   /* static members never get MEMBER_ID_REQUIRED */
    p.supports_skip_assignment = 1;
    group_waiter_t *j = join(gs, &p, 0);
    CHECK(j->done && j->error == 0 && strncmp(j->member_id, "inst-1-", 7) == 0);
    char first[64];
    snprintf(first, sizeof(first), "%s", j->member_id);
    group_assignment_t as[] = {{first, (uint8_t *)"A", 1}};
    group_sync_t sp = {.group_id = "g", .group_id_len = 1, .generation = 1, .member_id = first,
                       .instance_id = "inst-1", .assignments = as, .nassignments = 1};
    group_waiter_t *s = group_waiter_new(GROUP_WAIT_SYNC, 1, 1);
    group_sync(gs, &sp, 10, s);
    CHECK(s->done && s->error == 0);
    group_waiter_release(j);
    group_waiter_release(s);
    group_t *g = the_group(gs);
    CHECK_EQ(g->state, GROUP_STABLE);
    /* restarted with the same instance id: a new member id, no rebalance;
     * v9 tells the leader it leads but must skip the assignment */
    j = join(gs, &p, 20);
    CHECK(j->done && j->error == 0 && j->generation == 1 && j->skip_assignment == 1);
    CHECK(strcmp(j->member_id, first) != 0);
    CHECK_STR(j->leader, j->member_id);
    CHECK_EQ(g->state, GROUP_STABLE);
    /* the old incarnation is fenced */
    CHECK_EQ(group_heartbeat(gs, "g", 1, first, "inst-1", 1, 30), KERR_FENCED_INSTANCE_ID);
    CHECK_EQ(group_heartbeat(gs, "g", 1, j->member_id, "inst-1", 1, 30), KERR_NONE);
    CHECK_EQ(group_heartbeat(gs, "g", 1, j->member_id, "inst-2", 1, 30), KERR_UNKNOWN_MEMBER_ID);
    /* the new one takes over the assignment */
    sp.member_id = j->member_id;
    sp.nassignments = 0;
    s = group_waiter_new(GROUP_WAIT_SYNC, 1, 1);
    group_sync(gs, &sp, 40, s);
    CHECK(s->done && s->error == 0 && s->assignment_len == 1 && s->assignment[0] == 'A');
    group_waiter_release(s);
    /* before v9 a returning leader is told the old leader id */
    p.supports_skip_assignment = 0;
    char second[64];
    snprintf(second, sizeof(second), "%s", j->member_id);
    group_waiter_release(j);
    j = join(gs, &p, 50);
    CHECK(j->done && j->error == 0 && j->skip_assignment == 0);
    CHECK_STR(j->leader, second);
    group_waiter_release(j);
    /* removed by instance id alone (the admin client's form) */
    group_leaver_t who[] = {{"", "inst-1"}};
    int16_t err;
    CHECK_EQ(group_leave(gs, "g", 1, who, 1, &err, 60), KERR_NONE);
    CHECK_EQ(err, KERR_NONE);
    CHECK_EQ(g->nmembers, 0);
    groups_free(gs);
}

static void test_group_commit_check(void)
{
    char m1[64], m2[64];
    groups_t *gs = stable_pair(m1, m2);
    group_t *out;
    CHECK_EQ(group_commit_check(gs, "g", 1, 2, m1, NULL, 100, &out), KERR_NONE);
    CHECK(out == the_group(gs));
    CHECK_EQ(group_commit_check(gs, "g", 1, 1, m1, NULL, 100, &out), KERR_ILLEGAL_GENERATION);
    CHECK_EQ(group_commit_check(gs, "g", 1, 2, "ghost", NULL, 100, &out), KERR_UNKNOWN_MEMBER_ID);
    /* a commit without membership to a group that has members */
    CHECK_EQ(group_commit_check(gs, "g", 1, -1, "", NULL, 100, &out), KERR_UNKNOWN_MEMBER_ID);
    /* a generation of a group the coordinator does not hold */
    CHECK_EQ(group_commit_check(gs, "h", 1, 3, "x", NULL, 100, &out), KERR_ILLEGAL_GENERATION);
    /* a simple consumer's commit creates an Empty group */
    CHECK_EQ(group_commit_check(gs, "s", 1, -1, "", NULL, 100, &out), KERR_NONE);
    CHECK(out && out->state == GROUP_EMPTY && out->nmembers == 0);
    /* during the sync: REBALANCE_IN_PROGRESS */
    group_join_t p1 = join_params(m1, RANGE, 1), p2 = join_params(m2, RANGE, 1);
    group_waiter_t *j1 = join(gs, &p1, 200), *j2 = join(gs, &p2, 200);
    CHECK_EQ(the_group(gs)->state, GROUP_COMPLETING_REBALANCE);
    CHECK_EQ(group_commit_check(gs, "g", 1, 3, m1, NULL, 210, &out), KERR_REBALANCE_IN_PROGRESS);
    group_waiter_release(j1);
    group_waiter_release(j2);
    groups_free(gs);
}

/* DeleteGroups' check: a group with members (stable or rebalancing) is
 * NON_EMPTY_GROUP; one that never existed or is already being deleted is
 * GROUP_ID_NOT_FOUND; an Empty group with offsets becomes Dead, its pending
 * member ids go, and joins, heartbeats and commits are refused until it is
 * unloaded; a member whose session expires leaves the group deletable. */
static void test_group_delete(void)
{
    char m1[64], m2[64];
    groups_t *gs = stable_pair(m1, m2);
    group_t *g = the_group(gs);
    CHECK_EQ(group_delete_begin(gs, g, 100), KERR_NON_EMPTY_GROUP);
    CHECK_EQ(g->state, GROUP_STABLE);
    group_leaver_t who[] = {{m2, NULL}};
    int16_t errs[1];
    CHECK_EQ(group_leave(gs, "g", 1, who, 1, errs, 110), KERR_NONE);
    CHECK_EQ(g->state, GROUP_PREPARING_REBALANCE);
    CHECK_EQ(group_delete_begin(gs, g, 120), KERR_NON_EMPTY_GROUP);
    /* m1 stops heartbeating: at its session timeout the group is Empty and may go */
    CHECK_EQ(group_delete_begin(gs, g, 20120), KERR_NONE);
    CHECK_EQ(g->nmembers, 0);
    CHECK_EQ(g->state, GROUP_DEAD);
    CHECK_EQ(group_delete_begin(gs, g, 20130), KERR_GROUP_ID_NOT_FOUND);
    group_join_t p = join_params("", RANGE, 1);
    group_waiter_t *j = join(gs, &p, 20140);
    CHECK(j->done && j->error == KERR_COORDINATOR_NOT_AVAILABLE);
    group_waiter_release(j);
    group_t *out;
    CHECK_EQ(group_commit_check(gs, "g", 1, -1, "", NULL, 20150, &out), KERR_COORDINATOR_NOT_AVAILABLE);
    CHECK_EQ(group_heartbeat(gs, "g", 1, m1, NULL, 3, 20160), KERR_COORDINATOR_NOT_AVAILABLE);
    groups_unload(gs, g, KERR_COORDINATOR_NOT_AVAILABLE);
    CHECK(the_group(gs) == NULL);

    /* a name with nothing behind it (DescribeGroups' Dead) */
    group_t *none = groups_create(gs, "n", 1, 0);
    CHECK_EQ(group_delete_begin(gs, none, 0), KERR_GROUP_ID_NOT_FOUND);
    CHECK_EQ(none->state, GROUP_EMPTY);
    /* a simple consumer's group: offsets only, and a KIP-394 id handed out */
    CHECK_EQ(group_commit_check(gs, "s", 1, -1, "", NULL, 0, &out), KERR_NONE);
    group_offset_store(group_offset_get(out, "t", 0), 5, -1, "");
    group_join_t ps = join_params("", RANGE, 1);
    ps.group_id = "s";
    ps.require_known_member_id = 1;
    j = join(gs, &ps, 10);
    CHECK(j->done && j->error == KERR_MEMBER_ID_REQUIRED && out->npending == 1);
    group_waiter_release(j);
    CHECK_EQ(group_delete_begin(gs, out, 20), KERR_NONE);
    CHECK(out->state == GROUP_DEAD && out->npending == 0);
    CHECK_EQ(groups_memory(gs), 0u);
    groups_free(gs);
}

static void test_group_capacity_and_unload(void)
{
    groups_t *gs = new_groups(0);   /* max_groups 4 */
    group_t *out;
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(id, sizeof(id), "s%d", i);
        CHECK_EQ(group_commit_check(gs, id, 2, -1, "", NULL, 0, &out), KERR_NONE);
    }
    CHECK_EQ(groups_count(gs), 4);
    /* idle groups make room for a new one */
    char m[64];
    group_waiter_t *j = join_new(gs, RANGE, 1, 0, m);
    CHECK(j->done && j->error == 0);
    CHECK_EQ(groups_count(gs), 4);
    group_waiter_release(j);
    /* a parked JoinGroup learns that the coordinator moved */
    group_join_t p = join_params(m, RANGE, 1);
    j = join(gs, &p, 10);   /* leader rejoin: completes at once (one member) */
    group_waiter_release(j);
    char m2[64];
    j = join_new(gs, RANGE, 1, 20, m2);
    CHECK(!j->done);
    groups_unload(gs, the_group(gs), KERR_NOT_COORDINATOR);
    CHECK(j->done && j->error == KERR_NOT_COORDINATOR);
    CHECK(the_group(gs) == NULL);
    group_waiter_release(j);
    groups_free(gs);
}

/* A JoinGroup whose request went away (client gone) still counts as joined,
 * as in Kafka: the rebalance completes, its answer is dropped, and the
 * member, which never syncs, is dropped after the rebalance timeout. */
static void test_group_join_request_gone(void)
{
    char m1[64], m2[64];
    groups_t *gs = stable_pair(m1, m2);
    group_t *g = the_group(gs);
    group_join_t p1 = join_params(m1, RANGE, 1), p2 = join_params(m2, RANGE, 1);
    group_waiter_t *j1 = join(gs, &p1, 100);
    CHECK(!j1->done);
    group_waiter_release(j1);   /* the connection closed */
    CHECK(group_member_find(g, m1)->awaiting_join);
    int before = nwakes;
    group_waiter_t *j2 = join(gs, &p2, 110);
    CHECK(j2->done && j2->error == 0 && j2->generation == 3);
    CHECK(nwakes == before + 1);   /* only j2's own wake-up: nobody else to tell */
    group_waiter_t *s2 = sync_req(gs, m2, 3, NULL, 0, 120);
    CHECK(!s2->done);
    /* m1 (the leader) never sends SyncGroup: dropped, and m2 is told to rejoin */
    groups_tick(gs, 110 + 20000 + 1);
    CHECK(group_member_find(g, m1) == NULL);
    CHECK(s2->done && s2->error == KERR_REBALANCE_IN_PROGRESS);
    CHECK_EQ(g->state, GROUP_PREPARING_REBALANCE);
    group_waiter_release(j2);
    group_waiter_release(s2);
    groups_free(gs);
}

static void test_group_offsets_cache(void)
{
    groups_t *gs = new_groups(0);
    group_t *g = groups_create(gs, "o", 1, 0);
    CHECK(group_offset_find(g, "t", 0) == NULL);
    group_offset_t *b = group_offset_get(g, "t", 1), *a = group_offset_get(g, "t", 0);
    group_offset_t *c = group_offset_get(g, "a", 5);
    CHECK(a && b && c && !a->present && a->offset == -1);
    group_offset_store(a, 42, 3, "meta");
    CHECK(group_offset_find(g, "t", 0) == a && a->present && a->offset == 42 && a->leader_epoch == 3);
    CHECK_STR(a->metadata, "meta");
    CHECK(g->noffsets == 3 && g->offsets[0] == c && g->offsets[1] == a && g->offsets[2] == b);
    groups_free(gs);
}

/* group.max.memory.bytes: members (ids, protocol metadata, assignments) of
 * every group together. A join past it is GROUP_MAX_SIZE_REACHED; what
 * members give back (leaving, expiring) makes room again, and the count
 * comes back to zero when they are gone. */
static void test_group_memory_budget(void)
{
    group_config_t cfg = {.min_session_timeout_ms = 6000, .max_session_timeout_ms = 1800000,
                          .initial_rebalance_delay_ms = 0, .max_size = 1000, .max_groups = 10,
                          .max_memory = 8192};
    groups_t *gs = groups_new(&cfg, on_wake, NULL);
    static uint8_t md[1000];
    const group_protocol_t big[] = {{"range", md, sizeof(md)}};
    char ids[16][64];
    int joined = 0;
    int16_t error = 0;
    for (int i = 0; i < 16 && !error; i++) {
        group_join_t p = join_params("", big, 1);
        group_waiter_t *w = join(gs, &p, (uint64_t)i);
        error = w->error;
        if (!error)
            snprintf(ids[joined++], 64, "%s", w->member_id);
        group_waiter_release(w);
    }
    CHECK_EQ(error, KERR_GROUP_MAX_SIZE_REACHED);
    CHECK(joined >= 4 && joined < 8);   /* a member is its metadata and a few hundred bytes more */
    CHECK(groups_memory(gs) <= cfg.max_memory);
    CHECK(groups_memory(gs) > (uint64_t)joined * sizeof(md));
    /* Pending member ids count too: one that would not fit is refused. */
    group_join_t pend = join_params("", big, 1);
    pend.require_known_member_id = 1;
    group_waiter_t *w = join(gs, &pend, 20);
    CHECK(w->done && w->error == KERR_GROUP_MAX_SIZE_REACHED);
    group_waiter_release(w);
    /* One leaves: room for one more. */
    group_leaver_t out[] = {{ids[0], NULL}};
    int16_t errs[1];
    CHECK_EQ(group_leave(gs, "g", 1, out, 1, errs, 30), KERR_NONE);
    group_join_t again = join_params("", big, 1);
    w = join(gs, &again, 40);
    CHECK(!(w->done && w->error == KERR_GROUP_MAX_SIZE_REACHED));   /* in, waiting for the rebalance */
    group_waiter_release(w);
    /* Every member's session ends (a member waiting on a rebalance lives
     * until it completes, then gets a session of its own): nothing is
     * counted any more. */
    for (uint64_t t = 1; t <= 4; t++)
        groups_tick(gs, t * 10000000);
    CHECK_EQ(the_group(gs)->nmembers, 0);
    CHECK_EQ(groups_memory(gs), 0);
    groups_free(gs);
}

/* A leader's assignment with a part over GROUP_ASSIGNMENT_MAX, or past
 * group.max.memory.bytes, is not kept: as Kafka when it cannot store a
 * group, everyone waiting gets UNKNOWN_SERVER_ERROR and the group
 * rebalances; a reasonable one afterwards is kept. */
static void test_group_assignment_bounds(void)
{
    char m1[64], m2[64];
    groups_t *gs = stable_pair(m1, m2);
    group_t *g = the_group(gs);
    uint64_t before = groups_memory(gs);
    group_join_t p1 = join_params(m1, RANGE, 1), p2 = join_params(m2, RANGE, 1);
    group_waiter_t *j1 = join(gs, &p1, 100), *j2 = join(gs, &p2, 110);
    CHECK(j1->done && j2->done && j1->generation == 3);
    size_t huge = GROUP_ASSIGNMENT_MAX + 1;
    uint8_t *a = calloc(1, huge);
    group_assignment_t as[] = {{m1, a, 1}, {m2, a, (uint32_t)huge}};
    group_waiter_t *s2 = sync_req(gs, m2, 3, NULL, 0, 120);
    CHECK(!s2->done);
    group_waiter_t *s1 = sync_req(gs, m1, 3, as, 2, 130);
    CHECK(s1->done && s1->error == KERR_UNKNOWN_SERVER_ERROR);
    CHECK(s2->done && s2->error == KERR_UNKNOWN_SERVER_ERROR);
    CHECK_EQ(g->state, GROUP_PREPARING_REBALANCE);
    CHECK(groups_memory(gs) <= before);   /* nothing of it was kept */
    group_waiter_release(j1);
    group_waiter_release(j2);
    group_waiter_release(s1);
    group_waiter_release(s2);
    /* They rejoin; a normal assignment goes through. */
    j1 = join(gs, &p1, 200);
    j2 = join(gs, &p2, 210);
    CHECK(j1->done && j2->done && j1->generation == 4);
    as[1].len = 1000;
    s1 = sync_req(gs, m1, 4, as, 2, 220);
    CHECK(s1->done && s1->error == 0 && g->state == GROUP_STABLE);
    CHECK_EQ(groups_memory(gs), before - 2 - 2 + 1 + 1000);   /* "a1", "a2" replaced */
    group_waiter_release(j1);
    group_waiter_release(j2);
    group_waiter_release(s1);
    free(a);
    groups_free(gs);
}

/* OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC: a ConsumerProtocolSubscription's
 * topics (int16 version, int32 count, int16-length names, then fields that
 * are not read). */
static void test_group_subscription(void)
{
    static const uint8_t sub[] = {0, 1, 0, 0, 0, 2, 0, 1, 't', 0, 3, 'a', 'b', 'c', 0xff, 0xff, 0xff, 0xff};
    CHECK_EQ(group_subscription_names(sub, sizeof(sub), "t"), 1);
    CHECK_EQ(group_subscription_names(sub, sizeof(sub), "abc"), 1);
    CHECK_EQ(group_subscription_names(sub, sizeof(sub), "ab"), 0);
    CHECK_EQ(group_subscription_names(sub, sizeof(sub), "u"), 0);
    /* cut anywhere inside the names: refused, never read past */
    for (uint32_t len = 0; len < 14; len++)
        CHECK_EQ(group_subscription_names(sub, len, "zz"), -1);
    static const uint8_t huge[] = {0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 1, 't'};
    CHECK_EQ(group_subscription_names(huge, sizeof(huge), "t"), -1);
    static const uint8_t negative[] = {0, 0, 0, 0, 0, 1, 0xff, 0xfe};
    CHECK_EQ(group_subscription_names(negative, sizeof(negative), "t"), -1);
    CHECK_EQ(group_subscription_names(NULL, 0, "t"), -1);
}

void suite_group(void)
{
    RUN(test_group_placement_moves_only_what_it_must);
    RUN(test_group_single_member_flow);
    RUN(test_group_initial_delay);
    RUN(test_group_rebalance_on_join);
    RUN(test_group_rebalance_on_leave);
    RUN(test_group_session_expiry);
    RUN(test_group_rebalance_timeout);
    RUN(test_group_errors);
    RUN(test_group_protocol_selection);
    RUN(test_group_member_id_required);
    RUN(test_group_static_members);
    RUN(test_group_commit_check);
    RUN(test_group_delete);
    RUN(test_group_capacity_and_unload);
    RUN(test_group_join_request_gone);
    RUN(test_group_offsets_cache);
    RUN(test_group_memory_budget);
    RUN(test_group_assignment_bounds);
    RUN(test_group_subscription);
}
