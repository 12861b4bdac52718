/* test_cli_consumer_groups.c -- the pure parts of `kipper consumer-groups`
 * (src/cli/consumer_groups.c, group_admin.c): the command line and its
 * refusals, --to-datetime, --topic T:P,..., each reset scenario's new offset,
 * requests read back by the broker's codec, answers made with it read, and
 * a consumer protocol assignment parsed (and refused when cut short),
 * --by-duration, --from-file's CSV and --export (src/cli/reset_plan.c), and
 * OffsetDelete's request and answer. The
 * tool against a real broker is tests/integration/test_consumer_groups_cli.py. */
#include "suites.h"
#include "unit.h"

#include "base/buf.h"
#include "broker/wire/kafka_errors.h"
#include "broker/wire/kafka_messages.h"
#include "cli/consumer_groups.h"
#include "cli/group_admin.h"

#include <stdio.h>
#include <string.h>

static int parse(cg_opts_t *o, const char *line, char *err, size_t errlen)
{
    char copy[512], *argv[32];
    int argc = 0;
    snprintf(copy, sizeof(copy), "consumer-groups %s", line);
    for (char *t = strtok(copy, " "); t && argc < 32; t = strtok(NULL, " "))
        argv[argc++] = t;
    return cg_parse_args(argc, argv, o, err, errlen);
}

static void test_cg_args(void)
{
    cg_opts_t o;
    char err[400];
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --list", err, sizeof(err)), 0);
    CHECK(o.action == CG_LIST && !o.state_given && o.timeout_ms == CG_DEFAULT_TIMEOUT_MS);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --list --state", err, sizeof(err)), 0);
    CHECK(o.state_given && o.nstates == 0);
    CHECK_EQ(parse(&o, "--bootstrap-server=h:1 --list --state stable,EMPTY", err, sizeof(err)), 0);
    CHECK(o.nstates == 2 && strcmp(o.states[0], "Stable") == 0 && strcmp(o.states[1], "Empty") == 0);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --describe --group a --group b --members --verbose", err,
                   sizeof(err)),
             0);
    CHECK(o.action == CG_DESCRIBE && o.ngroups == 2 && o.show == CG_SHOW_MEMBERS && o.verbose);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --describe --all-groups --state", err, sizeof(err)), 0);
    CHECK(o.all_groups && o.show == CG_SHOW_STATE);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --reset-offsets --group g --topic t:0,2 --topic u --shift-by -3 "
                       "--execute --timeout 900",
                   err, sizeof(err)),
             0);
    CHECK(o.action == CG_RESET && o.reset == CG_SHIFT_BY && o.value == -3 && o.execute && o.ntopics == 2 &&
          o.timeout_ms == 900);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --reset-offsets --group g --all-topics --to-datetime "
                       "2024-02-29T12:00:00.250Z --dry-run",
                   err, sizeof(err)),
             0);
    CHECK(o.reset == CG_TO_DATETIME && o.value == 1709208000250LL && o.dry_run);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --delete --group g", err, sizeof(err)), 0);
    CHECK_EQ(parse(&o, "--help", err, sizeof(err)), 1);
    static const struct {
        const char *line, *says;
    } bad[] = {
        {"--list", "--bootstrap-server is required"},
        {"--bootstrap-server h:1", "give one of"},
        {"--bootstrap-server h:1 --list --delete", "give only one of"},
        {"--bootstrap-server h:1 --list --group g", "--list takes no"},
        {"--bootstrap-server h:1 --describe", "need --group"},
        {"--bootstrap-server h:1 --describe --group g --all-groups", "either --group or --all-groups"},
        {"--bootstrap-server h:1 --describe --group g --to-earliest", "go with --reset-offsets"},
        {"--bootstrap-server h:1 --list --state Running", "is not a list of"},
        {"--bootstrap-server h:1 --reset-offsets --group g --to-earliest", "--topic T[:P,...] or --all-topics"},
        {"--bootstrap-server h:1 --reset-offsets --group g --all-topics", "needs a scenario"},
        {"--bootstrap-server h:1 --reset-offsets --group g --all-topics --to-earliest --to-latest", "only one reset"},
        {"--bootstrap-server h:1 --reset-offsets --group g --all-topics --to-offset -1", "--to-offset must be"},
        {"--bootstrap-server h:1 --reset-offsets --group g --all-topics --shift-by 1x", "--shift-by must be"},
        {"--bootstrap-server h:1 --reset-offsets --group g --all-topics --to-earliest --dry-run --execute",
         "not both"},
        {"--bootstrap-server h:1 --reset-offsets --group g --topic t: --to-earliest", "--topic must be"},
        {"--bootstrap-server h:1 --reset-offsets --group g --group h --all-topics --to-earliest", "exactly one"},
        {"--bootstrap-server h:1 --list --timeout 0", "--timeout must be"},
        {"--bootstrap-server h:1 --describe --group", "--group needs a value"},
        {"--bootstrap-server h:1 --list --zookeeper z", "unknown option '--zookeeper'"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ(parse(&o, bad[i].line, err, sizeof(err)), -1);
        if (!strstr(err, bad[i].says))
            fprintf(stderr, "  '%s' said '%s'\n", bad[i].line, err);
        CHECK(strstr(err, bad[i].says) != NULL);
    }
}

static void test_cg_datetime_and_topic(void)
{
    int64_t ms = 0;
    CHECK(cg_parse_datetime("1970-01-01T00:00:00.000Z", &ms) == 0 && ms == 0);
    CHECK(cg_parse_datetime("2024-02-29T12:00:00.250Z", &ms) == 0 && ms == 1709208000250LL);
    CHECK(cg_parse_datetime("2024-02-29T13:30:00.250+01:30", &ms) == 0 && ms == 1709208000250LL);
    CHECK(cg_parse_datetime("2024-02-29T10:00:00.250-0200", &ms) == 0 && ms == 1709208000250LL);
    CHECK(cg_parse_datetime("2024-02-29T14:00:00.250+02", &ms) == 0 && ms == 1709208000250LL);
    CHECK(cg_parse_datetime("2024-02-29T12:00:00.250", &ms) == 0);   /* the local zone */
    static const char *const bad[] = {"", "2024-02-29", "2024-02-29T12:00:00", "2024-02-29 12:00:00.000Z",
                                      "2023-02-29T12:00:00.000Z", "2024-13-01T00:00:00.000Z",
                                      "2024-01-01T24:00:00.000Z", "2024-01-01T00:00:00.000Q",
                                      "2024-01-01T00:00:00.000+1", "2024-01-01T00:00:00.0000Z", "x024-01-01T00:00:00.000Z"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ(cg_parse_datetime(bad[i], &ms), -1);

    char topic[16];
    int32_t parts[4];
    int n = -1;
    CHECK(cg_parse_topic("orders", topic, sizeof(topic), parts, 4, &n) == 0 && n == 0);
    CHECK_STR(topic, "orders");
    CHECK(cg_parse_topic("t:0,3,12", topic, sizeof(topic), parts, 4, &n) == 0 && n == 3);
    CHECK(parts[0] == 0 && parts[1] == 3 && parts[2] == 12);
    static const char *const badt[] = {"", ":1", "t:", "t:1,", "t:,1", "t:a", "t:-1", "t:1,2,3,4,5",
                                       "a-topic-name-too-long", "t:99999999999"};
    for (size_t i = 0; i < sizeof(badt) / sizeof(badt[0]); i++)
        CHECK_EQ(cg_parse_topic(badt[i], topic, sizeof(topic), parts, 4, &n), -1);
}

static void test_cg_new_offset(void)
{
    cg_opts_t o = {0};
    ga_partition_t p = {.topic = "t", .partition = 1, .committed = 7, .earliest = 3, .latest = 10, .by_time = 5};
    char note[400];
    int64_t out = -9;
    static const struct {
        cg_reset_t reset;
        int64_t value, want;
        const char *note;
    } cases[] = {
        {CG_TO_EARLIEST, 0, 3, ""},
        {CG_TO_LATEST, 0, 10, ""},
        {CG_TO_CURRENT, 0, 7, ""},
        {CG_TO_DATETIME, 1234, 5, ""},
        {CG_TO_OFFSET, 4, 4, ""},
        {CG_TO_OFFSET, 99, 10, "New offset (99) is higher than latest offset for topic partition t-1. Value will be "
                               "set to 10"},
        {CG_TO_OFFSET, 0, 3, "New offset (0) is lower than earliest offset for topic partition t-1. Value will be "
                             "set to 3"},
        {CG_SHIFT_BY, -2, 5, ""},
        {CG_SHIFT_BY, 100, 10, "New offset (107) is higher"},
        {CG_SHIFT_BY, INT64_MAX, 10, "is higher"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        o.reset = cases[i].reset;
        o.value = cases[i].value;
        CHECK(cg_new_offset(&o, &p, &out, note, sizeof(note)) == 0 && out == cases[i].want);
        CHECK(cases[i].note[0] ? strstr(note, cases[i].note) != NULL : note[0] == 0);
    }
    /* no record at or after the time: the end; nothing committed: to-current takes the end */
    p.by_time = -1;
    p.committed = -1;
    o.reset = CG_TO_DATETIME;
    CHECK(cg_new_offset(&o, &p, &out, note, sizeof(note)) == 0 && out == 10);
    o.reset = CG_TO_CURRENT;
    CHECK(cg_new_offset(&o, &p, &out, note, sizeof(note)) == 0 && out == 10);
    o.reset = CG_SHIFT_BY;
    CHECK_EQ(cg_new_offset(&o, &p, &out, note, sizeof(note)), -1);
    CHECK(strstr(note, "Cannot shift offset for partition t-1 since there is no current committed offset") != NULL);
    p.latest = -1;
    p.error = KERR_NOT_LEADER_OR_FOLLOWER;
    o.reset = CG_TO_EARLIEST;
    CHECK_EQ(cg_new_offset(&o, &p, &out, note, sizeof(note)), -1);
    CHECK(strstr(note, "NOT_LEADER_OR_FOLLOWER") != NULL);
}

/* A request as the broker reads it: encoded, then decoded by its codec. */
static kafka_value_t *as_broker_reads(const kafka_value_t *body, int16_t key, int16_t version, buf_t *b,
                                      kafka_arena_t *d)
{
    buf_init(b);
    kafka_request_t r;
    CHECK_EQ(kafka_request_encode(b, kafka_api_find(key), version, 5, "cg", body), KAFKA_OK);
    kafka_arena_init(d, kafka_decode_budget(b->len));
    CHECK_EQ(kafka_request_decode(b->data + 4, b->len - 4, d, &r), KAFKA_OK);
    CHECK(r.api_key == key && r.api_version == version);
    return r.body;
}

static void test_ga_requests(void)
{
    kafka_arena_t a, d;
    buf_t b;
    kafka_arena_init(&a, 0);
    ga_partitions_t ps = {0};
    ga_partitions_get(&ps, "b", 1);
    ga_partitions_get(&ps, "a", 2);
    ga_partitions_get(&ps, "a", 0);
    CHECK(ps.n == 3 && strcmp(ps.v[0].topic, "a") == 0 && ps.v[0].partition == 0 && ps.v[2].partition == 1);
    CHECK(ga_partitions_get(&ps, "a", 2) == &ps.v[1] && ps.n == 3);

    int which[] = {0, 1, 2};
    kafka_value_t *r = as_broker_reads(ga_list_offsets_request(&a, &ps, which, 3, GA_EARLIEST),
                                       KAFKA_API_LIST_OFFSETS, GA_LIST_OFFSETS_VERSION, &b, &d);
    const kafka_value_t *topics = KV_GET(r, ListOffsetsRequest, Topics);
    CHECK(KV_INT(r, ListOffsetsRequest, ReplicaId) == -1 && topics->n == 2);
    const kafka_value_t *pa = KV_GET(kv_at(topics, 0), ListOffsetsTopic, Partitions);
    CHECK(pa->n == 2 && KV_INT(kv_at(pa, 1), ListOffsetsPartition, PartitionIndex) == 2 &&
          KV_INT(kv_at(pa, 1), ListOffsetsPartition, Timestamp) == GA_EARLIEST);
    kafka_arena_free(&d);
    buf_free(&b);

    int64_t offsets[] = {4, -1, 9};   /* a-2 is left out */
    r = as_broker_reads(ga_offset_commit_request(&a, "g", &ps, offsets), KAFKA_API_OFFSET_COMMIT,
                        GA_OFFSET_COMMIT_VERSION, &b, &d);
    CHECK_STR(KV_STR(r, OffsetCommitRequest, GroupId), "g");
    CHECK(KV_INT(r, OffsetCommitRequest, GenerationIdOrMemberEpoch) == -1);
    CHECK_STR(KV_STR(r, OffsetCommitRequest, MemberId), "");
    topics = KV_GET(r, OffsetCommitRequest, Topics);
    CHECK(topics->n == 2 && KV_GET(kv_at(topics, 0), OffsetCommitRequestTopic, Partitions)->n == 1);
    CHECK(KV_INT(kv_at(KV_GET(kv_at(topics, 1), OffsetCommitRequestTopic, Partitions), 0),
                 OffsetCommitRequestPartition, CommittedOffset) == 9);
    kafka_arena_free(&d);
    buf_free(&b);

    r = as_broker_reads(ga_delete_groups_request(&a, "gone"), KAFKA_API_DELETE_GROUPS, GA_DELETE_GROUPS_VERSION, &b,
                        &d);
    CHECK(KV_GET(r, DeleteGroupsRequest, GroupsNames)->n == 1);
    CHECK_STR(kv_at(KV_GET(r, DeleteGroupsRequest, GroupsNames), 0)->u.s, "gone");
    kafka_arena_free(&d);
    buf_free(&b);

    const char *states[] = {"Stable", "Empty"};
    r = as_broker_reads(ga_list_groups_request(&a, states, 2), KAFKA_API_LIST_GROUPS, GA_LIST_GROUPS_VERSION, &b, &d);
    CHECK(KV_GET(r, ListGroupsRequest, StatesFilter)->n == 2);
    kafka_arena_free(&d);
    buf_free(&b);

    r = as_broker_reads(ga_offset_fetch_request(&a, "g"), KAFKA_API_OFFSET_FETCH, GA_OFFSET_FETCH_VERSION, &b, &d);
    CHECK(KV_GET(r, OffsetFetchRequest, Topics)->is_null);
    kafka_arena_free(&d);
    buf_free(&b);

    const char *want[] = {"x"};
    r = as_broker_reads(ga_metadata_request(&a, want, 1), KAFKA_API_METADATA, GA_METADATA_VERSION, &b, &d);
    CHECK(KV_INT(r, MetadataRequest, AllowAutoTopicCreation) == 0 && KV_GET(r, MetadataRequest, Topics)->n == 1);
    kafka_arena_free(&d);
    buf_free(&b);
    ga_partitions_free(&ps);
    kafka_arena_free(&a);
}

/* A consumer protocol assignment: version 1, t -> [2, 0]. */
static const uint8_t ASSIGNMENT[] = {0, 1, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0,
                                     0xff, 0xff, 0xff, 0xff};

static void test_ga_answers(void)
{
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    /* DescribeGroups: one member with two partitions */
    kafka_value_t *ans = KV_NEW(&a, DescribeGroupsResponse);
    kafka_value_t *g = kv_at(KV_SET_ARRAY(&a, ans, DescribeGroupsResponse, Groups, 1), 0);
    KV_SET_STR(&a, g, DescribedGroup, GroupState, "Stable");
    KV_SET_STR(&a, g, DescribedGroup, ProtocolData, "range");
    kafka_value_t *m = kv_at(KV_SET_ARRAY(&a, g, DescribedGroup, Members, 1), 0);
    KV_SET_STR(&a, m, DescribedGroupMember, MemberId, "c-1");
    KV_SET_STR(&a, m, DescribedGroupMember, ClientId, "c");
    KV_SET_STR(&a, m, DescribedGroupMember, ClientHost, "/127.0.0.1");
    KV_SET_BYTES(m, DescribedGroupMember, MemberAssignment, ASSIGNMENT, sizeof(ASSIGNMENT));
    ga_group_t out;
    CHECK_EQ(ga_describe_groups_answer(ans, &out), 0);
    CHECK(out.nmembers == 1 && out.members[0].assigned.n == 2 && out.members[0].assigned.v[0].partition == 0);
    CHECK(strcmp(out.state, "Stable") == 0 && strcmp(out.protocol, "range") == 0 && !out.members[0].instance_id);
    ga_group_free(&out);
    /* an assignment cut anywhere is refused, never overread */
    for (size_t len = 1; len < sizeof(ASSIGNMENT) - 4; len++) {
        ga_partitions_t ps = {0};
        CHECK_EQ(ga_parse_assignment(ASSIGNMENT, len, &ps), -1);
        ga_partitions_free(&ps);
    }

    /* OffsetFetch: offsets kept, -1 and errors left out; a group error */
    ans = KV_NEW(&a, OffsetFetchResponse);
    kafka_value_t *t = kv_at(KV_SET_ARRAY(&a, ans, OffsetFetchResponse, Topics, 1), 0);
    KV_SET_STR(&a, t, OffsetFetchResponseTopic, Name, "t");
    kafka_value_t *parts = KV_SET_ARRAY(&a, t, OffsetFetchResponseTopic, Partitions, 3);
    for (uint32_t i = 0; i < 3; i++) {
        KV_SET_INT(kv_at(parts, i), OffsetFetchResponsePartition, PartitionIndex, i);
        KV_SET_INT(kv_at(parts, i), OffsetFetchResponsePartition, CommittedOffset, i == 1 ? -1 : 40 + (int64_t)i);
        KV_SET_INT(kv_at(parts, i), OffsetFetchResponsePartition, ErrorCode,
                   i == 2 ? KERR_UNKNOWN_TOPIC_OR_PARTITION : 0);
    }
    ga_partitions_t ps = {0};
    CHECK_EQ(ga_offset_fetch_answer(ans, &ps), KERR_NONE);
    CHECK(ps.n == 1 && ps.v[0].partition == 0 && ps.v[0].committed == 40);
    KV_SET_INT(ans, OffsetFetchResponse, ErrorCode, KERR_COORDINATOR_LOAD_IN_PROGRESS);
    CHECK_EQ(ga_offset_fetch_answer(ans, &ps), KERR_COORDINATOR_LOAD_IN_PROGRESS);

    /* ListOffsets: the latest offsets, and a partition's error */
    ga_partitions_get(&ps, "t", 1);
    ans = KV_NEW(&a, ListOffsetsResponse);
    t = kv_at(KV_SET_ARRAY(&a, ans, ListOffsetsResponse, Topics, 1), 0);
    KV_SET_STR(&a, t, ListOffsetsTopicResponse, Name, "t");
    parts = KV_SET_ARRAY(&a, t, ListOffsetsTopicResponse, Partitions, 2);
    KV_SET_INT(kv_at(parts, 0), ListOffsetsPartitionResponse, Offset, 50);
    KV_SET_INT(kv_at(parts, 1), ListOffsetsPartitionResponse, PartitionIndex, 1);
    KV_SET_INT(kv_at(parts, 1), ListOffsetsPartitionResponse, ErrorCode, KERR_NOT_LEADER_OR_FOLLOWER);
    ga_list_offsets_answer(ans, &ps, GA_LATEST);
    CHECK(ps.v[0].latest == 50 && ps.v[0].earliest == -1);
    CHECK(ps.v[1].latest == -1 && ps.v[1].error == KERR_NOT_LEADER_OR_FOLLOWER);
    ga_partitions_free(&ps);

    /* ListGroups of two brokers: sorted, each once */
    ga_listing_t l = {0};
    const char *ids[2][2] = {{"b", "a"}, {"c", "a"}};
    for (int k = 0; k < 2; k++) {
        ans = KV_NEW(&a, ListGroupsResponse);
        kafka_value_t *gs = KV_SET_ARRAY(&a, ans, ListGroupsResponse, Groups, 2);
        for (uint32_t i = 0; i < 2; i++) {
            KV_SET_STR(&a, kv_at(gs, i), ListedGroup, GroupId, ids[k][i]);
            KV_SET_STR(&a, kv_at(gs, i), ListedGroup, GroupState, "Empty");
        }
        CHECK_EQ(ga_list_groups_answer(ans, &l), KERR_NONE);
    }
    CHECK(l.n == 3 && strcmp(l.v[0].id, "a") == 0 && strcmp(l.v[2].id, "c") == 0);
    ga_listing_free(&l);

    /* DeleteGroups: the group's own result */
    ans = KV_NEW(&a, DeleteGroupsResponse);
    kafka_value_t *rs = KV_SET_ARRAY(&a, ans, DeleteGroupsResponse, Results, 2);
    KV_SET_STR(&a, kv_at(rs, 0), DeletableGroupResult, GroupId, "x");
    KV_SET_STR(&a, kv_at(rs, 1), DeletableGroupResult, GroupId, "g");
    KV_SET_INT(kv_at(rs, 1), DeletableGroupResult, ErrorCode, KERR_NON_EMPTY_GROUP);
    CHECK_EQ(ga_delete_groups_answer(ans, "g"), KERR_NON_EMPTY_GROUP);
    CHECK_EQ(ga_delete_groups_answer(ans, "x"), KERR_NONE);
    CHECK_EQ(ga_delete_groups_answer(ans, "y"), KERR_UNKNOWN_SERVER_ERROR);
    CHECK(strstr(ga_error_text(KERR_NON_EMPTY_GROUP), "NON_EMPTY_GROUP") != NULL);

    /* OffsetCommit: the first partition in error is named */
    ans = KV_NEW(&a, OffsetCommitResponse);
    t = kv_at(KV_SET_ARRAY(&a, ans, OffsetCommitResponse, Topics, 1), 0);
    KV_SET_STR(&a, t, OffsetCommitResponseTopic, Name, "t");
    parts = KV_SET_ARRAY(&a, t, OffsetCommitResponseTopic, Partitions, 2);
    KV_SET_INT(kv_at(parts, 1), OffsetCommitResponsePartition, PartitionIndex, 7);
    KV_SET_INT(kv_at(parts, 1), OffsetCommitResponsePartition, ErrorCode, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    char where[64];
    CHECK_EQ(ga_offset_commit_answer(ans, where, sizeof(where)), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    CHECK_STR(where, "t-7");
    kafka_arena_free(&a);
}

static void test_cg_duration(void)
{
    static const struct {
        const char *s;
        int64_t ms;
    } good[] = {{"P1D", 86400000},        {"PT1H", 3600000},     {"pt30m", 1800000},  {"PT0.5S", 500},
                {"P2DT3H4M5.006S", 183845006}, {"PT90S", 90000}, {"PT0,25S", 250},   {"PT1.999999999S", 1999},
                {"P0D", 0},           {"PT10M1S", 601000}};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int64_t ms = -1;
        CHECK_EQ(cg_parse_duration(good[i].s, &ms), 0);
        CHECK(ms == good[i].ms);
    }
    static const char *const bad[] = {"", "P", "PT", "1D", "P1H", "PT1D", "PT1M1H", "P-1D", "PT1.S2", "P1DT",
                                      "PT1.0000000001S", "P99999999999999999D", "PT1H ", "P1W", "PT.5S"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ms;
        if (cg_parse_duration(bad[i], &ms) != -1)
            fprintf(stderr, "accepted duration '%s'\n", bad[i]);
        CHECK_EQ(cg_parse_duration(bad[i], &ms), -1);
    }
    cg_opts_t o;
    char err[400];
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --reset-offsets --group g --topic t --by-duration PT1M --execute", err,
                   sizeof(err)),
             0);
    CHECK(o.reset == CG_BY_DURATION && o.value == 60000);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --reset-offsets --group g --from-file f.csv --dry-run --export", err,
                   sizeof(err)),
             0);
    CHECK(o.reset == CG_FROM_FILE && strcmp(o.from_file, "f.csv") == 0 && o.export_csv && o.dry_run);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --delete-offsets --group g --topic t:0,1 --topic u", err, sizeof(err)),
             0);
    CHECK(o.action == CG_DELETE_OFFSETS && o.ntopics == 2);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --delete-offsets --group g", err, sizeof(err)), -1);
    CHECK(strstr(err, "--delete-offsets needs exactly one --group and at least one --topic") != NULL);
    CHECK_EQ(parse(&o, "--bootstrap-server h:1 --list --export", err, sizeof(err)), -1);
}

static void test_cg_reset_plan(void)
{
    ga_partitions_t ps = {0};
    char err[400];
    const char *text = "b,1,7\r\n\na,0,0\nb,0,9223372036854775807";
    CHECK_EQ(cg_parse_reset_plan(text, strlen(text), &ps, err, sizeof(err)), 0);
    CHECK(ps.n == 3 && strcmp(ps.v[0].topic, "a") == 0 && ps.v[0].planned == 0);
    CHECK(ps.v[1].partition == 0 && ps.v[1].planned == INT64_MAX && ps.v[2].planned == 7);
    /* --export writes what --from-file reads */
    int64_t offsets[] = {0, 5, 7};
    char out[256] = "";
    FILE *f = fmemopen(out, sizeof(out), "w");
    cg_export_plan(f, &ps, offsets);
    fclose(f);
    CHECK_STR(out, "a,0,0\nb,0,5\nb,1,7\n\n");
    ga_partitions_free(&ps);
    ga_partitions_t back = {0};
    CHECK_EQ(cg_parse_reset_plan(out, strlen(out), &back, err, sizeof(err)), 0);
    CHECK(back.n == 3 && back.v[1].planned == 5);
    ga_partitions_free(&back);
    static const struct {
        const char *text, *says;
    } bad[] = {{"t,0,1\nt,x,2\n", "line 2: the partition"},
               {"t,0,1\n\nt,1\n", "line 3: expected topic,partition,offset"},
               {"t,0,1,2", "line 1: expected"},
               {",0,1", "line 1: the topic"},
               {"t,0,-1", "line 1: the offset"},
               {"t,2147483648,1", "line 1: the partition"},
               {"t,0,9223372036854775808", "line 1: the offset"},
               {"t,0,1\nt,0,2", "line 2: t-0 is listed twice"},
               {"t,0, 1", "line 1: the offset"},
               {"\n\n", "no partition in the file"},
               {"", "no partition in the file"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ga_partitions_t p = {0};
        CHECK_EQ(cg_parse_reset_plan(bad[i].text, strlen(bad[i].text), &p, err, sizeof(err)), -1);
        if (!strstr(err, bad[i].says))
            fprintf(stderr, "'%s': %s\n", bad[i].text, err);
        CHECK(strstr(err, bad[i].says) != NULL);
        ga_partitions_free(&p);
    }
    /* a NUL inside a line is refused, not read past */
    ga_partitions_t p = {0};
    CHECK_EQ(cg_parse_reset_plan("t,0\0,1", 7, &p, err, sizeof(err)), -1);
    ga_partitions_free(&p);
    /* --from-file's offsets are held in the log's range like --to-offset */
    cg_opts_t o = {.reset = CG_FROM_FILE};
    ga_partition_t part = {.topic = "t", .partition = 0, .earliest = 2, .latest = 8, .planned = 20};
    int64_t v;
    char note[400];
    CHECK_EQ(cg_new_offset(&o, &part, &v, note, sizeof(note)), 0);
    CHECK(v == 8 && strstr(note, "New offset (20) is higher than latest offset") != NULL);
}

static void test_ga_offset_delete(void)
{
    kafka_arena_t a, d;
    buf_t b;
    kafka_arena_init(&a, 0);
    ga_partitions_t ps = {0};
    ga_partitions_get(&ps, "u", 0);
    ga_partitions_get(&ps, "t", 1);
    ga_partitions_get(&ps, "t", 0);
    kafka_value_t *r = as_broker_reads(ga_offset_delete_request(&a, "g", &ps), KAFKA_API_OFFSET_DELETE,
                                       GA_OFFSET_DELETE_VERSION, &b, &d);
    CHECK_STR(KV_STR(r, OffsetDeleteRequest, GroupId), "g");
    const kafka_value_t *topics = KV_GET(r, OffsetDeleteRequest, Topics);
    CHECK(topics->n == 2 && KV_GET(kv_at(topics, 0), OffsetDeleteRequestTopic, Partitions)->n == 2);
    CHECK_STR(KV_STR(kv_at(topics, 1), OffsetDeleteRequestTopic, Name), "u");
    kafka_arena_free(&d);
    buf_free(&b);
    /* per partition; one the answer leaves out is not taken as deleted */
    kafka_value_t *ans = KV_NEW(&a, OffsetDeleteResponse);
    kafka_value_t *t = kv_at(KV_SET_ARRAY(&a, ans, OffsetDeleteResponse, Topics, 1), 0);
    KV_SET_STR(&a, t, OffsetDeleteResponseTopic, Name, "t");
    kafka_value_t *parts = KV_SET_ARRAY(&a, t, OffsetDeleteResponseTopic, Partitions, 2);
    KV_SET_INT(kv_at(parts, 0), OffsetDeleteResponsePartition, PartitionIndex, 1);
    KV_SET_INT(kv_at(parts, 0), OffsetDeleteResponsePartition, ErrorCode, KERR_GROUP_SUBSCRIBED_TO_TOPIC);
    KV_SET_INT(kv_at(parts, 1), OffsetDeleteResponsePartition, PartitionIndex, 0);
    CHECK_EQ(ga_offset_delete_answer(ans, &ps), KERR_NONE);
    CHECK(ps.v[0].error == KERR_NONE && ps.v[1].error == KERR_GROUP_SUBSCRIBED_TO_TOPIC &&
          ps.v[2].error == KERR_UNKNOWN_SERVER_ERROR);
    /* a group error is every partition's */
    KV_SET_INT(ans, OffsetDeleteResponse, ErrorCode, KERR_GROUP_ID_NOT_FOUND);
    CHECK_EQ(ga_offset_delete_answer(ans, &ps), KERR_GROUP_ID_NOT_FOUND);
    CHECK(ps.v[0].error == KERR_GROUP_ID_NOT_FOUND && ps.v[2].error == KERR_GROUP_ID_NOT_FOUND);
    CHECK(strstr(ga_error_text(KERR_GROUP_SUBSCRIBED_TO_TOPIC), "actively subscribed") != NULL);
    ga_partitions_free(&ps);
    kafka_arena_free(&a);
}

void suite_cli_consumer_groups(void)
{
    RUN(test_cg_args);
    RUN(test_cg_datetime_and_topic);
    RUN(test_cg_new_offset);
    RUN(test_ga_requests);
    RUN(test_ga_answers);
    RUN(test_cg_duration);
    RUN(test_cg_reset_plan);
    RUN(test_ga_offset_delete);
}
