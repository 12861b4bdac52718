/* logging.c -- see logging.h. One write(2) per line so lines from threads never interleave. */
#include "logging.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static log_level_t current_level = LOG_LEVEL_INFO;
static char current_tag[32] = "kipper";

void log_set_level(log_level_t level)
{
    current_level = level;
}

log_level_t log_get_level(void)
{
    return current_level;
}

int log_level_from_name(const char *name)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

void log_set_tag(const char *tag)
{
    snprintf(current_tag, sizeof(current_tag), "%s", tag);
}

void log_write(log_level_t level, const char *fmt, ...)
{
    static const char letters[] = "DIWE";
    if (level < current_level)
        return;
    char line[2048];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof(line), "%04d-%02d-%02d %02d:%02d:%02d.%03d %c [%s] ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (int)(tv.tv_usec / 1000), letters[level], current_tag);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
