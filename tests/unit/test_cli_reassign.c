/* test_cli_reassign.c -- the pure parts of `kipper reassign`'s throttle and
 * progress (src/cli/reassign_throttle.c, reassign_progress.c) and its
 * DescribeLogDirs client (src/cli/log_dirs_client.c): --throttle's rate,
 * bytes left and catch-up rates, the request read back by the broker's
 * codec, answers made by it read (dirs in error and future replicas left
 * out, another request's answer refused), and the exchange's deadline
 * against a refusing and a silent peer. The exchange with a real broker is
 * covered by tests/integration/test_reassignment.py. */
#include "suites.h"
#include "unit.h"

#include "base/buf.h"
#include "base/clock.h"
#include "base/net.h"
#include "broker/wire/kafka_messages.h"
#include "cli/log_dirs_client.h"
#include "cli/reassign_progress.h"
#include "cli/reassign_throttle.h"

#include <stdio.h>
#include <unistd.h>

static void test_rate_parse(void)
{
    int64_t rate = 0;
    CHECK(reassign_parse_rate("1", &rate) == 0 && rate == 1);
    CHECK(reassign_parse_rate("204800", &rate) == 0 && rate == 204800);
    CHECK(reassign_parse_rate("9223372036854775807", &rate) == 0 && rate == INT64_MAX);
    static const char *const bad[] = {"", "0", "00", "-1", "+5", " 5", "5 ", "5k", "1.5", "abc", "0x10",
                                      "9223372036854775808", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rate = 7;
        CHECK(reassign_parse_rate(bad[i], &rate) < 0 && rate == 7);
    }
    CHECK(reassign_parse_rate(NULL, &rate) < 0);
}

static void test_progress_arithmetic(void)
{
    CHECK_EQ(reassign_bytes_left(1000, 400), 600);
    CHECK_EQ(reassign_bytes_left(1000, -1), 1000);     /* no log yet: nothing copied */
    CHECK_EQ(reassign_bytes_left(1000, 1200), 0);      /* ahead of an older reading of the leader */
    CHECK_EQ(reassign_bytes_left(-1, -1), 0);
    CHECK_EQ(reassign_catch_up_rate(0, 204800, 1000), 204800);
    CHECK_EQ(reassign_catch_up_rate(-1, 102400, 500), 204800);
    CHECK_EQ(reassign_catch_up_rate(5000, 4000, 1000), 0);   /* a log cut meanwhile */
    CHECK_EQ(reassign_catch_up_rate(10, 10, 1000), 0);
    CHECK_EQ(reassign_catch_up_rate(0, 100, 0), -1);
}

static log_dirs_replica_t asked[] = {{"a", 0, 0}, {"a", 3, 0}, {"b", 1, 0}};
#define NASKED ((int)(sizeof(asked) / sizeof(asked[0])))

static void test_request(void)
{
    buf_t b;
    buf_init(&b);
    CHECK_EQ(log_dirs_request(&b, 42, asked, NASKED), 0);
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    kafka_request_t r;
    CHECK(b.len > 4 && ((uint32_t)b.data[0] << 24 | (uint32_t)b.data[1] << 16 | (uint32_t)b.data[2] << 8 |
                        b.data[3]) == b.len - 4);
    CHECK_EQ(kafka_request_decode(b.data + 4, b.len - 4, &a, &r), KAFKA_OK);
    CHECK(r.api_key == KAFKA_API_DESCRIBE_LOG_DIRS && r.api_version == LOG_DIRS_VERSION && r.correlation_id == 42);
    const kafka_value_t *topics = KV_GET(r.body, DescribeLogDirsRequest, Topics);
    CHECK(!topics->is_null && topics->n == 2);
    if (topics->n == 2) {
        const kafka_value_t *pa = KV_GET(kv_at(topics, 0), DescribableLogDirTopic, Partitions);
        const kafka_value_t *pb = KV_GET(kv_at(topics, 1), DescribableLogDirTopic, Partitions);
        CHECK_STR(KV_STR(kv_at(topics, 0), DescribableLogDirTopic, Topic), "a");
        CHECK(pa->n == 2 && kv_at(pa, 0)->u.i == 0 && kv_at(pa, 1)->u.i == 3);
        CHECK_STR(KV_STR(kv_at(topics, 1), DescribableLogDirTopic, Topic), "b");
        CHECK(pb->n == 1 && kv_at(pb, 0)->u.i == 1);
    }
    kafka_arena_free(&a);
    buf_free(&b);
}

static void set_partition(kafka_value_t *parts, uint32_t i, int32_t index, int64_t size, int future)
{
    kafka_value_t *p = kv_at(parts, i);
    KV_SET_INT(p, DescribeLogDirsPartition, PartitionIndex, index);
    KV_SET_INT(p, DescribeLogDirsPartition, PartitionSize, size);
    KV_SET_INT(p, DescribeLogDirsPartition, IsFutureKey, future);
}

/* Dir 0 holds a-0 (100 bytes), a future a-3 and z-9 (not asked); dir 1
 * answers KAFKA_STORAGE_ERROR but lists b-1. */
static void answer_frame(kafka_arena_t *a, buf_t *b, int32_t correlation_id)
{
    kafka_value_t *resp = KV_NEW(a, DescribeLogDirsResponse);
    kafka_value_t *dirs = KV_SET_ARRAY(a, resp, DescribeLogDirsResponse, Results, 2);
    KV_SET_STR(a, kv_at(dirs, 0), DescribeLogDirsResult, LogDir, "/d0");
    kafka_value_t *topics = KV_SET_ARRAY(a, kv_at(dirs, 0), DescribeLogDirsResult, Topics, 2);
    KV_SET_STR(a, kv_at(topics, 0), DescribeLogDirsTopic, Name, "a");
    kafka_value_t *parts = KV_SET_ARRAY(a, kv_at(topics, 0), DescribeLogDirsTopic, Partitions, 2);
    set_partition(parts, 0, 0, 100, 0);
    set_partition(parts, 1, 3, 300, 1);
    KV_SET_STR(a, kv_at(topics, 1), DescribeLogDirsTopic, Name, "z");
    set_partition(KV_SET_ARRAY(a, kv_at(topics, 1), DescribeLogDirsTopic, Partitions, 1), 0, 9, 900, 0);
    KV_SET_INT(kv_at(dirs, 1), DescribeLogDirsResult, ErrorCode, 56);
    KV_SET_STR(a, kv_at(dirs, 1), DescribeLogDirsResult, LogDir, "/d1");
    topics = KV_SET_ARRAY(a, kv_at(dirs, 1), DescribeLogDirsResult, Topics, 1);
    KV_SET_STR(a, kv_at(topics, 0), DescribeLogDirsTopic, Name, "b");
    set_partition(KV_SET_ARRAY(a, kv_at(topics, 0), DescribeLogDirsTopic, Partitions, 1), 0, 1, 50, 0);
    CHECK_EQ(kafka_response_encode(b, kafka_api_find(KAFKA_API_DESCRIBE_LOG_DIRS), LOG_DIRS_VERSION, correlation_id,
                                   resp),
             KAFKA_OK);
}

static void test_answer(void)
{
    kafka_arena_t a;
    buf_t b;
    char err[256];
    kafka_arena_init(&a, 0);
    buf_init(&b);
    answer_frame(&a, &b, 42);
    CHECK_EQ(log_dirs_answer(b.data + 4, b.len - 4, 42, asked, NASKED, err, sizeof(err)), 0);
    CHECK_EQ(asked[0].size, 100);
    CHECK_EQ(asked[1].size, -1);   /* only a future replica */
    CHECK_EQ(asked[2].size, -1);   /* in a dir in error */
    CHECK(log_dirs_answer(b.data + 4, b.len - 4, 41, asked, NASKED, err, sizeof(err)) < 0);
    CHECK(strstr(err, "another request") != NULL);
    CHECK(log_dirs_answer(b.data + 4, b.len - 5, 42, asked, NASKED, err, sizeof(err)) < 0);
    CHECK(strstr(err, "malformed") != NULL);
    buf_free(&b);
    kafka_arena_free(&a);
}

static void test_query_deadline(void)
{
    char err[512];
    /* A listener that never accepts: the connection is taken into its
     * backlog, and the answer never comes. */
    int fd = net_listen_tcp("127.0.0.1", 0, 4, err, sizeof(err));
    CHECK(fd >= 0);
    int port = net_local_port(fd);
    uint64_t start = clock_mono_ms();
    CHECK(log_dirs_query("127.0.0.1", port, 300, asked, NASKED, err, sizeof(err)) < 0);
    uint64_t took = clock_mono_ms() - start;
    CHECK(took >= 290 && took < 3000);
    CHECK(strstr(err, "no answer in time") != NULL);
    /* Closed: refused at once. */
    close(fd);
    start = clock_mono_ms();
    CHECK(log_dirs_query("127.0.0.1", port, 2000, asked, NASKED, err, sizeof(err)) < 0);
    CHECK(clock_mono_ms() - start < 1500);
    CHECK(strstr(err, "connect") != NULL);
}

void suite_cli_reassign(void)
{
    RUN(test_rate_parse);
    RUN(test_progress_arithmetic);
    RUN(test_request);
    RUN(test_answer);
    RUN(test_query_deadline);
}
