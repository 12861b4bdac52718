/* console_format.c -- a record printed as kafka-console-consumer.sh's
 * DefaultMessageFormatter prints it (console.h), its fields in this order,
 * each when its print.* property is true:
 *
 *   CreateTime:<ms> | LogAppendTime:<ms>     print.timestamp
 *   Partition:<n>                            print.partition
 *   Offset:<n>                               print.offset
 *   k1:v1<headers.separator>k2:v2 | NO_HEADERS   print.headers
 *   <key>                                    print.key
 *   <value>                                  print.value (true by default)
 *
 * each followed by key.separator when another field follows, the last by
 * line.separator; a null key, value or header value is printed as
 * null.literal. Kafka prints NO_TIMESTAMP for a record whose timestamp type
 * is NO_TIMESTAMP_TYPE, which only magic 0 messages have: every record
 * fetched from kipper is in a v2 batch (older ones are converted when
 * produced), whose type is CreateTime or LogAppendTime. */
#include "console.h"

#include <string.h>

enum { F_TIMESTAMP, F_PARTITION, F_OFFSET, F_HEADERS, F_KEY, F_VALUE, F_COUNT };

static void put_bytes(FILE *f, const cc_opts_t *o, const uint8_t *p, int32_t len)
{
    if (!p)
        fputs(o->null_literal, f);
    else
        fwrite(p, 1, (size_t)len, f);
}

static void put_headers(FILE *f, const cc_opts_t *o, const cr_record_t *r)
{
    size_t pos = 0;
    cr_header_t h;
    if (r->header_count == 0)
        fputs("NO_HEADERS", f);
    for (int i = 0; cr_header_next(r, &pos, &h); i++) {
        fputs(i ? o->headers_separator : "", f);
        fwrite(h.key, 1, (size_t)h.key_len, f);
        fputc(':', f);
        put_bytes(f, o, h.value, h.value_len);
    }
}

static void put_field(FILE *f, const cc_opts_t *o, int32_t partition, const cr_record_t *r, int field)
{
    switch (field) {
    case F_TIMESTAMP:
        fprintf(f, "%s:%lld", r->log_append_time ? "LogAppendTime" : "CreateTime", (long long)r->timestamp);
        break;
    case F_PARTITION: fprintf(f, "Partition:%d", (int)partition); break;
    case F_OFFSET: fprintf(f, "Offset:%lld", (long long)r->offset); break;
    case F_HEADERS: put_headers(f, o, r); break;
    case F_KEY: put_bytes(f, o, r->key, r->key_len); break;
    default: put_bytes(f, o, r->value, r->value_len); break;
    }
}

void cc_print_record(FILE *f, const cc_opts_t *o, int32_t partition, const cr_record_t *r)
{
    const int on[F_COUNT] = {o->print_timestamp, o->print_partition, o->print_offset,
                             o->print_headers,   o->print_key,       o->print_value};
    for (int i = 0; i < F_COUNT; i++) {
        if (!on[i])
            continue;
        put_field(f, o, partition, r, i);
        int more = 0;
        for (int k = i + 1; k < F_COUNT; k++)
            more |= on[k];
        fputs(more ? o->key_separator : o->line_separator, f);
    }
}
