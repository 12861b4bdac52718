/* reset_plan.c -- the parts of `kipper consumer-groups --reset-offsets`
 * that read and write text (see consumer_groups.h): --by-duration's
 * ISO-8601 duration, --from-file's CSV plan and --export's CSV, in the
 * format kafka-consumer-groups.sh reads and writes for one group
 * (topic,partition,offset per line). Pure: no I/O but the FILE given. */
#include "consumer_groups.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- --by-duration ---- */

/* A run of digits at *s, with the unit letter after it, into *v. */
static int component(const char **s, int64_t *v, char *unit)
{
    const char *p = *s;
    int64_t n = 0;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        if (n > (INT64_MAX - 9) / 10)
            return -1;
        n = n * 10 + (*p - '0');
    }
    *unit = (char)toupper((unsigned char)*p);
    *v = n;
    *s = p + 1;
    return 0;
}

static int add_scaled(int64_t *total, int64_t n, int64_t unit_ms)
{
    if (n > (INT64_MAX - *total) / unit_ms)
        return -1;
    *total += n * unit_ms;
    return 0;
}

/* Seconds with an optional fraction ("5", "5.25") and the S. */
static int seconds_part(const char **s, int64_t *total)
{
    const char *p = *s;
    int64_t whole = 0, frac = 0, scale = 1000;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        if (whole > (INT64_MAX - 9) / 10)
            return -1;
        whole = whole * 10 + (*p - '0');
    }
    if (*p == '.' || *p == ',') {
        p++;
        for (int k = 0; isdigit((unsigned char)*p); k++, p++) {
            if (k == 9)
                return -1;   /* Java's Duration takes nanoseconds: nine digits */
            scale /= 10;
            frac += (*p - '0') * scale;   /* digits past milliseconds count 0 */
        }
    }
    if (toupper((unsigned char)*p) != 'S')
        return -1;
    *s = p + 1;
    return add_scaled(total, whole, 1000) < 0 ? -1 : add_scaled(total, frac, 1);
}

int cg_parse_duration(const char *s, int64_t *ms)
{
    int64_t total = 0, n;
    char unit;
    int parts = 0;
    if (toupper((unsigned char)*s) != 'P')
        return -1;
    s++;
    if (isdigit((unsigned char)*s)) {
        if (component(&s, &n, &unit) < 0 || unit != 'D' || add_scaled(&total, n, 86400000) < 0)
            return -1;
        parts++;
    }
    if (toupper((unsigned char)*s) == 'T') {
        static const struct {
            char unit;
            int64_t ms;
        } order[] = {{'H', 3600000}, {'M', 60000}};
        const char *start = ++s;
        for (size_t k = 0; k < 2; k++) {
            const char *at = s;
            if (component(&at, &n, &unit) == 0 && unit == order[k].unit) {
                if (add_scaled(&total, n, order[k].ms) < 0)
                    return -1;
                s = at;
            }
        }
        if (*s && seconds_part(&s, &total) < 0)
            return -1;
        if (s == start)
            return -1;   /* "PT" with nothing after it */
        parts++;
    }
    if (*s || parts == 0)
        return -1;
    *ms = total;
    return 0;
}

/* ---- --from-file ---- */

/* One field of a CSV line as a non-negative number no larger than max. */
static int csv_number(const char *f, size_t n, int64_t max, int64_t *v)
{
    char buf[24];
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, f, n);
    buf[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)buf[i]))
            return -1;
    errno = 0;
    long long x = strtoll(buf, NULL, 10);
    if (errno || x > max)
        return -1;
    *v = x;
    return 0;
}

static int plan_line(const char *line, size_t len, ga_partitions_t *ps, char *why, size_t whylen)
{
    const char *c1 = memchr(line, ',', len);
    const char *c2 = c1 ? memchr(c1 + 1, ',', len - (size_t)(c1 + 1 - line)) : NULL;
    if (!c2 || memchr(c2 + 1, ',', len - (size_t)(c2 + 1 - line))) {
        snprintf(why, whylen, "expected topic,partition,offset");
        return -1;
    }
    size_t tlen = (size_t)(c1 - line);
    int64_t part, off;
    char topic[256];
    if (tlen == 0 || tlen >= sizeof(topic)) {
        snprintf(why, whylen, "the topic must be 1 to 255 characters");
        return -1;
    }
    if (csv_number(c1 + 1, (size_t)(c2 - c1 - 1), INT32_MAX, &part) < 0) {
        snprintf(why, whylen, "the partition must be a number from 0 to 2147483647");
        return -1;
    }
    if (csv_number(c2 + 1, len - (size_t)(c2 + 1 - line), INT64_MAX, &off) < 0) {
        snprintf(why, whylen, "the offset must be a number from 0");
        return -1;
    }
    memcpy(topic, line, tlen);
    topic[tlen] = 0;
    if (ga_partitions_find(ps, topic, (int32_t)part)) {
        snprintf(why, whylen, "%s-%d is listed twice", topic, (int)part);
        return -1;
    }
    ga_partition_t *p = ga_partitions_get(ps, topic, (int32_t)part);
    if (!p) {
        snprintf(why, whylen, "too many partitions (or out of memory)");
        return -1;
    }
    p->planned = off;
    return 0;
}

int cg_parse_reset_plan(const char *text, size_t len, ga_partitions_t *ps, char *err, size_t errlen)
{
    size_t at = 0;
    for (int lineno = 1; at < len; lineno++) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t n = end - at;
        if (n > 0 && text[at + n - 1] == '\r')
            n--;
        char why[300];
        if (memchr(text + at, 0, n)) {
            snprintf(err, errlen, "line %d: a NUL byte", lineno);
            return -1;
        }
        if (n > 0 && plan_line(text + at, n, ps, why, sizeof(why)) < 0) {
            snprintf(err, errlen, "line %d: %s, got '%.*s'", lineno, why, (int)(n > 200 ? 200 : n), text + at);
            return -1;
        }
        at = end + 1;
    }
    if (ps->n == 0) {
        snprintf(err, errlen, "no partition in the file (lines of topic,partition,offset)");
        return -1;
    }
    return 0;
}

/* ---- --export ---- */

void cg_export_plan(FILE *f, const ga_partitions_t *ps, const int64_t *offsets)
{
    for (int i = 0; i < ps->n; i++)
        fprintf(f, "%s,%d,%lld\n", ps->v[i].topic, (int)ps->v[i].partition, (long long)offsets[i]);
    fputc('\n', f);   /* kafka-consumer-groups.sh ends the CSV with println */
}
