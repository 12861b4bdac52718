/* config.c -- see config.h. */
#define _GNU_SOURCE
#include "config.h"
#include "fsutil.h"
#include "logging.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CONFIG_MAX_BYTES (4u << 20)

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

static config_entry_t *find(config_t *cfg, const char *key)
{
    for (size_t i = cfg->count; i-- > 0;)   /* the last duplicate wins */
        if (strcmp(cfg->entries[i].key, key) == 0)
            return &cfg->entries[i];
    return NULL;
}

static int add_entry(config_t *cfg, const char *key, const char *value, int line)
{
    config_entry_t *e = realloc(cfg->entries, (cfg->count + 1) * sizeof(*e));
    if (!e)
        return -1;
    cfg->entries = e;
    e = &cfg->entries[cfg->count];
    e->key = strdup(key);
    e->value = strdup(value);
    e->line = line;
    e->known = 0;
    if (!e->key || !e->value) {
        free(e->key);
        free(e->value);
        return -1;
    }
    cfg->count++;
    return 0;
}

int config_parse(config_t *cfg, const char *text)
{
    char *copy = strdup(text);
    if (!copy) {
        snprintf(cfg->error, sizeof(cfg->error), "out of memory");
        return -1;
    }
    int lineno = 0, rc = 0;
    /* Split by hand: strtok_r would merge blank lines and misnumber the rest. */
    for (char *line = copy, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        char *s = trim(line);
        if (*s == 0 || *s == '#' || *s == '!')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(cfg->error, sizeof(cfg->error), "%.400s:%d: expected key=value, got '%.80s'",
                     cfg->path, lineno, s);
            rc = -1;
            break;
        }
        *eq = 0;
        char *key = trim(s), *value = trim(eq + 1);
        if (*key == 0) {
            snprintf(cfg->error, sizeof(cfg->error), "%.400s:%d: empty key", cfg->path, lineno);
            rc = -1;
            break;
        }
        if (add_entry(cfg, key, value, lineno) < 0) {
            snprintf(cfg->error, sizeof(cfg->error), "out of memory");
            rc = -1;
            break;
        }
    }
    free(copy);
    if (rc < 0)
        config_free(cfg);   /* a failed parse leaves nothing for the caller to free */
    return rc;
}

int config_load(config_t *cfg, const char *path)
{
    memset(cfg, 0, sizeof(*cfg));
    snprintf(cfg->path, sizeof(cfg->path), "%s", path);
    char *text;
    size_t n;
    if (fs_read_file(path, CONFIG_MAX_BYTES, &text, &n) < 0) {
        snprintf(cfg->error, sizeof(cfg->error), "cannot read %s: %s", path,
                 errno == EFBIG ? "file larger than 4 MiB" : strerror(errno));
        return -1;
    }
    if (memchr(text, 0, n)) {
        snprintf(cfg->error, sizeof(cfg->error), "%s: contains a NUL byte; not a text file", path);
        free(text);
        return -1;
    }
    int rc = config_parse(cfg, text);
    free(text);
    return rc;
}

void config_free(config_t *cfg)
{
    for (size_t i = 0; i < cfg->count; i++) {
        free(cfg->entries[i].key);
        free(cfg->entries[i].value);
    }
    free(cfg->entries);
    cfg->entries = NULL;
    cfg->count = 0;
}

const char *config_get(config_t *cfg, const char *key)
{
    for (size_t i = 0; i < cfg->count; i++)
        if (strcmp(cfg->entries[i].key, key) == 0)
            cfg->entries[i].known = 1;
    config_entry_t *e = find(cfg, key);
    return e ? e->value : NULL;
}

void config_accept(config_t *cfg, const char *key)
{
    (void)config_get(cfg, key);
}

int config_get_long(config_t *cfg, const char *key, long def, long min, long max, long *out)
{
    const char *v = config_get(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end != 0) {
        snprintf(cfg->error, sizeof(cfg->error), "%.400s: %.200s must be an integer, got '%.80s'",
                 cfg->path, key, v);
        return -1;
    }
    if (x < min || x > max) {
        snprintf(cfg->error, sizeof(cfg->error), "%.400s: %.200s must be between %ld and %ld, got %ld",
                 cfg->path, key, min, max, x);
        return -1;
    }
    *out = x;
    return 0;
}

int config_get_bool(config_t *cfg, const char *key, int def, int *out)
{
    const char *v = config_get(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcmp(v, "1")) {
        *out = 1;
        return 0;
    }
    if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcmp(v, "0")) {
        *out = 0;
        return 0;
    }
    snprintf(cfg->error, sizeof(cfg->error), "%.400s: %.200s must be true or false, got '%.80s'",
             cfg->path, key, v);
    return -1;
}

void config_each_prefix(config_t *cfg, const char *prefix,
                        void (*fn)(const char *key, const char *value, void *arg), void *arg)
{
    size_t plen = strlen(prefix);
    for (size_t i = 0; i < cfg->count; i++) {
        config_entry_t *e = &cfg->entries[i];
        if (strncmp(e->key, prefix, plen) != 0)
            continue;
        e->known = 1;
        if (find(cfg, e->key) == e)   /* report each key once, with its winning value */
            fn(e->key, e->value, arg);
    }
}

int config_warn_unknown(config_t *cfg)
{
    int n = 0;
    for (size_t i = 0; i < cfg->count; i++) {
        if (cfg->entries[i].known)
            continue;
        log_warn("%s:%d: unknown key '%s' ignored", cfg->path, cfg->entries[i].line, cfg->entries[i].key);
        n++;
    }
    return n;
}

int config_copy_trimmed(const char *s, size_t n, char *out, size_t outlen)
{
    while (n > 0 && isspace((unsigned char)s[0]))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= outlen)
        return -1;
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}
