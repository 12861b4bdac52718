/* test_broker_config.c -- server.properties parsing: Kafka defaults, the
 * listener and zookeeper.connect forms (coord_connect.c), and errors that
 * name the key. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "broker/coord/coord_connect.h"
#include "broker/core/broker_config.h"
#include "broker_config_text.h"
#include "suites.h"
#include "unit.h"

int unit_broker_config_parse(const char *text, broker_config_t *bc, char *err, size_t errlen)
{
    config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    if (config_parse(&cfg, text) < 0) {
        snprintf(err, errlen, "%s", cfg.error);
        return -1;
    }
    int rc = broker_config_read(&cfg, bc, err, errlen);
    config_free(&cfg);
    return rc;
}

#define parse unit_broker_config_parse

static void test_defaults(void)
{
    broker_config_t bc;
    char err[1024];
    CHECK_EQ(parse("broker.id=3\nzookeeper.connect=zk1:2181,zk2:2181/kafka\n", &bc, err, sizeof(err)), 0);
    CHECK_EQ(bc.broker_id, 3);
    CHECK_STR(bc.listener.host, "");
    CHECK_EQ(bc.listener.port, 9092);
    CHECK_EQ(bc.advertised.port, 9092);
    CHECK_EQ(bc.n_log_dirs, 1);
    CHECK_STR(bc.log_dirs[0], "/tmp/kafka-logs");
    CHECK_STR(bc.zk_chroot, "/kafka");
    CHECK_EQ(bc.num_partitions, 1);
    CHECK_EQ(bc.default_replication_factor, 1);
    CHECK_EQ(bc.min_insync_replicas, 1);
    CHECK_EQ(bc.log_segment_bytes, 1073741824);
    CHECK_EQ(bc.log_retention_ms, 168LL * 3600 * 1000);
    CHECK_EQ(bc.log_retention_bytes, -1);
    CHECK_EQ(bc.auto_create_topics, 1);
    CHECK_EQ(bc.socket_request_max_bytes, 104857600);
    CHECK_EQ(bc.group_min_session_timeout_ms, 6000);
    CHECK_EQ(bc.group_max_session_timeout_ms, 1800000);
    CHECK_EQ(bc.group_initial_rebalance_delay_ms, 3000);
    CHECK_EQ(bc.group_max_size, INT32_MAX);
    CHECK_EQ(bc.offset_metadata_max_bytes, 4096);
    CHECK_EQ(bc.offsets_commit_timeout_ms, 5000);
    CHECK_EQ(bc.replica_socket_timeout_ms, 30000);
    CHECK_EQ(bc.rack_aware_reads, 0);   /* replica.selector.class unset: the leader serves every fetch */
    CHECK_EQ(parse("broker.id=3\nzookeeper.connect=z:1\n"
                   "replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector\n",
                   &bc, err, sizeof(err)), 0);
    CHECK_EQ(bc.rack_aware_reads, 1);
}

static void test_values(void)
{
    broker_config_t bc;
    char err[1024];
    const char *text = "broker.id=0\nzookeeper.connect=127.0.0.1:2181\n"
                       "listeners=PLAINTEXT://[::1]:9093\nadvertised.listeners=PLAINTEXT://localhost:19093\n"
                       "log.dirs=/a, /b ,/c\nlog.retention.hours=1\nlog.retention.minutes=2\n"
                       "auto.create.topics.enable=false\n";
    CHECK_EQ(parse(text, &bc, err, sizeof(err)), 0);
    CHECK_STR(bc.listener.host, "::1");
    CHECK_EQ(bc.listener.port, 9093);
    CHECK_STR(bc.advertised.host, "localhost");
    CHECK_EQ(bc.advertised.port, 19093);
    CHECK_EQ(bc.n_log_dirs, 3);
    CHECK_STR(bc.log_dirs[1], "/b");
    CHECK_EQ(bc.log_retention_ms, 120000);   /* minutes win over hours */
    CHECK_EQ(bc.auto_create_topics, 0);
    CHECK_STR(bc.zk_chroot, "");
    CHECK_EQ(parse("broker.id=0\nzookeeper.connect=z:1\nlog.retention.ms=-1\nlog.retention.hours=5\n", &bc, err,
                   sizeof(err)), 0);
    CHECK_EQ(bc.log_retention_ms, -1);
    CHECK_EQ(parse("broker.id=0\nzookeeper.connect=z:1\ngroup.initial.rebalance.delay.ms=0\n"
                   "group.min.session.timeout.ms=100\ngroup.max.size=5\noffset.metadata.max.bytes=10\n",
                   &bc, err, sizeof(err)), 0);
    CHECK(bc.group_initial_rebalance_delay_ms == 0 && bc.group_min_session_timeout_ms == 100);
    CHECK(bc.group_max_size == 5 && bc.offset_metadata_max_bytes == 10);
}

/* Each bad text fails with an error naming key. */
static void expect_error(const char *text, const char *key)
{
    broker_config_t bc;
    char err[1024] = "";
    CHECK_EQ(parse(text, &bc, err, sizeof(err)), -1);
    CHECK(strstr(err, key) != NULL);
}

static void test_errors(void)
{
    expect_error("zookeeper.connect=z:1\n", "broker.id");
    expect_error("broker.id=abc\nzookeeper.connect=z:1\n", "broker.id");
    expect_error("broker.id=-1\nzookeeper.connect=z:1\n", "broker.id");
    expect_error("broker.id=1\n", "zookeeper.connect");
    expect_error("broker.id=1\nzookeeper.connect=z\n", "zookeeper.connect");
    expect_error("broker.id=1\nzookeeper.connect=z:1/a/\n", "zookeeper.connect");
    expect_error("broker.id=1\nzookeeper.connect=z:1,:2\n", "zookeeper.connect");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nlisteners=SSL://h:1\n", "listeners");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nlisteners=PLAINTEXT://h:1,PLAINTEXT://h:2\n", "listeners");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nlisteners=PLAINTEXT://h:70000\n", "listeners");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nadvertised.listeners=PLAINTEXT://:9092\n",
                 "advertised.listeners");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nnum.partitions=0\n", "num.partitions");
    /* a selector class kipper does not have is refused, not ignored */
    expect_error("broker.id=1\nzookeeper.connect=z:1\nreplica.selector.class=com.example.NearestReplica\n",
                 "replica.selector.class");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nlog.segment.bytes=13\n", "log.segment.bytes");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nlog.retention.ms=x\n", "log.retention.ms");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nauto.create.topics.enable=2\n", "auto.create.topics.enable");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nlog.dirs=/a,,/b\n", "log.dirs");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nsocket.request.max.bytes=0\n", "socket.request.max.bytes");
    expect_error("broker.id=1\nzookeeper.connect=z:1\ngroup.max.size=0\n", "group.max.size");
    expect_error("broker.id=1\nzookeeper.connect=z:1\ngroup.min.session.timeout.ms=9\n"
                 "group.max.session.timeout.ms=8\n", "group.min.session.timeout.ms");
    /* a follower giving up on every long-polled fetch */
    expect_error("broker.id=1\nzookeeper.connect=z:1\nreplica.fetch.wait.max.ms=600\nreplica.socket.timeout.ms=500\n",
                 "replica.socket.timeout.ms");
}

/* The keys that bound what clients can take: Kafka's names, kipper's
 * defaults where Kafka has none that protects the broker. */
static void test_resource_limits(void)
{
    broker_config_t bc;
    char err[1024];
    CHECK_EQ(parse("broker.id=1\nzookeeper.connect=z:1\n", &bc, err, sizeof(err)), 0);
    CHECK_EQ(bc.max_connections, 0);   /* derived from RLIMIT_NOFILE at start */
    CHECK_EQ(bc.max_connections_per_ip, INT32_MAX);
    CHECK_EQ(bc.queued_max_request_bytes, 104857600);
    CHECK_EQ(bc.group_max_memory_bytes, 32 << 20);
    CHECK_EQ(parse("broker.id=1\nzookeeper.connect=z:1\nmax.connections=10\nmax.connections.per.ip=2\n"
                   "queued.max.request.bytes=-1\n", &bc, err, sizeof(err)), 0);
    CHECK(bc.max_connections == 10 && bc.max_connections_per_ip == 2 && bc.queued_max_request_bytes == -1);
    expect_error("broker.id=1\nzookeeper.connect=z:1\nmax.connections=0\n", "max.connections");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nmax.connections.per.ip=x\n", "max.connections.per.ip");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nqueued.max.request.bytes=0\n", "queued.max.request.bytes");
    expect_error("broker.id=1\nzookeeper.connect=z:1\nqueued.max.request.bytes=-2\n", "queued.max.request.bytes");
    expect_error("broker.id=1\nzookeeper.connect=z:1\ngroup.max.memory.bytes=1000\n", "group.max.memory.bytes");
    CHECK_EQ(parse("broker.id=1\nzookeeper.connect=z:1\ngroup.max.memory.bytes=1048576\n", &bc, err, sizeof(err)), 0);
    CHECK_EQ(bc.group_max_memory_bytes, 1048576);
}

/* zookeeper.connect as `kipper topics --zookeeper` takes it too. */
static void test_coord_connect(void)
{
    char chroot[16], err[256];
    CHECK_EQ(coord_parse_connect(" a:1 , [::1]:2 ,b:3/x/y", chroot, sizeof(chroot), err, sizeof(err)), 0);
    CHECK_STR(chroot, "/x/y");
    CHECK_EQ(coord_parse_connect("a:1/", chroot, sizeof(chroot), err, sizeof(err)), 0);
    CHECK_STR(chroot, "");   /* "/" alone is no chroot */
    CHECK_EQ(coord_parse_connect("a:1//x", chroot, sizeof(chroot), err, sizeof(err)), -1);
    CHECK(strstr(err, "bad chroot") != NULL);
    CHECK_EQ(coord_parse_connect("a:1/a-chroot-longer-than-16", chroot, sizeof(chroot), err, sizeof(err)), -1);
    CHECK_EQ(coord_parse_connect("a:0", chroot, sizeof(chroot), err, sizeof(err)), -1);   /* no port 0 */
    CHECK_EQ(coord_parse_connect("a:1,", chroot, sizeof(chroot), err, sizeof(err)), -1);
    CHECK(strstr(err, "host:port[,host:port...][/chroot]") != NULL);
}

void suite_broker_config(void)
{
    RUN(test_defaults);
    RUN(test_values);
    RUN(test_errors);
    RUN(test_resource_limits);
    RUN(test_coord_connect);
}
