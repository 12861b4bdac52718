/* test_session.c -- session ids, ZooKeeper-compatible passwords, expiry. */
#include "keeper/data/session.h"
#include "suites.h"
#include "unit.h"

#include <stdio.h>

static void hex16(const uint8_t p[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", p[i]);
}

/* Vectors computed with java.util.Random(id ^ 0xB3415C00L).nextBytes(16),
 * which is what Apache ZooKeeper hands out for these session ids. */
static void test_session_password_matches_zookeeper(void)
{
    struct {
        int64_t id;
        const char *hex;
    } vectors[] = {
        {0x100000a1b2c3d4LL, "4fd50b1138411e44fb15fa2ed39a2bea"},
        {0x0a229c5d3f40000LL, "2e0c99e023b5180dbc5d87c4a419cc52"},
        {-5, "d47144b5e45e45c49c3b7fdcd66257ba"},
    };
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        uint8_t p[16];
        char hex[33];
        session_password(vectors[i].id, p);
        hex16(p, hex);
        CHECK_STR(hex, vectors[i].hex);
    }
}

static void test_session_ids_carry_server_id_and_are_unique(void)
{
    session_tracker_t *st = session_tracker_create(7, 100, 1795997160816ull);
    int64_t a = session_next_id(st), b = session_next_id(st);
    CHECK(a != b);
    CHECK_EQ((uint64_t)a >> 56, 7u);
    CHECK_EQ((uint64_t)b >> 56, 7u);
    CHECK(session_add(st, a, 1000, 0) != NULL);
    CHECK(session_next_id(st) != a);
    session_tracker_destroy(st);
}

static int expired_count;
static void count_expired(session_t *s, void *arg)
{
    (void)arg;
    (void)s;
    expired_count++;
}

static void test_session_expiry_rounds_to_ticks_and_touch_extends(void)
{
    session_tracker_t *st = session_tracker_create(0, 100, 1);
    session_t *s = session_add(st, 42, 250, 1000);
    CHECK(s != NULL);
    /* 1000 + 250 = 1250, rounded up to the next tick boundary: 1300. */
    CHECK_EQ(s->expires_at_ms, 1300u);
    expired_count = 0;
    session_each_expired(st, 1299, count_expired, NULL);
    CHECK_EQ(expired_count, 0);
    CHECK_EQ(session_touch(st, 42, 1200), 0);   /* now 1200 + 250 -> 1500 */
    session_each_expired(st, 1300, count_expired, NULL);
    CHECK_EQ(expired_count, 0);
    session_each_expired(st, 1500, count_expired, NULL);
    CHECK_EQ(expired_count, 1);
    s->closing = 1;   /* a closing session is neither touched nor expired again */
    CHECK_EQ(session_touch(st, 42, 1600), -1);
    expired_count = 0;
    session_each_expired(st, 5000, count_expired, NULL);
    CHECK_EQ(expired_count, 0);
    CHECK_EQ(session_touch(st, 99, 1600), -1);   /* unknown */
    session_tracker_destroy(st);
}

static void test_session_table_grows_and_removes(void)
{
    session_tracker_t *st = session_tracker_create(1, 10, 1);
    for (int64_t i = 1; i <= 5000; i++)
        CHECK(session_add(st, i, 100, 0) != NULL);
    CHECK_EQ(session_count(st), 5000u);
    for (int64_t i = 1; i <= 5000; i += 2)
        session_remove(st, i);
    CHECK_EQ(session_count(st), 2500u);
    CHECK(session_find(st, 1) == NULL);
    CHECK(session_find(st, 2) != NULL);
    CHECK_EQ(session_find(st, 5000)->timeout_ms, 100);
    session_tracker_destroy(st);
}

void suite_session(void)
{
    RUN(test_session_password_matches_zookeeper);
    RUN(test_session_ids_carry_server_id_and_are_unique);
    RUN(test_session_expiry_rounds_to_ticks_and_touch_extends);
    RUN(test_session_table_grows_and_removes);
}
