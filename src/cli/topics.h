/* topics.h -- `kipper topics`: create, list, describe, grow and delete topics
 * in the coordinator, in the manner of the ZooKeeper-based kafka-topics.sh. */
#ifndef KIPPER_CLI_TOPICS_H
#define KIPPER_CLI_TOPICS_H

/* argv[0] is "topics". Returns the exit code: 0 done, 1 failed (the reason
 * on stderr), 2 bad usage. */
int topics_main(int argc, char **argv);

#endif
