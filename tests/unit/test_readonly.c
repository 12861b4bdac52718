/* test_readonly.c -- read-only mode's rules (src/keeper/server/readonly.c):
 * which requests it refuses, as ZooKeeper's ReadOnlyRequestProcessor does,
 * and its grace period. */
#include "keeper/server/keeper_impl.h"
#include "keeper/data/proto.h"
#include "suites.h"
#include "unit.h"

static void test_readonly_refuses_writes_and_sync(void)
{
    const int32_t refused[] = {OP_SYNC, OP_CREATE, OP_CREATE2, OP_CREATE_TTL, OP_CREATE_CONTAINER, OP_DELETE,
                               OP_DELETE_CONTAINER, OP_SET_DATA, OP_RECONFIG, OP_SET_ACL, OP_MULTI, OP_CHECK};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        CHECK(readonly_refuses(refused[i], 0));
        CHECK(readonly_refuses(refused[i], 1));
    }
    const int32_t served[] = {OP_EXISTS, OP_GET_DATA, OP_GET_CHILDREN, OP_GET_CHILDREN2, OP_GET_ACL, OP_PING,
                              OP_SET_WATCHES, OP_SET_WATCHES2, OP_ADD_WATCH, OP_MULTI_READ, OP_WHO_AM_I,
                              OP_REMOVE_WATCHES, OP_CHECK_WATCHES, OP_GET_EPHEMERALS, OP_GET_ALL_CHILDREN_NUMBER};
    for (size_t i = 0; i < sizeof(served) / sizeof(served[0]); i++)
        CHECK(!readonly_refuses(served[i], 0));
}

static void test_readonly_close_session_only_when_local(void)
{
    CHECK(!readonly_refuses(OP_CLOSE_SESSION, 1));
    CHECK(readonly_refuses(OP_CLOSE_SESSION, 0));   /* a session of the ensemble: not this member's to end */
}

static void test_readonly_grace_is_at_least_two_seconds(void)
{
    CHECK_EQ(readonly_grace_ms(200), 2000u);
    CHECK_EQ(readonly_grace_ms(2000), 2000u);
    CHECK_EQ(readonly_grace_ms(3000), 3000u);
}

void suite_readonly(void)
{
    RUN(test_readonly_refuses_writes_and_sync);
    RUN(test_readonly_close_session_only_when_local);
    RUN(test_readonly_grace_is_at_least_two_seconds);
}
