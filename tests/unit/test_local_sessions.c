/* test_local_sessions.c -- local sessions' rules (src/keeper/server/
 * local_sessions.c and prep_makes_ephemeral in prep.c): which requests of a
 * local session need a global one, what happens to them with and without
 * upgrading, and whose local session an id is. */
#include "keeper/server/keeper_impl.h"
#include "keeper/data/jute.h"
#include "keeper/data/proto.h"
#include "suites.h"
#include "unit.h"

static const acl_t open_acl_item = {PERM_ALL, "world", "anyone"};

static void put_create(buf_t *b, const char *path, int32_t flags)
{
    acl_list_t acl = {(acl_t *)&open_acl_item, 1};
    jute_put_string(b, path);
    jute_put_buffer(b, "x", 1);
    jute_put_acl_list(b, &acl);
    jute_put_int(b, flags);
}

static void put_op_header(buf_t *b, int32_t type, int done)
{
    jute_put_int(b, type);
    jute_put_bool(b, done);
    jute_put_int(b, -1);
}

static int single_create(int32_t type, int32_t flags)
{
    buf_t b;
    buf_init(&b);
    put_create(&b, "/a", flags);
    int r = prep_makes_ephemeral(type, b.data, b.len);
    buf_free(&b);
    return r;
}

static void test_ephemeral_creates_need_a_global_session(void)
{
    CHECK(single_create(OP_CREATE, CREATE_EPHEMERAL));
    CHECK(single_create(OP_CREATE2, CREATE_EPHEMERAL_SEQUENTIAL));
    CHECK(!single_create(OP_CREATE, CREATE_PERSISTENT));
    CHECK(!single_create(OP_CREATE2, CREATE_PERSISTENT_SEQUENTIAL));
    CHECK(!single_create(OP_CREATE_CONTAINER, CREATE_CONTAINER));
    CHECK(!single_create(OP_SET_DATA, CREATE_EPHEMERAL));   /* not a create at all */
}

static int multi_with(int32_t second_flags, int truncate)
{
    buf_t b;
    buf_init(&b);
    put_op_header(&b, OP_CREATE, 0);
    put_create(&b, "/p", CREATE_PERSISTENT);
    put_op_header(&b, OP_CREATE, 0);
    put_create(&b, "/e", second_flags);
    put_op_header(&b, -1, 1);
    int r = prep_makes_ephemeral(OP_MULTI, b.data, truncate ? b.len - 3 : b.len);
    buf_free(&b);
    return r;
}

static void test_a_multi_with_an_ephemeral_create_needs_one(void)
{
    CHECK(multi_with(CREATE_EPHEMERAL, 0));
    CHECK(!multi_with(CREATE_PERSISTENT, 0));
    CHECK(!multi_with(CREATE_EPHEMERAL, 1));   /* malformed: prep answers it, no upgrade first */
}

static void test_malformed_create_is_left_to_prep(void)
{
    const uint8_t garbage[] = {0xff, 0xff, 0xff, 0x7f, 1, 2};
    CHECK(!prep_makes_ephemeral(OP_CREATE, garbage, sizeof(garbage)));
    CHECK(!prep_makes_ephemeral(OP_CREATE, NULL, 0));
}

static void test_actions_follow_upgrading(void)
{
    CHECK_EQ(local_session_action(OP_CLOSE_SESSION, 0, 0), LOCAL_CLOSE);
    CHECK_EQ(local_session_action(OP_CLOSE_SESSION, 0, 1), LOCAL_CLOSE);
    CHECK_EQ(local_session_action(OP_CREATE, 1, 0), LOCAL_REFUSE_EPHEMERAL);
    CHECK_EQ(local_session_action(OP_CREATE, 1, 1), LOCAL_UPGRADE);
    CHECK_EQ(local_session_action(OP_CREATE, 0, 0), LOCAL_AS_USUAL);
    CHECK_EQ(local_session_action(OP_GET_DATA, 0, 1), LOCAL_AS_USUAL);
}

static void test_session_server_id_is_the_top_byte(void)
{
    CHECK_EQ(session_server_id(0x0312345678abcdefLL), 3);
    CHECK_EQ(session_server_id((int64_t)0xc8000000000000a1ULL), 200);   /* ids above 127: unsigned */
    CHECK_EQ(session_server_id(0x42), 0);                              /* a standalone keeper's */
}

void suite_local_sessions(void)
{
    RUN(test_ephemeral_creates_need_a_global_session);
    RUN(test_a_multi_with_an_ephemeral_create_needs_one);
    RUN(test_malformed_create_is_left_to_prep);
    RUN(test_actions_follow_upgrading);
    RUN(test_session_server_id_is_the_top_byte);
}
