/* topics.h -- `kipper topics`: create, list, describe, grow and delete topics,
 * through a broker as Kafka 3.x's kafka-topics.sh (--bootstrap-server), or in
 * the coordinator as the ZooKeeper-based one (--zookeeper). */
#ifndef KIPPER_CLI_TOPICS_H
#define KIPPER_CLI_TOPICS_H

/* argv[0] is "topics". Returns the exit code: 0 done, 1 failed (the reason
 * on stderr), 2 bad usage. */
int topics_main(int argc, char **argv);

#endif
