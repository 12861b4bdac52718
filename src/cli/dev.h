/* dev.h -- `kipper dev`: a local development cluster. */
#ifndef KIPPER_CLI_DEV_H
#define KIPPER_CLI_DEV_H

/* Runs until Ctrl-C; returns the exit code. */
int dev_main(int argc, char **argv);

#endif
