/* logging.h -- leveled, timestamped log lines on stderr.
 * The level is the one process-wide setting here: every part of a process
 * logs to the same place with the same verbosity. */
#ifndef KIPPER_BASE_LOGGING_H
#define KIPPER_BASE_LOGGING_H

typedef enum { LOG_LEVEL_DEBUG, LOG_LEVEL_INFO, LOG_LEVEL_WARN, LOG_LEVEL_ERROR } log_level_t;

void log_set_level(log_level_t level);
log_level_t log_get_level(void);
/* "debug", "info", "warn", "error"; -1 if unknown. */
int log_level_from_name(const char *name);
/* A short tag printed on every line, e.g. "keeper.1". */
void log_set_tag(const char *tag);
#if defined(__GNUC__)
#define KIPPER_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define KIPPER_PRINTF(fmt_index, first_arg)
#endif

void log_write(log_level_t level, const char *fmt, ...) KIPPER_PRINTF(2, 3);

#define log_debug(...) log_write(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define log_info(...) log_write(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_warn(...) log_write(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_error(...) log_write(LOG_LEVEL_ERROR, __VA_ARGS__)

#endif
