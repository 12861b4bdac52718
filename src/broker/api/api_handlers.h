/* api_handlers.h -- the handlers broker_api.c dispatches to, one api_*.c
 * file per family. Each answers with broker_reply, or returns REQ_WAIT and
 * runs again when woken or timed out. */
#ifndef KIPPER_BROKER_API_API_HANDLERS_H
#define KIPPER_BROKER_API_API_HANDLERS_H

#include "broker/core/broker_impl.h"

/* api_metadata.c */
req_status_t api_metadata(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_produce.c */
req_status_t api_produce(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_fetch.c */
req_status_t api_fetch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_offsets.c */
req_status_t api_list_offsets(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_offset_for_leader_epoch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_admin.c */
req_status_t api_create_topics(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_delete_topics(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_create_partitions(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_init_producer_id(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_partition_admin.c */
req_status_t api_elect_leaders(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_alter_partition_reassignments(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_list_partition_reassignments(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_alter_configs(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_incremental_alter_configs(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_describe.c */
req_status_t api_describe_cluster(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_configs.c */
req_status_t api_describe_configs(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_records.c */
req_status_t api_delete_records(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_describe_log_dirs(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_group.c */
req_status_t api_find_coordinator(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_join_group(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_sync_group(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_heartbeat(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_leave_group(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_describe_groups(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_list_groups(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_delete_groups(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
/* api_group_offsets.c */
req_status_t api_offset_commit(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_offset_fetch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_offset_delete(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);

#endif
