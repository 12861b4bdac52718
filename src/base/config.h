/* config.h -- reader for key=value files (zoo.cfg, server.properties).
 *
 * '#' and '!' start comments, blank lines are skipped, whitespace around keys
 * and values is trimmed, a later duplicate key wins (as java.util.Properties).
 * Getters mark keys as known; config_warn_unknown() then names every key no
 * one asked for, so a typo is never silently ignored. Errors name the key. */
#ifndef KIPPER_BASE_CONFIG_H
#define KIPPER_BASE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *key;
    char *value;
    int line;
    int known;
} config_entry_t;

typedef struct {
    char path[512];
    config_entry_t *entries;
    size_t count;
    char error[1024];   /* set when a call fails */
} config_t;

/* 0, or -1 with cfg->error and no entries left (config_free is then optional). */
int config_load(config_t *cfg, const char *path);
int config_parse(config_t *cfg, const char *text);     /* same, from memory (tests) */
void config_free(config_t *cfg);

/* The raw value or NULL if absent; marks the key known. */
const char *config_get(config_t *cfg, const char *key);
/* 0 with *out set (def if absent), or -1 with cfg->error naming the key. */
int config_get_long(config_t *cfg, const char *key, long def, long min, long max, long *out);
int config_get_bool(config_t *cfg, const char *key, int def, int *out);
/* Visit keys starting with prefix (e.g. "server."), marking them known. */
void config_each_prefix(config_t *cfg, const char *prefix,
                        void (*fn)(const char *key, const char *value, void *arg), void *arg);
/* Mark keys as known without reading them (accepted but not acted on). */
void config_accept(config_t *cfg, const char *key);
/* One item of a list value ("a, b,c"): [s, s + n) without surrounding
 * blanks, NUL-terminated into out. 0, or -1 if it does not fit. */
int config_copy_trimmed(const char *s, size_t n, char *out, size_t outlen);
/* Log a warning for every key no getter asked for; returns how many. */
int config_warn_unknown(config_t *cfg);

#endif
