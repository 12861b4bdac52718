/* test_coord_data.c -- coordinator paths, names, JSON documents and Kafka's
 * replica assignment (src/broker/coord/coord_data.c), and the topic config rules of
 * coord_admin.c (pure; the rest of coord_admin is covered by
 * tests/integration/test_topics_cli.py). */
#include "suites.h"
#include "unit.h"

#include "broker/coord/coord_admin.h"
#include "broker/coord/coord_data.h"

#include <stdio.h>
#include <stdlib.h>

static char err[512];

/* Parses a NUL-terminated text as the coordinator would hand it over. */
#define DOC(s) (s), strlen(s)

static void test_paths(void)
{
    char out[64];
    CHECK(coord_path_topic(out, sizeof(out), "t") > 0);
    CHECK_STR(out, "/brokers/topics/t");
    CHECK(coord_path_partition(out, sizeof(out), "t", 7) > 0);
    CHECK_STR(out, "/brokers/topics/t/7");
    CHECK(coord_path_partition_leaf(out, sizeof(out), "t", 0, "ISR") > 0);
    CHECK_STR(out, "/brokers/topics/t/0/ISR");
    CHECK(coord_path_broker(out, sizeof(out), 2147483647) > 0);
    CHECK_STR(out, "/brokers/ids/2147483647");
    /* Exactly fitting (17 characters and the NUL) works, one byte less does not. */
    CHECK_EQ(coord_path_topic(out, 18, "t"), 17);
    CHECK_EQ(coord_path_topic(out, 17, "t"), -1);
    CHECK_EQ(coord_path_partition_leaf(out, 20, "topic", 1, "replicas"), -1);
}

static void test_topic_names(void)
{
    char name[300];
    CHECK_EQ(coord_topic_name_valid("orders", err, sizeof(err)), 0);
    CHECK_EQ(coord_topic_name_valid("a.b_c-D9", err, sizeof(err)), 0);
    CHECK_EQ(coord_topic_name_valid("...", err, sizeof(err)), 0);
    memset(name, 'x', 249);
    name[249] = 0;
    CHECK_EQ(coord_topic_name_valid(name, err, sizeof(err)), 0);
    name[249] = 'x';
    name[250] = 0;
    CHECK_EQ(coord_topic_name_valid(name, err, sizeof(err)), -1);
    CHECK(strstr(err, "can't be longer than 249 characters") != NULL);
    CHECK_EQ(coord_topic_name_valid("", err, sizeof(err)), -1);
    CHECK_STR(err, "Topic name is illegal, it can't be empty");
    CHECK_EQ(coord_topic_name_valid(".", err, sizeof(err)), -1);
    CHECK_STR(err, "Topic name cannot be \".\" or \"..\"");
    CHECK_EQ(coord_topic_name_valid("..", err, sizeof(err)), -1);
    const char *bad[] = {"a/b", "a b", "a:b", "caf\xc3\xa9", "t\n", "a*"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ(coord_topic_name_valid(bad[i], err, sizeof(err)), -1);
    coord_topic_name_valid("a/b", err, sizeof(err));
    CHECK_STR(err, "Topic name \"a/b\" is illegal, it contains a character other than ASCII alphanumerics, "
                   "'.', '_' and '-'");
}

static void test_child_names(void)
{
    CHECK_EQ(coord_parse_partition_name("0"), 0);
    CHECK_EQ(coord_parse_partition_name("42"), 42);
    CHECK_EQ(coord_parse_partition_name("9999"), 9999);
    const char *bad_partitions[] = {"10000", "01", "00", "-1", "+1", "1x", "x1", "", " 1", "1 ", "leader",
                                    "99999999999999999999999"};
    for (size_t i = 0; i < sizeof(bad_partitions) / sizeof(bad_partitions[0]); i++)
        CHECK_EQ(coord_parse_partition_name(bad_partitions[i]), -1);
    CHECK_EQ(coord_parse_broker_id_name("0"), 0);
    CHECK_EQ(coord_parse_broker_id_name("2147483647"), 2147483647);
    const char *bad_ids[] = {"2147483648", "01", "-1", "1x", "", "99999999999999999999999", "0x10"};
    for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++)
        CHECK_EQ(coord_parse_broker_id_name(bad_ids[i]), -1);
}

static void test_topic_id_format_parse(void)
{
    uint8_t id[16] = {0}, back[16];
    char text[23];
    id[15] = 1;   /* Kafka's METADATA_TOPIC_ID prints as AAAAAAAAAAAAAAAAAAAAAQ */
    coord_topic_id_format(id, text);
    CHECK_STR(text, "AAAAAAAAAAAAAAAAAAAAAQ");
    memset(id, 0xff, sizeof(id));
    coord_topic_id_format(id, text);
    CHECK_STR(text, "_____________________w");
    CHECK_EQ(coord_topic_id_parse(text, back), 0);
    CHECK(memcmp(back, id, 16) == 0);
    for (int i = 0; i < 16; i++)
        id[i] = (uint8_t)(i * 17 + 3);
    coord_topic_id_format(id, text);
    CHECK_EQ(strlen(text), 22);
    CHECK_EQ(coord_topic_id_parse(text, back), 0);
    CHECK(memcmp(back, id, 16) == 0);
    const char *bad[] = {"", "AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAA+Q",
                         "AAAAAAAAAAAAAAAAAAAA/Q", "AAAAAAAAAAAAAAAAAAAAAQ==", "AAAAAAAAAAAAAAAAAAAAAB",
                         "AAAAAAAAAAAAAAAAAAAA Q"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ(coord_topic_id_parse(bad[i], back), -1);
}

static void test_topic_id_generate(void)
{
    uint8_t id[16], prev[16] = {0}, back[16], zero[16] = {0};
    char text[23];
    for (int i = 0; i < 2000; i++) {
        coord_topic_id_generate(id);
        CHECK(memcmp(id, zero, 16) != 0);
        CHECK(memcmp(id, prev, 16) != 0);
        CHECK_EQ(id[6] >> 4, 4);   /* a version-4 UUID, as Kafka's */
        coord_topic_id_format(id, text);
        CHECK_EQ(strlen(text), 22);
        CHECK(text[0] != '-');
        CHECK_EQ(coord_topic_id_parse(text, back), 0);
        CHECK(memcmp(back, id, 16) == 0);
        memcpy(prev, id, 16);
    }
}

static void test_broker_doc(void)
{
    char doc[512];
    coord_broker_t b;
    int n = coord_broker_write(doc, sizeof(doc), "h1", 9092, NULL, 1700000000123LL);
    CHECK(n > 0);
    CHECK_STR(doc, "{\"version\":4,\"host\":\"h1\",\"port\":9092,\"endpoints\":[\"PLAINTEXT://h1:9092\"],"
                   "\"timestamp\":\"1700000000123\"}");
    CHECK_EQ(coord_broker_parse(doc, (size_t)n, &b, err, sizeof(err)), 0);
    CHECK_STR(b.host, "h1");
    CHECK_EQ(b.port, 9092);
    CHECK_STR(b.rack, "");
    /* broker.rack: written as Kafka does, read back; null reads as none. */
    CHECK(coord_broker_write(doc, sizeof(doc), "h1", 9092, "r1", 0) > 0);
    CHECK(strstr(doc, "\"rack\":\"r1\"") != NULL);
    CHECK_EQ(coord_broker_parse(doc, strlen(doc), &b, err, sizeof(err)), 0);
    CHECK_STR(b.rack, "r1");
    CHECK_EQ(coord_broker_parse(DOC("{\"host\":\"h\",\"port\":1,\"rack\":null}"), &b, err, sizeof(err)), 0);
    CHECK_STR(b.rack, "");
    CHECK_EQ(coord_broker_parse(DOC("{\"host\":\"h\",\"port\":1,\"rack\":7}"), &b, err, sizeof(err)), -1);
    CHECK(coord_broker_write(doc, sizeof(doc), "::1", 1, "", 0) > 0);
    CHECK(strstr(doc, "\"PLAINTEXT://[::1]:1\"") != NULL);
    CHECK_EQ(coord_broker_write(doc, (size_t)n, "h1", 9092, NULL, 1700000000123LL), -1);   /* no room for the NUL */
    CHECK_EQ(coord_broker_write(doc, sizeof(doc), "", 9092, NULL, 0), -1);
    CHECK_EQ(coord_broker_write(doc, sizeof(doc), "h", 0, NULL, 0), -1);
    CHECK_EQ(coord_broker_write(doc, sizeof(doc), "h", 65536, NULL, 0), -1);
    CHECK_EQ(coord_broker_parse(DOC("{\"host\":\"h\",\"port\":1,\"jmx_port\":-1}"), &b, err, sizeof(err)), 0);
    const char *bad[] = {"{\"port\":1}", "{\"host\":\"h\"}", "{\"host\":1,\"port\":1}", "{\"host\":\"\",\"port\":1}",
                         "{\"host\":\"h\",\"port\":\"1\"}", "{\"host\":\"h\",\"port\":70000}",
                         "{\"host\":\"h\",\"port\":0}", "{\"host\":null,\"port\":-1}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ(coord_broker_parse(DOC(bad[i]), &b, err, sizeof(err)), -1);
    char longhost[600] = "{\"host\":\"";
    memset(longhost + 9, 'h', 300);
    strcpy(longhost + 309, "\",\"port\":1}");
    CHECK_EQ(coord_broker_parse(DOC(longhost), &b, err, sizeof(err)), -1);
}

static coord_topic_t sample_topic(void)
{
    coord_topic_t t;
    memset(&t, 0, sizeof(t));
    for (int i = 0; i < 16; i++)
        t.topic_id[i] = (uint8_t)(0xa0 + i);
    t.nconfigs = 2;
    strcpy(t.configs[0].key, "retention.ms");
    strcpy(t.configs[0].value, "1000");
    strcpy(t.configs[1].key, "cleanup.policy");
    strcpy(t.configs[1].value, "delete \"quoted\" \\ value");
    return t;
}

static void test_topic_doc(void)
{
    static char doc[COORD_DOC_MAX + 1];
    coord_topic_t t = sample_topic(), back;
    char idtext[23];
    coord_topic_id_format(t.topic_id, idtext);
    int n = coord_topic_write(doc, sizeof(doc), &t);
    CHECK(n > 0);
    char expected[512];
    snprintf(expected, sizeof(expected),
             "{\"version\":1,\"topic_id\":\"%s\",\"config\":{\"retention.ms\":\"1000\","
             "\"cleanup.policy\":\"delete \\\"quoted\\\" \\\\ value\"}}",
             idtext);
    CHECK_STR(doc, expected);
    memset(&back, 0x55, sizeof(back));
    CHECK_EQ(coord_topic_parse(doc, (size_t)n, &back, err, sizeof(err)), 0);
    CHECK(memcmp(back.topic_id, t.topic_id, 16) == 0);
    CHECK_EQ(back.nconfigs, 2);
    CHECK_STR(back.configs[0].key, "retention.ms");
    CHECK_STR(back.configs[1].value, "delete \"quoted\" \\ value");

    /* No configs; the most configs; too many. */
    t.nconfigs = 0;
    n = coord_topic_write(doc, sizeof(doc), &t);
    CHECK(n > 0 && strstr(doc, "\"config\":{}") != NULL);
    CHECK_EQ(coord_topic_parse(doc, (size_t)n, &back, err, sizeof(err)), 0);
    CHECK_EQ(back.nconfigs, 0);
    /* 64 configs with the longest values (1023 bytes) would exceed the
     * document limit; shorter ones fit. */
    t.nconfigs = COORD_MAX_TOPIC_CONFIGS;
    for (int i = 0; i < COORD_MAX_TOPIC_CONFIGS; i++) {
        snprintf(t.configs[i].key, sizeof(t.configs[i].key), "k%d", i);
        memset(t.configs[i].value, 'v', sizeof(t.configs[i].value) - 1);
        t.configs[i].value[sizeof(t.configs[i].value) - 1] = 0;
    }
    CHECK_EQ(coord_topic_write(doc, sizeof(doc), &t), -1);
    for (int i = 0; i < COORD_MAX_TOPIC_CONFIGS; i++)
        t.configs[i].value[900] = 0;
    n = coord_topic_write(doc, sizeof(doc), &t);
    CHECK(n > 0);
    CHECK_EQ(coord_topic_parse(doc, (size_t)n, &back, err, sizeof(err)), 0);
    CHECK_EQ(back.nconfigs, COORD_MAX_TOPIC_CONFIGS);
    CHECK_STR(back.configs[63].key, "k63");
    CHECK_EQ(strlen(back.configs[63].value), 900);
    t.nconfigs = COORD_MAX_TOPIC_CONFIGS + 1;
    CHECK_EQ(coord_topic_write(doc, sizeof(doc), &t), -1);

    /* The writer refuses what the parser would: no id, a name twice, an empty name. */
    t = sample_topic();
    strcpy(t.configs[1].key, "retention.ms");
    CHECK_EQ(coord_topic_write(doc, sizeof(doc), &t), -1);
    t = sample_topic();
    t.configs[0].key[0] = 0;
    CHECK_EQ(coord_topic_write(doc, sizeof(doc), &t), -1);
    t = sample_topic();
    memset(t.topic_id, 0, 16);
    CHECK_EQ(coord_topic_write(doc, sizeof(doc), &t), -1);
}

static void test_topic_doc_rejects(void)
{
    coord_topic_t t;
    const char *bad[] = {
        "{\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{}}",
        "{\"version\":1,\"config\":{}}",
        "{\"version\":\"1\",\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{}}",
        "{\"version\":0,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{}}",
        "{\"version\":1,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"config\":{}}",   /* the zero id */
        "{\"version\":1,\"topic_id\":\"short\",\"config\":{}}",
        "{\"version\":1,\"topic_id\":7,\"config\":{}}",
        "{\"version\":1,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":[]}",
        "{\"version\":1,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{\"a\":1}}",
        "{\"version\":1,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{\"\":\"x\"}}",
        "{\"version\":1,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{\"a\":\"1\",\"a\":\"2\"}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        CHECK_EQ(coord_topic_parse(DOC(bad[i]), &t, err, sizeof(err)), -1);
        CHECK(err[0] != 0);
    }
    /* Written by this version's topic creation too: no overrides, which are
     * in /config/topics now; an older kipper's document has them. */
    CHECK_EQ(coord_topic_parse(DOC("{\"version\":1,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\"}"), &t, err, sizeof(err)), 0);
    CHECK_EQ(t.nconfigs, 0);
    CHECK_EQ(coord_topic_parse(DOC("{\"version\":2,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{},"
                                   "\"later\":[1,{}]}"),
                               &t, err, sizeof(err)),
             0);
    /* A config name of 128 bytes or a value of 1024 does not fit the struct. */
    char doc[2048];
    char name[129], value[1025];
    memset(name, 'k', 128);
    name[128] = 0;
    snprintf(doc, sizeof(doc), "{\"version\":1,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{\"%s\":\"v\"}}",
             name);
    CHECK_EQ(coord_topic_parse(DOC(doc), &t, err, sizeof(err)), -1);
    memset(value, 'v', 1024);
    value[1024] = 0;
    snprintf(doc, sizeof(doc), "{\"version\":1,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{\"k\":\"%s\"}}",
             value);
    CHECK_EQ(coord_topic_parse(DOC(doc), &t, err, sizeof(err)), -1);
    /* 65 configs. */
    char *many = malloc(4096);
    int o = snprintf(many, 4096, "{\"version\":1,\"topic_id\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"config\":{");
    for (int i = 0; i <= COORD_MAX_TOPIC_CONFIGS; i++)
        o += snprintf(many + o, (size_t)(4096 - o), "%s\"k%d\":\"v\"", i ? "," : "", i);
    snprintf(many + o, (size_t)(4096 - o), "}}");
    CHECK_EQ(coord_topic_parse(DOC(many), &t, err, sizeof(err)), -1);
    free(many);
}

static void test_replicas_doc(void)
{
    char doc[1024];
    int32_t replicas[COORD_MAX_REPLICAS + 1], back[COORD_MAX_REPLICAS];
    int n = 0;
    replicas[0] = 2;
    replicas[1] = 1;
    replicas[2] = 2147483647;
    int len = coord_replicas_write(doc, sizeof(doc), replicas, 3);
    CHECK(len > 0);
    CHECK_STR(doc, "{\"replicas\":[2,1,2147483647]}");
    CHECK_EQ(coord_replicas_parse(doc, (size_t)len, back, &n, err, sizeof(err)), 0);
    CHECK_EQ(n, 3);
    CHECK(back[0] == 2 && back[1] == 1 && back[2] == 2147483647);
    for (int i = 0; i <= COORD_MAX_REPLICAS; i++)
        replicas[i] = i;
    len = coord_replicas_write(doc, sizeof(doc), replicas, COORD_MAX_REPLICAS);
    CHECK(len > 0);
    CHECK_EQ(coord_replicas_parse(doc, (size_t)len, back, &n, err, sizeof(err)), 0);
    CHECK_EQ(n, COORD_MAX_REPLICAS);
    CHECK_EQ(coord_replicas_write(doc, sizeof(doc), replicas, COORD_MAX_REPLICAS + 1), -1);
    CHECK_EQ(coord_replicas_write(doc, sizeof(doc), replicas, 0), -1);
    replicas[1] = 0;
    CHECK_EQ(coord_replicas_write(doc, sizeof(doc), replicas, 2), -1);   /* duplicate */
    replicas[1] = -1;
    CHECK_EQ(coord_replicas_write(doc, sizeof(doc), replicas, 2), -1);

    const char *bad[] = {
        "{\"replicas\":[1,2,1]}",    "{\"replicas\":[-1]}",        "{\"replicas\":[2147483648]}",
        "{\"replicas\":[99999999999999999999999]}",                  "{\"replicas\":[1.0]}",
        "{\"replicas\":[\"1\"]}",    "{\"replicas\":[]}",          "{\"replicas\":1}",
        "{\"replicas\":null}",       "{\"replica\":[1]}",          "[1,2]",
        "{\"replicas\":[1]} x",      "{\"replicas\":[1]}{}",       "{\"replicas\":[1],\"replicas\":[2]}",
        "not json",                  "",                           "{\"replicas\":[true]}",
        "\"replicas\"",              "{\"replicas\":[1,]}",        "{\"replicas\":[[1]]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        CHECK_EQ(coord_replicas_parse(DOC(bad[i]), back, &n, err, sizeof(err)), -1);
        CHECK(err[0] != 0);
    }
    CHECK_EQ(coord_replicas_parse(NULL, 0, back, &n, err, sizeof(err)), -1);
    /* 65 entries. */
    char many[512] = "{\"replicas\":[0";
    for (int i = 1; i <= COORD_MAX_REPLICAS; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), ",%d", i);
    strcat(many, "]}");
    CHECK_EQ(coord_replicas_parse(DOC(many), back, &n, err, sizeof(err)), -1);
    /* NUL inside the data is not JSON. */
    CHECK_EQ(coord_replicas_parse("{\"replicas\":[1]}\0", 17, back, &n, err, sizeof(err)), -1);
}

static void test_document_size_limit(void)
{
    static char doc[COORD_DOC_MAX + 2];
    int32_t back[COORD_MAX_REPLICAS];
    int n;
    /* A valid document padded with JSON whitespace to exactly the limit is
     * accepted; one byte more is refused before it is parsed. */
    memset(doc, ' ', sizeof(doc));
    memcpy(doc, "{\"replicas\":[3]}", 16);
    CHECK_EQ(coord_replicas_parse(doc, COORD_DOC_MAX, back, &n, err, sizeof(err)), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(coord_replicas_parse(doc, COORD_DOC_MAX + 1, back, &n, err, sizeof(err)), -1);
    CHECK(strstr(err, "larger than") != NULL);
    /* Deep nesting is bounded too (jansson's depth limit), not a stack overflow. */
    for (int i = 0; i < COORD_DOC_MAX / 2; i++) {
        doc[i] = '[';
        doc[COORD_DOC_MAX - 1 - i] = ']';
    }
    CHECK_EQ(coord_replicas_parse(doc, COORD_DOC_MAX, back, &n, err, sizeof(err)), -1);
}

static void test_leader_isr_docs(void)
{
    char doc[1024];
    int32_t leader, epoch, isr[COORD_MAX_REPLICAS], in[2] = {2, 1};
    int nisr;
    int len = coord_leader_write(doc, sizeof(doc), 2, 7);
    CHECK_STR(doc, "{\"leader\":2,\"leader_epoch\":7}");
    CHECK_EQ(coord_leader_parse(doc, (size_t)len, &leader, &epoch, err, sizeof(err)), 0);
    CHECK(leader == 2 && epoch == 7);
    CHECK_EQ(coord_leader_write(doc, sizeof(doc), -1, 0), -1);
    CHECK_EQ(coord_leader_write(doc, sizeof(doc), 0, -1), -1);
    const char *bad_leader[] = {"{\"leader\":2}", "{\"leader_epoch\":1}", "{\"leader\":-1,\"leader_epoch\":0}",
                                "{\"leader\":1,\"leader_epoch\":-1}", "{\"leader\":1,\"leader_epoch\":2147483648}",
                                "{\"leader\":\"1\",\"leader_epoch\":0}", "{\"leader\":1,\"leader_epoch\":0.5}"};
    for (size_t i = 0; i < sizeof(bad_leader) / sizeof(bad_leader[0]); i++)
        CHECK_EQ(coord_leader_parse(DOC(bad_leader[i]), &leader, &epoch, err, sizeof(err)), -1);

    len = coord_isr_write(doc, sizeof(doc), in, 2, 7);
    CHECK_STR(doc, "{\"isr\":[2,1],\"leader_epoch\":7}");
    CHECK_EQ(coord_isr_parse(doc, (size_t)len, isr, &nisr, &epoch, err, sizeof(err)), 0);
    CHECK(nisr == 2 && isr[0] == 2 && isr[1] == 1 && epoch == 7);
    len = coord_isr_write(doc, sizeof(doc), in, 0, 9);   /* an empty ISR is a real state */
    CHECK_STR(doc, "{\"isr\":[],\"leader_epoch\":9}");
    CHECK_EQ(coord_isr_parse(doc, (size_t)len, isr, &nisr, &epoch, err, sizeof(err)), 0);
    CHECK(nisr == 0 && epoch == 9);
    CHECK_EQ(coord_isr_write(doc, sizeof(doc), in, 2, -1), -1);
    const char *bad_isr[] = {"{\"isr\":[1,1],\"leader_epoch\":0}", "{\"isr\":[1]}", "{\"leader_epoch\":0}",
                             "{\"isr\":[-3],\"leader_epoch\":0}", "{\"isr\":{},\"leader_epoch\":0}"};
    for (size_t i = 0; i < sizeof(bad_isr) / sizeof(bad_isr[0]); i++)
        CHECK_EQ(coord_isr_parse(DOC(bad_isr[i]), isr, &nisr, &epoch, err, sizeof(err)), -1);
}

static void test_cluster_and_producer_docs(void)
{
    char doc[256], id[32];
    int len = coord_cluster_id_write(doc, sizeof(doc), "Xy-_0123456789abcdefgh");
    CHECK_STR(doc, "{\"version\":\"1\",\"id\":\"Xy-_0123456789abcdefgh\"}");
    CHECK_EQ(coord_cluster_id_parse(doc, (size_t)len, id, sizeof(id), err, sizeof(err)), 0);
    CHECK_STR(id, "Xy-_0123456789abcdefgh");
    CHECK_EQ(coord_cluster_id_parse(doc, (size_t)len, id, 22, err, sizeof(err)), -1);   /* does not fit */
    CHECK_EQ(coord_cluster_id_write(doc, sizeof(doc), ""), -1);
    const char *bad_cluster[] = {"{\"version\":1,\"id\":\"x\"}", "{\"version\":\"1\"}", "{\"id\":\"x\"}",
                                 "{\"version\":\"1\",\"id\":\"\"}", "{\"version\":\"1\",\"id\":5}"};
    for (size_t i = 0; i < sizeof(bad_cluster) / sizeof(bad_cluster[0]); i++)
        CHECK_EQ(coord_cluster_id_parse(DOC(bad_cluster[i]), id, sizeof(id), err, sizeof(err)), -1);

    int64_t start, end;
    len = coord_producer_block_write(doc, sizeof(doc), 3, 1000, 1999);
    CHECK_STR(doc, "{\"version\":1,\"broker\":3,\"block_start\":\"1000\",\"block_end\":\"1999\"}");
    CHECK_EQ(coord_producer_block_parse(doc, (size_t)len, &start, &end, err, sizeof(err)), 0);
    CHECK(start == 1000 && end == 1999);
    len = coord_producer_block_write(doc, sizeof(doc), 0, INT64_MAX, INT64_MAX);
    CHECK_EQ(coord_producer_block_parse(doc, (size_t)len, &start, &end, err, sizeof(err)), 0);
    CHECK(start == INT64_MAX && end == INT64_MAX);
    CHECK_EQ(coord_producer_block_write(doc, sizeof(doc), 0, 10, 9), -1);
    CHECK_EQ(coord_producer_block_write(doc, sizeof(doc), -1, 0, 9), -1);
    const char *bad_block[] = {
        "{\"version\":1,\"broker\":0,\"block_start\":0,\"block_end\":\"9\"}",
        "{\"version\":1,\"broker\":0,\"block_start\":\"-1\",\"block_end\":\"9\"}",
        "{\"version\":1,\"broker\":0,\"block_start\":\"9223372036854775808\",\"block_end\":\"9\"}",
        "{\"version\":1,\"broker\":0,\"block_start\":\"10\",\"block_end\":\"9\"}",
        "{\"version\":1,\"broker\":0,\"block_start\":\"1x\",\"block_end\":\"9\"}",
        "{\"version\":1,\"broker\":0,\"block_start\":\"\",\"block_end\":\"9\"}",
        "{\"version\":1,\"block_start\":\"0\",\"block_end\":\"9\"}",
        "{\"broker\":0,\"block_start\":\"0\",\"block_end\":\"9\"}",
    };
    for (size_t i = 0; i < sizeof(bad_block) / sizeof(bad_block[0]); i++)
        CHECK_EQ(coord_producer_block_parse(DOC(bad_block[i]), &start, &end, err, sizeof(err)), -1);
}

/* out[p * rf + r] must equal expected (nparts partitions from first). */
static int assignment_is(const int32_t *out, const int32_t *expected, int first, int nparts, int rf)
{
    return memcmp(out + first * rf, expected, (size_t)(nparts * rf) * sizeof(int32_t)) == 0;
}

static void test_assignment_matches_kafka(void)
{
    int32_t out[64 * 3];
    /* Kafka's AdminUtilsTest.testReplicaAssignment: brokers 0..4, 10
     * partitions, replication factor 3, fixed start index 0 (which Kafka
     * also uses as the first shift). */
    const int32_t five[] = {0, 1, 2, 3, 4};
    const int32_t kafka_expected[] = {0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4, 0, 4, 0, 1,
                                      0, 2, 3, 1, 3, 4, 2, 4, 0, 3, 0, 1, 4, 1, 2};
    CHECK_EQ(coord_assign_replicas(five, 5, 0, 10, 3, 0, 0, out, err, sizeof(err)), 0);
    CHECK(assignment_is(out, kafka_expected, 0, 10, 3));

    /* Brokers 0..2, start 2, shift 1, rf 3, worked out by hand from
     * replicaIndex(first, shift, j, n) = (first + 1 + (shift + j) % (n - 1)) % n;
     * the shift becomes 2 at partition 3. */
    const int32_t three[] = {0, 1, 2};
    const int32_t by_hand[] = {2, 1, 0, 0, 2, 1, 1, 0, 2, 2, 0, 1, 0, 1, 2, 1, 2, 0};
    CHECK_EQ(coord_assign_replicas(three, 3, 0, 6, 3, 2, 1, out, err, sizeof(err)), 0);
    CHECK(assignment_is(out, by_hand, 0, 6, 3));
    /* Continuing from partition 3 (CreatePartitions) fills only out[9..17]. */
    memset(out, 0x7f, sizeof(out));
    CHECK_EQ(coord_assign_replicas(three, 3, 3, 3, 3, 2, 1, out, err, sizeof(err)), 0);
    CHECK(assignment_is(out, by_hand + 9, 3, 3, 3));
    CHECK_EQ(out[8], 0x7f7f7f7f);
    /* Kafka counts the shift from the caller's value, not from partition 0:
     * starting at partition 6 with shift 1 bumps it once, to 2. */
    CHECK_EQ(coord_assign_replicas(three, 3, 6, 1, 3, 2, 1, out, err, sizeof(err)), 0);
    const int32_t p6[] = {2, 0, 1};   /* a full run from 0 would give 2, 1, 0 */
    CHECK(assignment_is(out, p6, 6, 1, 3));

    /* Sparse broker ids: the algorithm works on positions in the sorted list. */
    const int32_t sparse[] = {1, 5, 9};
    const int32_t sparse_expected[] = {5, 9, 9, 1, 1, 5, 5, 1};
    CHECK_EQ(coord_assign_replicas(sparse, 3, 0, 4, 2, 1, 2, out, err, sizeof(err)), 0);
    CHECK(assignment_is(out, sparse_expected, 0, 4, 2));

    /* One broker, replication factor 1. */
    const int32_t one[] = {7};
    CHECK_EQ(coord_assign_replicas(one, 1, 0, 3, 1, 0, 0, out, err, sizeof(err)), 0);
    CHECK(out[0] == 7 && out[1] == 7 && out[2] == 7);
}

static void test_rack_aware_assignment_matches_kafka(void)
{
    /* Kafka's AdminRackAwareTest example: racks alternate 0,3,1,5,4,2. */
    static const int32_t six[] = {0, 1, 2, 3, 4, 5};
    static const char *const racks[] = {"rack1", "rack3", "rack3", "rack2", "rack2", "rack1"};
    static const int32_t want[] = {0, 3, 1, 3, 1, 5, 1, 5, 4, 5, 4, 2, 4, 2, 0, 2, 0, 3, 0, 4, 2};
    int32_t out[7 * 3];
    CHECK_EQ(coord_assign_replicas_racks(six, racks, 6, 0, 7, 3, 0, 0, out, err, sizeof(err)), 0);
    CHECK(memcmp(out, want, sizeof(want)) == 0);
    /* No two replicas of a partition on one rack while there are racks enough,
     * whatever the start and shift; every broker leads as often as another. */
    static const int32_t nine[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    static const char *const r3[] = {"a", "b", "c", "a", "b", "c", "a", "b", "c"};
    int32_t big[90 * 3];
    for (int start = 0; start < 9; start++) {
        CHECK_EQ(coord_assign_replicas_racks(nine, r3, 9, 0, 90, 3, start, start % 8, big, err, sizeof(err)), 0);
        int leads[10] = {0};
        for (int p = 0; p < 90; p++) {
            const int32_t *rp = big + p * 3;
            CHECK(r3[rp[0] - 1] != r3[rp[1] - 1] && r3[rp[0] - 1] != r3[rp[2] - 1] && r3[rp[1] - 1] != r3[rp[2] - 1]);
            leads[rp[0]]++;
        }
        for (int id = 1; id <= 9; id++)
            CHECK_EQ(leads[id], 10);
    }
    /* More replicas than racks: every rack first, then no broker twice. */
    static const char *const two[] = {"a", "a", "b", "b"};
    static const int32_t four[] = {1, 2, 3, 4};
    int32_t o4[4 * 3];
    CHECK_EQ(coord_assign_replicas_racks(four, two, 4, 0, 4, 3, 1, 1, o4, err, sizeof(err)), 0);
    for (int p = 0; p < 4; p++) {
        const int32_t *rp = o4 + p * 3;
        CHECK(rp[0] != rp[1] && rp[0] != rp[2] && rp[1] != rp[2]);
        CHECK(two[rp[0] - 1] != two[rp[1] - 1]);
    }
}

static void test_assignment_rejects(void)
{
    int32_t out[16];
    const int32_t brokers[] = {1, 2, 3};
    CHECK_EQ(coord_assign_replicas(brokers, 1, 0, 3, 3, 0, 0, out, err, sizeof(err)), -1);
    CHECK_STR(err, "Replication factor: 3 larger than available brokers: 1.");
    CHECK_EQ(coord_assign_replicas(brokers, 0, 0, 1, 1, 0, 0, out, err, sizeof(err)), -1);
    CHECK_STR(err, "Replication factor: 1 larger than available brokers: 0.");
    CHECK_EQ(coord_assign_replicas(brokers, 3, 0, 1, 0, 0, 0, out, err, sizeof(err)), -1);
    CHECK_STR(err, "Replication factor must be larger than 0.");
    CHECK_EQ(coord_assign_replicas(brokers, 3, 0, 0, 1, 0, 0, out, err, sizeof(err)), -1);
    CHECK_STR(err, "Number of partitions must be larger than 0.");
    CHECK_EQ(coord_assign_replicas(brokers, 3, 0, COORD_MAX_PARTITIONS + 1, 1, 0, 0, out, err, sizeof(err)), -1);
    CHECK_EQ(coord_assign_replicas(brokers, 3, COORD_MAX_PARTITIONS, 1, 1, 0, 0, out, err, sizeof(err)), -1);
    CHECK_EQ(coord_assign_replicas(brokers, 3, -1, 1, 1, 0, 0, out, err, sizeof(err)), -1);
    CHECK_EQ(coord_assign_replicas(brokers, 3, 0, 1, 1, -1, 0, out, err, sizeof(err)), -1);
    const int32_t unsorted[] = {2, 1, 3}, dup[] = {1, 1, 3}, negative[] = {-1, 1, 3};
    CHECK_EQ(coord_assign_replicas(unsorted, 3, 0, 1, 1, 0, 0, out, err, sizeof(err)), -1);
    CHECK_EQ(coord_assign_replicas(dup, 3, 0, 1, 1, 0, 0, out, err, sizeof(err)), -1);
    CHECK_EQ(coord_assign_replicas(negative, 3, 0, 1, 1, 0, 0, out, err, sizeof(err)), -1);
}

/* For every broker count, replication factor and (start, shift), over k
 * rounds of n partitions: each broker leads exactly k partitions and holds
 * exactly k * rf replicas, and no partition has a broker twice. */
static void test_assignment_is_even(void)
{
    enum { ROUNDS = 4, MAXB = 7 };
    static int32_t out[ROUNDS * MAXB * MAXB];
    int32_t brokers[MAXB];
    for (int n = 1; n <= MAXB; n++) {
        for (int i = 0; i < n; i++)
            brokers[i] = 10 + 3 * i;
        for (int rf = 1; rf <= n; rf++) {
            for (int start = 0; start < n; start++) {
                for (int shift = 0; shift < n; shift++) {
                    int count = ROUNDS * n;
                    CHECK_EQ(coord_assign_replicas(brokers, n, 0, count, rf, start, shift, out, err, sizeof(err)), 0);
                    int leaders[MAXB] = {0}, replicas[MAXB] = {0}, distinct = 1;
                    for (int p = 0; p < count; p++) {
                        for (int r = 0; r < rf; r++) {
                            int idx = (out[p * rf + r] - 10) / 3;
                            replicas[idx]++;
                            if (r == 0)
                                leaders[idx]++;
                            for (int q = 0; q < r; q++)
                                distinct &= out[p * rf + q] != out[p * rf + r];
                        }
                    }
                    CHECK(distinct);
                    for (int b = 0; b < n; b++) {
                        CHECK_EQ(leaders[b], ROUNDS);
                        CHECK_EQ(replicas[b], ROUNDS * rf);
                    }
                }
            }
        }
    }
}

/* coord_config_valid is pure (no coordinator), so it is checked here:
 * Kafka's value rules and messages for the topic configs kipper acts on
 * (the others: test_coord_config.c). */
static void test_topic_config_validation(void)
{
    const char *good[][2] = {
        {"retention.ms", "-1"}, {"retention.ms", "9223372036854775807"}, {"retention.bytes", "+5"},
        {"segment.bytes", "14"}, {"segment.bytes", "2147483647"}, {"segment.ms", "1"},
        {"max.message.bytes", "0"}, {"min.insync.replicas", "1"}, {"cleanup.policy", "delete"},
        {"message.timestamp.type", "CreateTime"}, {"message.timestamp.type", "LogAppendTime"},
        {"unclean.leader.election.enable", "true"}, {"unclean.leader.election.enable", "FALSE"},
        {"compression.type", "producer"}, {"compression.type", "uncompressed"}, {"compression.type", "lz4"},
        {"cleanup.policy", "compact"}, {"cleanup.policy", "delete, compact"}, {"cleanup.policy", ""},
        {"retention.bytes", "-2"},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        CHECK_EQ(coord_config_valid(COORD_ENTITY_TOPIC, good[i][0], good[i][1], err, sizeof(err)), 0);
    struct {
        const char *key, *value, *message;
    } bad[] = {
        {"retention.ms", "-2", "Invalid value -2 for configuration retention.ms: Value must be at least -1"},
        {"retention.ms", "9223372036854775808",
         "Invalid value 9223372036854775808 for configuration retention.ms: Not a number of type LONG"},
        {"retention.ms", "", "Invalid value  for configuration retention.ms: Not a number of type LONG"},
        {"retention.ms", " 5", "Invalid value  5 for configuration retention.ms: Not a number of type LONG"},
        {"retention.bytes", "-", "Invalid value - for configuration retention.bytes: Not a number of type LONG"},
        {"segment.bytes", "13", "Invalid value 13 for configuration segment.bytes: Value must be at least 14"},
        {"segment.bytes", "2147483648",
         "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT"},
        {"segment.ms", "0", "Invalid value 0 for configuration segment.ms: Value must be at least 1"},
        {"max.message.bytes", "-1", "Invalid value -1 for configuration max.message.bytes: Value must be at least 0"},
        {"min.insync.replicas", "0",
         "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
        {"message.timestamp.type", "createtime",
         "Invalid value createtime for configuration message.timestamp.type: String must be one of: CreateTime, "
         "LogAppendTime"},
        {"unclean.leader.election.enable", "1",
         "Invalid value 1 for configuration unclean.leader.election.enable: Expected value to be either true or "
         "false"},
        {"compression.type", "zst",
         "Invalid value zst for configuration compression.type: String must be one of: uncompressed, zstd, lz4, "
         "snappy, gzip, producer"},
        {"cleanup.policy", "delete,compacted",
         "Invalid value compacted for configuration cleanup.policy: String must be one of: compact, delete"},
        {"cleanup.policy", "none",
         "Invalid value none for configuration cleanup.policy: String must be one of: compact, delete"},
        {"retention.hours", "1", "Unknown topic config name: retention.hours"},
        {"", "1", "Unknown topic config name: "},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        CHECK_EQ(coord_config_valid(COORD_ENTITY_TOPIC, bad[i].key, bad[i].value, err, sizeof(err)), -1);
        CHECK_STR(err, bad[i].message);
    }
    static char huge[2000];
    memset(huge, '1', sizeof(huge) - 1);
    CHECK_EQ(coord_config_valid(COORD_ENTITY_TOPIC, "retention.ms", huge, err, sizeof(err)), -1);
}

/* Committed offsets: group names as znode names, paths, documents. */
static void test_group_offset_schema(void)
{
    char name[COORD_GROUP_NAME_MAX + 1], back[1100];
    CHECK_EQ(coord_group_name_encode("my-group.1_x", 12, name, sizeof(name)), 12);
    CHECK_STR(name, "my-group.1_x");
    CHECK_EQ(coord_group_name_encode("a/b c%", 6, name, sizeof(name)), 12);
    CHECK_STR(name, "a%2Fb%20c%25");
    CHECK_EQ(coord_group_name_decode(name, back, sizeof(back)), 6);
    CHECK(memcmp(back, "a/b c%", 6) == 0);
    CHECK_EQ(coord_group_name_encode("", 0, name, sizeof(name)), 1);
    CHECK_STR(name, "%");
    CHECK_EQ(coord_group_name_decode("%", back, sizeof(back)), 0);
    CHECK_EQ(coord_group_name_encode("..", 2, name, sizeof(name)), 6);
    CHECK_STR(name, "%2E%2E");
    CHECK_EQ(coord_group_name_decode("%2E%2E", back, sizeof(back)), 2);
    CHECK_EQ(coord_group_name_encode("\xc3\xa9", 2, name, sizeof(name)), 6);
    CHECK_STR(name, "%C3%A9");
    /* names our encoder would not make are not groups */
    CHECK_EQ(coord_group_name_decode("%2e", back, sizeof(back)), -1);    /* lower-case hex */
    CHECK_EQ(coord_group_name_decode("%41", back, sizeof(back)), -1);    /* 'A' needs no escape */
    CHECK_EQ(coord_group_name_decode("a%2", back, sizeof(back)), -1);
    CHECK_EQ(coord_group_name_decode("%2E", back, sizeof(back)), 1);     /* "." */
    CHECK_EQ(coord_group_name_encode("abc", 3, name, 3), -1);
    char path[256];
    CHECK(coord_path_group_offset(path, sizeof(path), "g 1", 3, "orders", 7) > 0);
    CHECK_STR(path, "/consumers/g%201/offsets/orders/7");
    CHECK(coord_path_group_offsets(path, sizeof(path), "g", 1) > 0);
    CHECK_STR(path, "/consumers/g/offsets");
    CHECK(coord_path_group_topic(path, sizeof(path), "g", 1, "t") > 0);
    CHECK_STR(path, "/consumers/g/offsets/t");
    CHECK(coord_path_group(path, sizeof(path), "g", 1) > 0);
    CHECK_STR(path, "/consumers/g");

    char doc[256], md[64];
    int64_t off;
    int32_t epoch;
    int n = coord_offset_write(doc, sizeof(doc), 42, 3, "m\"d");
    CHECK(n > 0);
    CHECK_STR(doc, "{\"offset\":42,\"leader_epoch\":3,\"metadata\":\"m\\\"d\"}");
    CHECK_EQ(coord_offset_parse(doc, (size_t)n, &off, &epoch, md, sizeof(md), err, sizeof(err)), 0);
    CHECK(off == 42 && epoch == 3);
    CHECK_STR(md, "m\"d");
    /* what Kafka's ZooKeeper consumers wrote: the bare number */
    CHECK_EQ(coord_offset_parse("1234", 4, &off, &epoch, md, sizeof(md), err, sizeof(err)), 0);
    CHECK(off == 1234 && epoch == -1 && md[0] == 0);
    CHECK_EQ(coord_offset_parse("{\"offset\":7}", 12, &off, &epoch, md, sizeof(md), err, sizeof(err)), 0);
    CHECK(off == 7 && epoch == -1);
    CHECK_EQ(coord_offset_parse("{\"offset\":\"7\"}", 14, &off, &epoch, md, sizeof(md), err, sizeof(err)), -1);
    CHECK_EQ(coord_offset_parse("12x", 3, &off, &epoch, md, sizeof(md), err, sizeof(err)), -1);
    CHECK_EQ(coord_offset_parse("{\"offset\":1,\"metadata\":\"0123456789\"}", 37, &off, &epoch, md, 8, err,
                                sizeof(err)), -1);
    CHECK(coord_offset_write(doc, sizeof(doc), 1, -1, "\xff") < 0);   /* not UTF-8: never stored */
}

void suite_coord_data(void)
{
    RUN(test_paths);
    RUN(test_group_offset_schema);
    RUN(test_topic_names);
    RUN(test_child_names);
    RUN(test_topic_id_format_parse);
    RUN(test_topic_id_generate);
    RUN(test_broker_doc);
    RUN(test_topic_doc);
    RUN(test_topic_doc_rejects);
    RUN(test_replicas_doc);
    RUN(test_document_size_limit);
    RUN(test_leader_isr_docs);
    RUN(test_cluster_and_producer_docs);
    RUN(test_assignment_matches_kafka);
    RUN(test_assignment_rejects);
    RUN(test_rack_aware_assignment_matches_kafka);
    RUN(test_assignment_is_even);
    RUN(test_topic_config_validation);
}
