/* cli_args.c -- see cli_args.h. */
#include "cli_args.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_option_value(int argc, char **argv, int *i, const char *name, const char **v, char *err, size_t errlen)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0 || (argv[*i][n] && argv[*i][n] != '='))
        return 0;
    if (argv[*i][n] == '=') {
        *v = argv[*i] + n + 1;
        return 1;
    }
    if (*i + 1 >= argc) {
        snprintf(err, errlen, "%s needs a value", name);
        return -1;
    }
    *v = argv[++*i];
    return 1;
}

int cli_parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

int cli_usage_exit(int rc, const char *tool, const char *err, void (*usage)(FILE *))
{
    if (rc == 0)
        return -1;
    if (rc < 0)
        fprintf(stderr, "kipper %s: %s\n\n", tool, err);
    usage(rc < 0 ? stderr : stdout);
    return rc < 0 ? 2 : 0;
}
