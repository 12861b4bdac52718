/* configs.h -- `kipper configs` (configs.c), kafka-configs.sh's ZooKeeper mode. */
#ifndef KIPPER_CLI_CONFIGS_H
#define KIPPER_CLI_CONFIGS_H

int configs_main(int argc, char **argv);

#endif
