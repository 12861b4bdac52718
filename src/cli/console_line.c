/* console_line.c -- a line of `kipper console-producer`'s input as the
 * record it is, as Kafka 3.x's LineMessageReader reads it (console.h):
 *
 *   [headers <headers.delimiter>] [key <key.separator>] value
 *
 * the headers present with parse.headers=true, the key with parse.key=true,
 * each found at the first occurrence of its delimiter after what came
 * before. The headers are split at headers.separator into pairs, and each
 * pair at its first headers.key.separator into a header's key and value. A
 * key, a value, a header value or the whole header list equal to null.marker
 * is null (no headers for the list); a header key cannot be. A missing
 * delimiter is an error worded as Kafka's, or with ignore.error=true that
 * part is absent (a pair without its separator: a header whose value is
 * null). One difference: Kafka splits the headers at headers.separator taken
 * as a Java regular expression; here it is taken literally, which is the
 * same for every separator without regex metacharacters. Empty pairs at the
 * end of the list are dropped, as Java's split drops them. */
#define _GNU_SOURCE
#include "console.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *p;
    size_t len;
} span_t;

static int is_marker(const cp_opts_t *o, span_t s)
{
    return o->has_null_marker && s.len == strlen(o->null_marker) && memcmp(s.p, o->null_marker, s.len) == 0;
}

/* The first occurrence of sep in s, or NULL. */
static const char *find(span_t s, const char *sep)
{
    return memmem(s.p, s.len, sep, strlen(sep));
}

/* One header pair into headers. 0, or -1 with err. */
static int add_pair(const cp_opts_t *o, span_t pair, int64_t line_number, buf_t *headers, char *err, size_t errlen)
{
    const char *sep = find(pair, o->headers_key_separator);
    if (!sep && !o->ignore_error) {
        snprintf(err, errlen, "No header key separator found in pair '%.*s' on line number %lld", (int)pair.len,
                 pair.p, (long long)line_number);
        return -1;
    }
    span_t key = {pair.p, sep ? (size_t)(sep - pair.p) : pair.len};
    if (is_marker(o, key)) {
        snprintf(err, errlen, "Header keys should not be equal to the null marker '%s' as they can't be null",
                 o->null_marker);
        return -1;
    }
    size_t skip = sep ? key.len + strlen(o->headers_key_separator) : pair.len;
    span_t value = {pair.p + skip, pair.len - skip};
    int null_value = !sep || is_marker(o, value);
    cr_header_append(headers, key.p, key.len, null_value ? NULL : value.p, value.len);
    return 0;
}

/* The header list s split into pairs appended to headers; their count in
 * *count. 0, or -1 with err. */
static int split_headers(const cp_opts_t *o, span_t s, int64_t line_number, buf_t *headers, int32_t *count,
                         char *err, size_t errlen)
{
    size_t seplen = strlen(o->headers_separator);
    span_t pieces_end = s;
    /* Java's split: when the separator occurs, trailing empty pieces go. */
    if (seplen && find(s, o->headers_separator))
        while (pieces_end.len >= seplen &&
               memcmp(pieces_end.p + pieces_end.len - seplen, o->headers_separator, seplen) == 0)
            pieces_end.len -= seplen;
    if (pieces_end.len == 0 && s.len > 0)
        return 0;
    span_t rest = pieces_end;
    for (;;) {
        const char *sep = seplen ? find(rest, o->headers_separator) : NULL;
        span_t pair = {rest.p, sep ? (size_t)(sep - rest.p) : rest.len};
        if (add_pair(o, pair, line_number, headers, err, errlen) < 0)
            return -1;
        (*count)++;
        if (!sep)
            return 0;
        rest = (span_t){sep + seplen, rest.len - pair.len - seplen};
    }
}

/* The part of s before delimiter: 1 with *part and s moved past the
 * delimiter, 0 when absent with ignore.error, -1 with Kafka's error. */
static int take_part(const cp_opts_t *o, span_t *s, const char *delimiter, const char *what, const char *line,
                     size_t len, int64_t line_number, span_t *part, char *err, size_t errlen)
{
    const char *at = find(*s, delimiter);
    if (!at) {
        if (o->ignore_error)
            return 0;
        snprintf(err, errlen, "No %s found on line number %lld: '%.*s'", what, (long long)line_number, (int)len,
                 line);
        return -1;
    }
    *part = (span_t){s->p, (size_t)(at - s->p)};
    size_t skip = part->len + strlen(delimiter);
    *s = (span_t){s->p + skip, s->len - skip};
    return 1;
}

int cp_line_record(const cp_opts_t *o, const char *line, size_t len, int64_t line_number, cr_input_t *out,
                   buf_t *headers, char *err, size_t errlen)
{
    span_t rest = {line, len}, hdrs, key;
    int has_headers = 0, has_key = 0;
    *out = (cr_input_t){0};
    buf_clear(headers);
    if (o->parse_headers && (has_headers = take_part(o, &rest, o->headers_delimiter, "headers delimiter", line, len,
                                                     line_number, &hdrs, err, errlen)) < 0)
        return -1;
    if (o->parse_key && (has_key = take_part(o, &rest, o->key_separator, "key separator", line, len, line_number,
                                             &key, err, errlen)) < 0)
        return -1;
    if (has_headers && !is_marker(o, hdrs) &&
        split_headers(o, hdrs, line_number, headers, &out->header_count, err, errlen) < 0)
        return -1;
    if (has_key && !is_marker(o, key)) {
        out->key = key.p;
        out->key_len = key.len;
    }
    if (!is_marker(o, rest)) {
        out->value = rest.p;
        out->value_len = rest.len;
    }
    out->headers = headers->data;
    out->headers_len = headers->len;
    return 0;
}
