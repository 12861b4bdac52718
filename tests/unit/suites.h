/* suites.h -- every unit-test suite; main.c runs them in this order. */
#ifndef KIPPER_TESTS_SUITES_H
#define KIPPER_TESTS_SUITES_H

void suite_base(void);     /* test_base.c: buf, config, crc32c, loop, and the shared primitives */
void suite_jute(void);     /* test_jute.c: jute codec and txn records */
void suite_path(void);     /* test_path.c: path validation */
void suite_tree(void);     /* test_tree.c: data tree and txn apply */
void suite_acl(void);      /* test_acl.c: ACL checks, fixup, digest, ip */
void suite_watch(void);    /* test_watch.c: watch tables and firing rules */
void suite_session(void);  /* test_session.c: session ids, passwords, expiry */
void suite_readonly(void); /* test_readonly.c: read-only mode's refusals and grace period */
void suite_local_sessions(void); /* test_local_sessions.c: which local-session requests need a global session */
void suite_snapshot(void); /* test_snapshot.c: snapshot files, damaged and hostile ones */
void suite_txnlog(void);   /* test_txnlog.c: transaction log writing, replay, damage */
void suite_changes(void);  /* test_changes.c: the prepared changes writes are checked against */
void suite_election(void); /* test_election.c: vote order, election codecs, elections on loopback */

void suite_quorum(void);    /* test_quorum.c: quorum packets, SNAP stream, history */
void suite_ensemble_config(void); /* test_ensemble_config.c: server.N lines, /zookeeper/config, reconfig strings */
void suite_partition_log(void); /* test_partition_log.c: segments, indexes, recovery, checkpoints */
void suite_broker_config(void); /* test_broker_config.c: server.properties parsing */
void suite_broker_config_defs(void); /* test_broker_config_defs.c: Kafka's broker configs as data */
void suite_kafka_codec(void); /* test_kafka_codec.c: Kafka wire codec, every API and version */
void suite_coord_moves(void); /* test_coord_moves.c: move plans, a move's sets, election lists */
void suite_coord_data(void);  /* test_coord_data.c: coordinator paths, JSON documents, assignment */
void suite_coord_config(void); /* test_coord_config.c: /config documents, config checks, AlterConfigs changes */
void suite_compression(void); /* test_compression.c: compressed batches validated and read */
void suite_batch_validate(void); /* test_batch_validate.c: a producer's records checked before the append */
void suite_message_convert(void); /* test_message_convert.c: magic 0/1 message sets up-converted to v2 */
void suite_producer_state(void); /* test_producer_state.c: idempotent producer sequence checks */
void suite_group(void);       /* test_group.c: consumer group state machine, placement hash */
void suite_repl(void);        /* test_repl.c: ISR and HW, commitQ, truncation by leader epoch */
void suite_cli_reassign(void); /* test_cli_reassign.c: --throttle's rate, progress, the DescribeLogDirs client */
void suite_cli_consumer_groups(void); /* test_cli_consumer_groups.c: arguments, resets, the group requests */
void suite_cli_console(void); /* test_cli_console.c: console tools' arguments, lines read, batches built and read, printing */
void suite_cli_partitioner(void); /* test_cli_partitioner.c: murmur2 vectors, keyed and sticky partitions */
void suite_cli_topic_admin(void); /* test_cli_topic_admin.c: the topics and configs requests, answers read */

#endif
