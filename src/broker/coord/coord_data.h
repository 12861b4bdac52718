/* coord_data.h -- the cluster state the brokers keep in the coordinator
 * (docs/replication.md, "The cluster state in the coordinator"): the paths,
 * the small JSON documents stored at them, and the pure functions both the
 * broker and `kipper topics` use to build and read them. Nothing here talks
 * to the coordinator.
 *
 * Paths (relative to the chroot of zookeeper.connect):
 *   /cluster/id                          {"version":"1","id":"<cluster id>"}
 *   /brokers/ids/[id]        ephemeral   {"version":4,"host":"h","port":9092,
 *                                         "endpoints":["PLAINTEXT://h:9092"],"timestamp":"<ms>"}
 *   /brokers/topics/[topic]              {"version":1,"topic_id":"<22-char base64url>","config":{}}
 *       "config" held the topic's overrides up to this version; they live in
 *       /config/topics/[topic] now. Still read for a topic without that node
 *       (created by an older kipper); written empty, so older brokers in a
 *       rolling upgrade still parse the document.
 *   /brokers/topics/[topic]/[partition]  (no data)
 *     .../replicas                       {"replicas":[2,1,3]}   first = preferred replica
 *     .../leader             ephemeral   {"leader":2,"leader_epoch":7}
 *     .../ISR                            {"isr":[2,1],"leader_epoch":7}
 *   /brokers/partitions_reassigned/[topic]/[partition]   {"replicas":[...]}
 *   /latest_producer_id_block            {"version":1,"broker":0,"block_start":"0","block_end":"999"}
 *   /config/topics/[topic]               {"version":1,"config":{"retention.ms":"1000",...}}
 *   /config/brokers/[id]                 the same: one broker's dynamic configs
 *   /config/brokers/<default>            the same: every broker's
 *   /config/changes/config_change_NNNNNNNNNN   (sequential)
 *                                        {"version":2,"entity_path":"topics/foo"}
 *       Kafka's ZooKeeper-mode layout for configs (coord_config.h says which
 *       names kipper knows and how they are checked).
 *   /consumers/[group]/offsets/[topic]/[partition]
 *                                        {"offset":42,"leader_epoch":3,"metadata":"..."}
 *       committed offsets, where Kafka's ZooKeeper-era consumers kept them
 *       (they stored the bare number, which is read too). Written only by the
 *       group's coordinator broker. [group] is the group id itself when it is
 *       made of [A-Za-z0-9._-] and is not "." or ".."; any other byte is
 *       %XX (and '%' itself, so the mapping stays one to one); "" is "%".
 *
 * Parsers accept extra keys (forward compatibility) but reject anything
 * missing, of the wrong type or out of range, with a reason in err. Every
 * document is bounded by COORD_DOC_MAX bytes. */
#ifndef KIPPER_BROKER_COORD_DATA_H
#define KIPPER_BROKER_COORD_DATA_H

#include <stddef.h>
#include <stdint.h>

#define COORD_DOC_MAX 65536          /* largest document we write or accept */
#define COORD_MAX_REPLICAS 64        /* replicas (and ISR members) per partition */
#define COORD_MAX_PARTITIONS 10000   /* partitions per topic */
#define COORD_MAX_TOPIC_CONFIGS 64
#define COORD_TOPIC_NAME_MAX 249
#define COORD_HOST_MAX 256

/* Path builders: snprintf into out; -1 if it does not fit. */
int coord_path_topic(char *out, size_t n, const char *topic);
int coord_path_partition(char *out, size_t n, const char *topic, int32_t partition);
/* leaf is "replicas", "leader" or "ISR". */
int coord_path_partition_leaf(char *out, size_t n, const char *topic, int32_t partition, const char *leaf);
int coord_path_broker(char *out, size_t n, int32_t broker_id);
/* A move asked for: COORD_REASSIGNMENTS/[topic]/[partition], or the topic's
 * folder for partition -1. */
#define COORD_REASSIGNMENTS "/brokers/partitions_reassigned"
int coord_path_reassignment(char *out, size_t n, const char *topic, int32_t partition);

/* Kafka's rule: 1..249 characters of [a-zA-Z0-9._-], not "." or "..". */
int coord_topic_name_valid(const char *name, char *err, size_t errlen);

/* Lists of partitions (a plan's moves, an election's list) are arrays of n
 * structs of `stride` bytes, each starting with a topic name (a char array)
 * whose int32 partition number is at `partition_at`. The index of an
 * element that names the same partition as an earlier one, or -1. Sorts
 * pointers, so a long list costs n log n, not n squared. */
int coord_partition_repeated(const void *items, int n, size_t stride, size_t partition_at);
/* A child name of /brokers/topics/[topic] that is a partition number
 * (canonical decimal, 0..COORD_MAX_PARTITIONS-1); -1 otherwise. */
int32_t coord_parse_partition_name(const char *name);
/* A child of /brokers/ids: canonical decimal 0..INT32_MAX; -1 otherwise. */
int32_t coord_parse_broker_id_name(const char *name);

/* ---- documents ----
 * Writers return the length written into out (NUL-terminated), or -1 if
 * it does not fit. Parsers take (data, len) as the coordinator returns
 * them (not NUL-terminated) and return 0, or -1 with err. */

#define COORD_RACK_MAX 256

typedef struct {
    char host[COORD_HOST_MAX];
    int32_t port;
    char rack[COORD_RACK_MAX];    /* broker.rack; "" when none (Kafka writes "rack" only then) */
} coord_broker_t;

/* rack NULL or "": no "rack" key, as Kafka leaves it out. */
int coord_broker_write(char *out, size_t n, const char *host, int32_t port, const char *rack, int64_t timestamp_ms);
int coord_broker_parse(const char *data, size_t len, coord_broker_t *out, char *err, size_t errlen);

typedef struct {
    char key[128];
    char value[1024];
} coord_config_entry_t;

typedef struct {
    uint8_t topic_id[16];
    int nconfigs;
    coord_config_entry_t configs[COORD_MAX_TOPIC_CONFIGS];
} coord_topic_t;

/* topic_id as Kafka prints it: unpadded base64url of the 16 bytes. */
void coord_topic_id_format(const uint8_t id[16], char out[23]);
int coord_topic_id_parse(const char *s, uint8_t id[16]);   /* 0 or -1 */
/* A fresh random id (getrandom), never all zeros (Kafka's "no id"). */
void coord_topic_id_generate(uint8_t id[16]);
int coord_topic_write(char *out, size_t n, const coord_topic_t *t);
int coord_topic_parse(const char *data, size_t len, coord_topic_t *out, char *err, size_t errlen);

/* ---- /config ---- */

#define COORD_CONFIG_TOPICS "/config/topics"
#define COORD_CONFIG_BROKERS "/config/brokers"
#define COORD_CONFIG_CHANGES "/config/changes"
#define COORD_CONFIG_CHANGE_PREFIX "config_change_"
#define COORD_CONFIG_DEFAULT "<default>"   /* the broker entity every broker shares */
#define COORD_ENTITY_PATH_MAX 300

/* /config/topics/[topic]; /config/brokers/[name] (an id or <default>). */
int coord_path_topic_config(char *out, size_t n, const char *topic);
int coord_path_broker_config(char *out, size_t n, const char *name);
/* A config node's document: entries[0..n) as {"version":1,"config":{...}}
 * (names distinct); and back, at most COORD_MAX_TOPIC_CONFIGS entries. */
int coord_entity_config_write(char *out, size_t n, const coord_config_entry_t *entries, int nentries);
int coord_entity_config_parse(const char *data, size_t len, coord_config_entry_t *entries, int *nentries, char *err,
                              size_t errlen);
/* A change notification: entity_path is "topics/[topic]" or "brokers/[name]". */
int coord_config_change_write(char *out, size_t n, const char *entity_path);
int coord_config_change_parse(const char *data, size_t len, char *entity_path, size_t cap, char *err, size_t errlen);

/* "replicas" and partitions_reassigned documents; *nreplicas <= COORD_MAX_REPLICAS,
 * no duplicate ids, ids >= 0. */
int coord_replicas_write(char *out, size_t n, const int32_t *replicas, int nreplicas);
int coord_replicas_parse(const char *data, size_t len, int32_t *replicas, int *nreplicas, char *err,
                         size_t errlen);

int coord_leader_write(char *out, size_t n, int32_t leader, int32_t leader_epoch);
int coord_leader_parse(const char *data, size_t len, int32_t *leader, int32_t *leader_epoch, char *err,
                       size_t errlen);

/* ISR may be empty (all replicas lost); same bounds as replicas. */
int coord_isr_write(char *out, size_t n, const int32_t *isr, int nisr, int32_t leader_epoch);
int coord_isr_parse(const char *data, size_t len, int32_t *isr, int *nisr, int32_t *leader_epoch, char *err,
                    size_t errlen);

int coord_cluster_id_write(char *out, size_t n, const char *cluster_id);
int coord_cluster_id_parse(const char *data, size_t len, char *cluster_id, size_t idlen, char *err,
                           size_t errlen);

/* block_start/block_end are decimal strings, as in Kafka. */
int coord_producer_block_write(char *out, size_t n, int32_t broker, int64_t block_start, int64_t block_end);
int coord_producer_block_parse(const char *data, size_t len, int64_t *block_start, int64_t *block_end,
                               char *err, size_t errlen);

/* ---- consumer group offsets ---- */

#define COORD_GROUP_NAME_MAX 3072    /* an encoded group id of up to 1024 bytes */
#define COORD_OFFSET_METADATA_MAX 16384   /* bytes of a stored metadata string */

/* The znode name of a group id of len bytes; -1 if it does not fit in n. */
int coord_group_name_encode(const char *group, size_t len, char *out, size_t n);
/* Back from a znode name: the id's length, or -1 when name is not one our
 * encoder makes (foreign nodes under /consumers are skipped). */
int coord_group_name_decode(const char *name, char *out, size_t n);
/* /consumers/[group]/offsets, .../[topic], .../[topic]/[partition]; and the
 * parents a first commit creates: /consumers, /consumers/[group]. */
int coord_path_group(char *out, size_t n, const char *group, size_t len);
int coord_path_group_offsets(char *out, size_t n, const char *group, size_t len);
int coord_path_group_topic(char *out, size_t n, const char *group, size_t len, const char *topic);
int coord_path_group_offset(char *out, size_t n, const char *group, size_t len, const char *topic,
                            int32_t partition);

/* metadata must be valid UTF-8 (the caller cleans what clients send). */
int coord_offset_write(char *out, size_t n, int64_t offset, int32_t leader_epoch, const char *metadata);
/* Accepts our document (leader_epoch and metadata optional) or a bare
 * decimal offset; metadata (cap bytes) is "" when absent. */
int coord_offset_parse(const char *data, size_t len, int64_t *offset, int32_t *leader_epoch, char *metadata,
                       size_t cap, char *err, size_t errlen);

/* ---- replica assignment ----
 * Kafka's rack-unaware assignment (AdminUtils.assignReplicasToBrokers):
 * brokers sorted; partition p's first replica is brokers[(start + p) % n],
 * the others follow at a shift that grows every n partitions. Fills
 * out[p * rf + r] for p in [first_partition, first_partition + count) (so
 * CreatePartitions continues the pattern). start and shift come from the
 * caller (random in production, fixed in tests). -1 with err if rf < 1,
 * rf > nbrokers or count < 1. */
int coord_assign_replicas(const int32_t *brokers, int nbrokers, int32_t first_partition, int count, int rf,
                          int start, int shift, int32_t *out, char *err, size_t errlen);
/* Kafka's rack-aware assignment (AdminUtils.assignReplicasToBrokersRackAware):
 * the brokers (sorted) with their racks (racks[i] for brokers[i], none
 * empty) are first arranged alternating racks; partition p's first replica
 * is arranged[(start + p) % n] and each further replica the next one along
 * (at the growing shift, stepping by the number of racks) that puts no two
 * replicas on one rack while a rack has none, and no two on one broker. Same
 * arguments and errors as coord_assign_replicas. */
int coord_assign_replicas_racks(const int32_t *brokers, const char *const *racks, int nbrokers, int32_t first_partition,
                                int count, int rf, int start, int shift, int32_t *out, char *err, size_t errlen);

#endif
