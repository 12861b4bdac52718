/* configs.h -- `kipper configs` (configs.c): kafka-configs.sh through a broker
 * (--bootstrap-server, configs_kafka.c) or in its ZooKeeper mode (--zookeeper). */
#ifndef KIPPER_CLI_CONFIGS_H
#define KIPPER_CLI_CONFIGS_H

int configs_main(int argc, char **argv);

#endif
