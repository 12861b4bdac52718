/* main.c -- `kipper <command>`: one binary for every part of kipper. */
#define _GNU_SOURCE
#include "configs.h"
#include "console.h"
#include "consumer_groups.h"
#include "dev.h"
#include "elect.h"
#include "reassign.h"
#include "topics.h"
#include "base/logging.h"
#include "broker/broker.h"
#include "keeper/keeper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kipper <command> [args]\n"
            "\n"
            "commands:\n"
            "  keeper zoo.cfg   run one ZooKeeper-compatible keeper node (zkServer.sh start-foreground)\n"
            "  broker server.properties  run one Kafka-compatible broker (kafka-server-start.sh)\n"
            "  dev [--verbose] [dir]  run a local development cluster on loopback: 3 keepers and 3 brokers\n"
            "                   (Ctrl-C stops it; kipper dev --help)\n"
            "  topics ...       create, list, describe, alter and delete topics (kafka-topics.sh;\n"
            "                   kipper topics --help)\n"
            "  reassign ...     move partitions between brokers, drain a broker (kafka-reassign-partitions.sh;\n"
            "                   kipper reassign --help)\n"
            "  elect ...        preferred or unclean leader elections (kafka-leader-election.sh; kipper elect --help)\n"
            "  configs ...      describe and change topic configs and dynamic broker configs on a running\n"
            "                   cluster (kafka-configs.sh; kipper configs --help)\n"
            "  consumer-groups ...  list, describe (offsets and lag), reset offsets of and delete consumer\n"
            "                   groups, over the Kafka protocol (kafka-consumer-groups.sh;\n"
            "                   kipper consumer-groups --help)\n"
            "  console-producer ...  send each line of stdin as a record (kafka-console-producer.sh;\n"
            "                   kipper console-producer --help)\n"
            "  console-consumer ...  print a topic's records, one a line, without a group\n"
            "                   (kafka-console-consumer.sh; kipper console-consumer --help)\n"
            "  help             show this text\n"
            "\n"
            "KIPPER_LOG_LEVEL=debug|info|warn|error sets the log verbosity (default info).\n");
}

int main(int argc, char **argv)
{
    const char *level = getenv("KIPPER_LOG_LEVEL");
    if (level) {
        int l = log_level_from_name(level);
        if (l < 0) {
            fprintf(stderr, "kipper: KIPPER_LOG_LEVEL must be debug, info, warn or error, got '%s'\n", level);
            return 2;
        }
        log_set_level((log_level_t)l);
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "keeper") == 0)
        return keeper_main(argc - 1, argv + 1);
    if (strcmp(cmd, "broker") == 0)
        return broker_main(argc - 1, argv + 1);
    if (strcmp(cmd, "dev") == 0)
        return dev_main(argc - 1, argv + 1);
    if (strcmp(cmd, "topics") == 0)
        return topics_main(argc - 1, argv + 1);
    if (strcmp(cmd, "reassign") == 0)
        return reassign_main(argc - 1, argv + 1);
    if (strcmp(cmd, "elect") == 0)
        return elect_main(argc - 1, argv + 1);
    if (strcmp(cmd, "configs") == 0)
        return configs_main(argc - 1, argv + 1);
    if (strcmp(cmd, "consumer-groups") == 0)
        return consumer_groups_main(argc - 1, argv + 1);
    if (strcmp(cmd, "console-producer") == 0)
        return console_producer_main(argc - 1, argv + 1);
    if (strcmp(cmd, "console-consumer") == 0)
        return console_consumer_main(argc - 1, argv + 1);
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "kipper: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
