/* dynamic_config.h -- configs that change while the broker runs
 * (dynamic_config.c): each topic's overrides in /config/topics/[topic], and
 * the dynamic broker configs in /config/brokers/<default> and
 * /config/brokers/[our id], read with watches and applied at once: the
 * replicas' logs get their new configs, and the broker's own settings that
 * may change (b->cfg's retention, segment size and age, message.max.bytes,
 * log.message.timestamp.type, min.insync.replicas,
 * unclean.leader.election.enable, the two replication throttle rates) are what server.properties said under
 * what the coordinator says, per broker over the shared default, as Kafka
 * merges them. Everything else reads b->cfg and topic_config() at use, so it
 * sees the change.
 *
 * Why watch the nodes rather than Kafka's /config/changes: a watch per
 * config node is re-armed by every read, restored by the client after a
 * lost connection and followed by a full read after a session expiry, so no
 * change can be missed and nothing needs to remember the last notification
 * processed; it costs one watch per topic, as the topic document already
 * does. Notifications are still written (coord_config_admin.c) for tools
 * that follow them. Loop thread only. */
#ifndef KIPPER_BROKER_CORE_DYNAMIC_CONFIG_H
#define KIPPER_BROKER_CORE_DYNAMIC_CONFIG_H

#include <stdint.h>

#include "broker_impl.h"

/* Before the coordinator link: keeps b->cfg as server.properties made it. */
int dynamic_config_start(broker_t *b);
void dynamic_config_stop(broker_t *b);

/* A new session: the broker nodes, and every known topic's node, read (and
 * watched) again. */
void dynamic_config_read_all(broker_t *b);
/* A topic joined the view (or its document changed): read its node. */
void dynamic_config_read_topic(broker_t *b, topic_t *t);
/* The topic's document was read again: its configs apply when it has no
 * /config/topics node. */
void dynamic_config_topic_doc_changed(broker_t *b, topic_t *t);
/* A watch fired: 1 when path was one of ours. */
int dynamic_config_event(broker_t *b, int type, const char *path);

/* What DescribeConfigs reports for a broker config: its value in our
 * /config/brokers/[id] (level 0) or <default> (level 1), NULL when unset. */
enum { DYNAMIC_BROKER = 0, DYNAMIC_DEFAULT = 1 };
const char *dynamic_config_value(const broker_t *b, int level, const char *name);
/* The entries set at one level (for DescribeConfigs of <default>). */
int dynamic_config_entries(const broker_t *b, int level, const coord_config_entry_t **entries);
/* b->cfg as server.properties made it. */
const broker_config_t *dynamic_config_static(const broker_t *b);

/* ---- which replicas the move throttle holds (the throttle is broker/repl's
 * throttle.c; its rates are in b->cfg) ---- */
enum { THROTTLE_LEADER, THROTTLE_FOLLOWER };
/* Whether the topic's leader.replication.throttled.replicas (side LEADER) or
 * follower.replication.throttled.replicas (FOLLOWER) names the replica of
 * partition on broker ("*" names every one). */
int config_replica_throttled(const topic_t *t, int side, int32_t partition, int32_t broker);

#endif
