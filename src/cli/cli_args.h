/* cli_args.h -- command-line pieces the tools share (consumer_groups.c,
 * console_producer.c, console_consumer.c): an option with a value, and a
 * whole decimal number. Pure. */
#ifndef KIPPER_CLI_CLI_ARGS_H
#define KIPPER_CLI_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* An option taking a value: "--name v" or "--name=v" at argv[*i] (*i moves
 * past the value). 1 with *v when it is that option, 0 when not, -1 with
 * err when its value is missing. */
int cli_option_value(int argc, char **argv, int *i, const char *name, const char **v, char *err, size_t errlen);

/* All of s as a decimal int64 (no blanks, nothing after). 0 or -1. */
int cli_parse_i64(const char *s, int64_t *out);

/* What a tool does with its parse's result rc (0 go on, 1 --help, -1 a
 * wrong command line with err): -1 to go on, else the exit status, usage
 * printed (to stdout and 0 for --help; to stderr after "kipper TOOL: err"
 * and 2 for a wrong line). */
int cli_usage_exit(int rc, const char *tool, const char *err, void (*usage)(FILE *));

#endif
